"""Each suite's answer to "is this my format?", loaded without the suite (`memconform validate` asks every
suite's, then loads only the suite named: run/validate.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .suite import entry_point_modules


@dataclass(frozen=True)
class Detector:
    """A suite's answer to "is this my format?", loaded without the suite: the module `detect` beside the
    module its entry point names (`pkg.suite:SUITE` -> `pkg.detect`), holding `detect` (what the SuiteSpec's
    own `detect` answers), `STREAMED` (whether the SuiteSpec has a `stream`) and, where the format has a
    window plan, `WINDOW_SECTIONS` (the plan's sections). `memconform validate` asks every suite's, then
    loads only the suite named (tests/test_light_detect.py holds them equal to the suite's own)."""

    name: str
    detect: Callable[[Any], bool]
    streamed: bool
    sections: tuple[str, ...] = ()


def detectors() -> list[Detector] | None:
    """Every installed suite's Detector in suite_names() order, or None when some suite has none (a suite
    whose SuiteSpec module is top-level, or has no `detect` module beside it): then the suites are loaded."""
    found = []
    modules = entry_point_modules()
    for name in sorted(modules):
        package = modules[name].rpartition(".")[0]
        if not package:
            return None
        try:
            module = importlib.import_module(f"{package}.detect")
        except ModuleNotFoundError as exc:
            if exc.name in (f"{package}.detect", package):
                return None
            raise
        detect, streamed = getattr(module, "detect", None), getattr(module, "STREAMED", None)
        sections = getattr(module, "WINDOW_SECTIONS", ())
        if not callable(detect) or not isinstance(streamed, bool) or not isinstance(sections, tuple):
            return None
        found.append(Detector(name, detect, streamed, sections))
    return found
