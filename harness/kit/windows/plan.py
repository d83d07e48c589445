"""A format's plan for windowed validation, and running it on one file.

A plan judges each window as it comes and keeps only what the whole-file checks need of the records
(findings, ids, counts); `finish` turns that into the values the format's functions hand the checks for
a WindowedDocument. Its findings must equal the whole-file path's (tests/test_windowed_validate.py).
Anything a plan cannot judge this way raises NotWindowable: the file is then read whole."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.check_context import NoTarget
from ...core.detectors import detectors
from ...core.profile import Profile
from ...core.registry import Check, select_document_checks
from ...core.results import Failure, HarnessError, Result
from ...core.runner import Context, run_checks
from ...core.suite import SuiteSpec, all_suites, get_suite
from .document import WindowedDocument
from .reader import WINDOW_BYTES, Layout, NotWindowable, read_windowed, reread

Rereader = Callable[[str], Iterator[tuple[int, list[Any]]]]


@dataclass
class Found:
    """What one check found over every window of a file: its failures in file order, and what it raised there
    (raised again when the check runs, where the runner judges it: errored, never a pass)."""

    failures: list[Failure] = field(default_factory=list)
    raised: BaseException | None = None


def replayed(found: Found) -> Callable[[Any, Any], Iterator[Failure]]:
    """The check's function for the run: yields what it found in the windows, then raises what it raised there."""
    def judged_per_window(doc: Any, ctx: Any) -> Iterator[Failure]:
        yield from found.failures
        if found.raised is not None:
            raise found.raised

    return judged_per_window


@dataclass
class PlanContext:
    """What a plan may use: the run's context (the one the checks will run in) and the checks chosen."""

    ctx: Context
    checks: list[Check]


class WindowPlan:
    """One format's windowed judgement; one instance per file."""

    sections: tuple[str, ...] = ()

    def __init__(self, context: PlanContext) -> None:
        self.context = context

    def begin(self, envelope: dict[str, Any]) -> None:
        """The envelope members read before the first section (a plan that needs them before the
        records refuses, at `finish`, a file with members after a section: Layout.late)."""

    def window(self, section: str, first: int, items: list[Any]) -> None:
        raise NotImplementedError

    def finish(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader,
               late: list[Any]) -> dict[str, Any]:
        """The computed values (WindowedDocument.computed); `again(section)` reads a section's windows again."""
        raise NotImplementedError

    def checks(self, checks: list[Check]) -> list[Check]:
        """The checks to run on the WindowedDocument (a plan may hand some their findings, judged per window)."""
        return checks


def plan_of(suite: SuiteSpec) -> type[WindowPlan] | None:
    """The format's WINDOW_PLAN: `windows.py` in the format package whose module holds its `detect` (the
    package itself, or the topic module a package face re-exports it from, e.g. amps format/schema.py; the
    format package does not import it, so the plan may import the format freely); None: read whole."""
    module = getattr(suite.detect, "__module__", None)
    if not module:
        return None
    if not hasattr(sys.modules.get(module), "__path__"):  # a topic module: its package holds windows.py
        module = module.rpartition(".")[0]
    try:
        found = importlib.util.find_spec(f"{module}.windows")
    except ModuleNotFoundError:  # the detect's module is no package: it has no windows beside it
        return None
    if found is None:
        return None
    plan = getattr(importlib.import_module(f"{module}.windows"), "WINDOW_PLAN", None)
    return plan if isinstance(plan, type) and issubclass(plan, WindowPlan) else None


def read_with_plan(path: Path, size: int, suites: list[SuiteSpec] | None, window: int = WINDOW_BYTES,
                   profile: Profile | None = None, check_ids: list[str] | None = None,
                   opener: Callable[[Path], int] | None = None,
                   ) -> tuple[SuiteSpec, WindowedDocument, WindowPlan] | None:
    """(the suite whose plan read it, the document for its checks, the plan), or None: read the file
    whole. The suite is the one owning the first section met (a section name two formats share is no
    guide); the caller still names the format from the envelope as the whole-file path would. `suites`
    None: every installed suite, the sections each owns read from its Detector, and only the owner's
    suite and plan loaded (core/detectors.py)."""
    owners: dict[str, list[SuiteSpec | str]] = {}
    light = detectors() if suites is None else None
    for detector in light or []:
        for section in detector.sections:
            owners.setdefault(section, []).append(detector.name)
    for suite in (all_suites() if suites is None else suites) if light is None else []:
        plan_class = plan_of(suite)
        if plan_class is not None:
            for section in plan_class.sections:
                owners.setdefault(section, []).append(suite)
    if not owners:
        return None
    chosen: list[tuple[SuiteSpec, WindowPlan]] = []

    def is_section(key: str) -> bool:
        if chosen:
            return key in chosen[0][1].sections
        found = owners.get(key, [])
        if len(found) != 1:
            return False
        suite = get_suite(found[0]) if isinstance(found[0], str) else found[0]
        plan_class = plan_of(suite)
        if plan_class is None or key not in plan_class.sections:  # a Detector's sections that are not its plan's
            raise NotWindowable(f"{suite.name} declares the section {key!r} its window plan does not read")
        checks = select_document_checks(suite.name, check_ids)
        ctx = Context(suite=suite, target=NoTarget(), profile=profile or Profile(), document=None)
        chosen.append((suite, plan_class(PlanContext(ctx, checks))))
        return True

    def on_window(section: str, first: int, items: list[Any], fast: bool) -> None:
        chosen[0][1].window(section, first, items)

    def on_envelope(envelope: dict[str, Any]) -> None:
        chosen[0][1].begin(envelope)

    fd = opener(path) if opener is not None else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        layout: Layout = read_windowed(fd, size, is_section, on_window, window, on_envelope)
        suite, plan = chosen[0]
        values = plan.finish(layout.envelope, layout.counts,
                             lambda section: reread(fd, size, layout.spans, section), layout.late)
    except NotWindowable:
        return None
    finally:
        os.close(fd)
    return suite, WindowedDocument(layout.envelope, layout.counts, values), plan


def validate_windowed(path: Path, size: int, wanted: str | None, suites: list[SuiteSpec] | None, profile: Profile,
                      check_ids: list[str] | None, window: int, opener: Callable[[Path], int],
                      name_format: Callable[..., Any]) -> tuple[SuiteSpec, str, list[Result]] | None:
    """`validate` of one file in windows: (suite, how it was named, results), or None to read it whole.
    `opener` and `name_format` are validate's own (a regular file only; the format named as a whole
    document would be); `suites` None: every installed suite, asked by its Detector (read_with_plan)."""
    read = read_with_plan(path, size, suites, window, profile, check_ids, opener)
    if read is None:
        return None
    suite, document, plan = read
    plain = {key: [] if key in document.counts else value for key, value in document.items()}
    named = name_format(path, b"", plain, wanted, suites)  # the envelope names it, as the whole document would
    if named.suite.name != suite.name:
        return None
    checks = plan.context.checks
    if not checks:
        raise HarnessError(f"suite {suite.name!r} has no document checks")
    ctx = plan.context.ctx
    ctx.document = document
    return suite, named.how, list(run_checks(plan.checks(checks), ctx))
