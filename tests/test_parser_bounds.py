"""Every reader of target data on the adversarial inputs that once made a path super-linear or large:
each answers the same way at every size (parsed, or refused with the reader's own error, never a crash
of another kind) and holds at most a small multiple of the input in memory, a multiple that does not
grow with the size. Their time is bench/bench_parser_linear.py's (timing never decides a test)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_parser_linear import ADVERSARIAL, PARSERS, SIZES  # noqa: E402

# a parse may hold its input, the decoded text and the objects built from it: a few times the bytes,
# plus a fixed allowance for the interpreter's own caches at the smallest size
MULTIPLE = 40
ALLOWANCE = 2 * 1024 * 1024


def _peak(parser: str, raw: bytes) -> tuple[int, str]:
    tracemalloc.start()
    try:
        answer = PARSERS[parser](raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, type(answer).__name__


@pytest.mark.parametrize("parser", list(PARSERS))
@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_answer_steady_and_memory_bounded(parser: str, case: str) -> None:
    texts = [ADVERSARIAL[case](size) for size in SIZES]
    PARSERS[parser](texts[0])  # warm: imports, caches
    seen = [_peak(parser, text) for text in texts]
    kinds = {kind for _, kind in seen}
    assert len(kinds) == 1, f"{parser} on {case}: answers change with the size: {seen}"
    for (peak, _), text in zip(seen, texts, strict=True):
        assert peak <= MULTIPLE * len(text) + ALLOWANCE, (
            f"{parser} on {case}: {peak} bytes held for {len(text)} bytes of input")
