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
    own `detect` answers) and `STREAMED` (whether the SuiteSpec has a `stream`). `memconform validate` asks
    every suite's, then loads only the suite named (tests/test_light_detect.py holds the two answers equal)."""

    name: str
    detect: Callable[[Any], bool]
    streamed: bool


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
        if not callable(detect) or not isinstance(streamed, bool):
            return None
        found.append(Detector(name, detect, streamed))
    return found
