"""What the portability tests that compare two paths of one translation share (tests/test_portability_written.py,
tests/test_portability_sourced.py, tests/test_portability_scale.py): a fixed clock, and the claim that a path writing its output to a file is the whole-memory path's
translation, byte for byte, ledger and summary included."""

from __future__ import annotations

import importlib
from typing import Any

from memconform.portability.formats import formats
from memconform.portability.translate import dump

FIXED_NOW = "2026-01-02T03:04:05.678Z"


def fix_the_clock(monkeypatch: Any) -> None:
    """Every translator's clock at FIXED_NOW: a source without an export time is dated by the clock, so two
    translations of it agree only on a fixed one."""
    for name in formats():
        monkeypatch.setattr(importlib.import_module(f"memconform.suites.{name}.portability.translator"), "now_canonical",
                            lambda: FIXED_NOW)


def assert_same(whole: Any, written: Any, text: str | None, what: str) -> None:
    """`written` (its file's text, or None when it left none) translated as `whole` did: the same refusal, the same
    ledger and summary, and the same output bytes; a refused translation left no file."""
    assert written.refused == whole.refused, what
    assert written.ledger.to_json() == whole.ledger.to_json(), f"{what}: ledger"
    assert written.ledger.summary() == whole.ledger.summary(), f"{what}: summary"
    if whole.output is None:
        assert text is None, f"{what}: a refused translation left a file"
    else:
        assert text == dump(whole.target, whole.output), f"{what}: output bytes"
