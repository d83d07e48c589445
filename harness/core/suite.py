"""What a suite tells the runner: its levels, its HTTP routes, where its documents come from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .model import HarnessError


@dataclass(frozen=True)
class Level:
    key: str
    title: str
    requires: tuple[str, ...] = ()


@dataclass
class SuiteSpec:
    name: str
    spec_title: str
    version: str
    levels: list[Level]
    # where "document" checks get their document during a run against a target
    document_source: Callable[[Any], Any] | None = None
    # validate FILE: does this text look like our format? and, for a format that is not plain JSON,
    # how to parse it (None: the file is parsed once as JSON)
    detect: Callable[[Any], bool] | None = None
    parse: Callable[[bytes], Any] | None = None
    # validate FILE for a line-oriented format: open the file as a document read in a stream
    # (instead of loading and parsing it whole), so memory stays bounded
    stream: Callable[[Any], Any] | None = None
    routes: dict[str, Any] = field(default_factory=dict)
    # before any check: raise HarnessError when the run cannot mean anything (a refused key, say)
    preflight: Callable[[Any], None] | None = None
    # findings about the whole run that no one check owns (a latency pattern, say): report notes
    run_notes: Callable[[Any], list[str]] | None = None
    # which levels a target claims, from the target itself (None: all levels apply)
    claimed_levels: Callable[[Any], set[str] | None] | None = None


SUITES: dict[str, SuiteSpec] = {}


def register_suite(spec: SuiteSpec) -> SuiteSpec:
    SUITES[spec.name] = spec
    return spec


def get_suite(name: str) -> SuiteSpec:
    from .registry import load_suite

    load_suite(name)
    if name not in SUITES:
        raise HarnessError(f"suite {name!r} registered no SuiteSpec")
    return SUITES[name]
