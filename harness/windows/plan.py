"""A format's plan for windowed validation, and running it on one file.

A plan judges each window as it comes and keeps only what the whole-file checks need of the records
(findings, ids, counts); `finish` turns that into the values the format's functions hand the checks for
a WindowedDocument. Its findings must equal the whole-file path's (tests/test_windowed_validate.py).
Anything a plan cannot judge this way raises NotWindowable: the file is then read whole."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..core.model import Result
from ..core.profile import Profile
from ..core.suite import SuiteSpec
from .document import WindowedDocument
from .reader import WINDOW_BYTES, Layout, NotWindowable, read_windowed, reread

Rereader = Callable[[str], Iterator[tuple[int, list[Any]]]]


class WindowPlan:
    """One format's windowed judgement; one instance per file."""

    sections: tuple[str, ...] = ()

    def window(self, section: str, first: int, items: list[Any]) -> None:
        raise NotImplementedError

    def finish(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader) -> dict[str, Any]:
        """The computed values (WindowedDocument.computed); `again(section)` reads a section's windows again."""
        raise NotImplementedError


def plan_of(suite: SuiteSpec) -> type[WindowPlan] | None:
    """The format's WINDOW_PLAN, found in the module of its `detect` (a format without one is read whole)."""
    module = getattr(suite.detect, "__module__", None)
    if not module:
        return None
    plan = getattr(importlib.import_module(module), "WINDOW_PLAN", None)
    return plan if isinstance(plan, type) and issubclass(plan, WindowPlan) else None


def read_with_plan(path: Path, size: int, suites: list[SuiteSpec],
                   window: int = WINDOW_BYTES) -> tuple[SuiteSpec, WindowedDocument] | None:
    """(the suite whose plan read it, the document for its checks), or None: read the file whole.
    The suite is the one owning the first section met (a section name two formats share is no
    guide); the caller still names the format from the envelope as the whole-file path would."""
    owners: dict[str, list[tuple[SuiteSpec, type[WindowPlan]]]] = {}
    for suite in suites:
        plan_class = plan_of(suite)
        if plan_class is not None:
            for section in plan_class.sections:
                owners.setdefault(section, []).append((suite, plan_class))
    if not owners:
        return None
    chosen: list[tuple[SuiteSpec, WindowPlan]] = []

    def is_section(key: str) -> bool:
        if chosen:
            return key in chosen[0][1].sections
        found = owners.get(key, [])
        if len(found) != 1:
            return False
        chosen.append((found[0][0], found[0][1]()))
        return True

    def on_window(section: str, first: int, items: list[Any]) -> None:
        chosen[0][1].window(section, first, items)

    from ..validate import open_regular

    fd = open_regular(path)
    try:
        layout: Layout = read_windowed(fd, size, is_section, on_window, window)
        suite, plan = chosen[0]
        values = plan.finish(layout.envelope, layout.counts,
                             lambda section: reread(fd, size, layout.spans, section))
    except NotWindowable:
        return None
    finally:
        os.close(fd)
    return suite, WindowedDocument(layout.envelope, layout.counts, values)


def validate_windowed(path: Path, size: int, wanted: str | None, suites: list[SuiteSpec], profile: Profile,
                      check_ids: list[str] | None, window: int = WINDOW_BYTES,
                      ) -> tuple[SuiteSpec, str, list[Result]] | None:
    """`validate` of one file in windows: (suite, how it was named, results), or None to read it whole."""
    from ..document_run import validate_document
    from ..validate import name_format

    read = read_with_plan(path, size, suites, window)
    if read is None:
        return None
    suite, document = read
    plain = {key: [] if key in document.counts else value for key, value in document.items()}
    named = name_format(path, b"", plain, wanted, suites)  # the envelope names it, as the whole document would
    if named.suite.name != suite.name:
        return None
    return suite, named.how, validate_document(document, suite, profile, check_ids)
