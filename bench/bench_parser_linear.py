"""Every reader of target data stays linear on adversarial input: growing the input 16-fold may multiply
the time by at most GROWTH (linear: 16x, plus what caches and page faults add on a larger buffer; a
quadratic path: 256x). Measured as a ratio of thread CPU times, each the fastest of several repeats.

    python bench/bench_parser_linear.py [--growth 64] [--repeats 7]

Prints one line per parser path and adversarial input, and exits 1 when any grows super-linearly. A
benchmark, not a test: timing never decides a test (the test tier keeps the same inputs, judged by
their answers and their memory, in tests/test_parser_bounds.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from memconform.core.json_reader import (
    FILE,
    REPLY,
    STRICT,
    JsonRejected,
    StrictJsonError,
    read_json,
    strict_loads,
)
from memconform.run.validate import NotWellFormed
from memconform.run.validate import parse_json as parse_file
from memconform.suites.emp import format as emp
from memconform.suites.memorizz.format.reader import parse_bytes
from memconform.targets.base import parse_json as parse_reply

SIZES = (10_000, 40_000, 160_000)  # below the cache cliff a busy shared machine shows from ~200 KB on
GROWTH = 64.0
REPEATS = 7


def _fill(unit: bytes, size: int, head: bytes = b"", tail: bytes = b"") -> bytes:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


# each: a text of about `size` bytes built to hit one path's worst case
ADVERSARIAL: dict[str, Callable[[int], bytes]] = {
    "unterminated string of escaped quotes": lambda n: _fill(b'\\"', n, b'{"a": "'),
    "escaped quotes, then many brackets": lambda n: _fill(b'\\"[', n, b'["', b"]" * 250),
    "deep nesting": lambda n: _fill(b"[", n // 2) + _fill(b"]", n // 2),
    "brackets inside strings": lambda n: _fill(b'"[[[[{{{{",', n, b"[", b"1]"),
    "many empty arrays": lambda n: _fill(b"[],", n, b"[", b"[]]"),
    "digit runs": lambda n: _fill(b"12345678901234567890,", n, b"[", b"1]"),
    "a 4,301-digit integer per element": lambda n: _fill(b"9" * 4301 + b",", n, b"[", b"1]"),
    "NaN at the end": lambda n: _fill(b'"abcdefgh",', n, b"[", b"NaN]"),
    "lone surrogate escapes": lambda n: _fill(b'"\\ud800",', n, b"[", b"1]"),
    "a quote on every line": lambda n: _fill(b'{"a": "\\"\n', n),
}


def _swallow(fn: Callable[[bytes], object]) -> Callable[[bytes], object]:
    def run(raw: bytes) -> object:
        try:
            return fn(raw)
        except (JsonRejected, NotWellFormed, StrictJsonError, ValueError):
            return None
    return run


PARSERS: dict[str, Callable[[bytes], object]] = {
    "reader (reply policy)": _swallow(lambda raw: read_json(raw, REPLY)),
    "reader (file policy)": _swallow(lambda raw: read_json(raw, FILE)),
    "reader (strict policy)": _swallow(lambda raw: read_json(raw, STRICT)),
    "target reply parse_json": parse_reply,
    "validate parse_json": _swallow(parse_file),
    "strict_loads": _swallow(strict_loads),
    "memorizz parse_bytes": _swallow(parse_bytes),
    "emp lines": lambda raw: list(emp.iter_text(raw)),
}


def _seconds(fn: Callable[[bytes], object], raw: bytes, repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()  # CPU time of this thread: another process's load does not count
        fn(raw)
        best = min(best, time.thread_time() - started)
    return max(best, 1e-5)  # below timer noise both sizes are simply fast


def growth(parser: str, case: str, repeats: int = REPEATS) -> tuple[list[float], float]:
    """The CPU seconds of one parser path on one adversarial input at each of SIZES, and the last / first ratio."""
    fn = PARSERS[parser]
    texts = [ADVERSARIAL[case](size) for size in SIZES]
    fn(texts[0])  # warm: imports, caches
    times = [_seconds(fn, text, repeats) for text in texts]
    return times, times[-1] / times[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--growth", type=float, default=GROWTH, help="the largest ratio taken as linear")
    ap.add_argument("--repeats", type=int, default=REPEATS)
    args = ap.parse_args(argv)
    worst, bad = 0.0, []
    for parser in PARSERS:
        for case in ADVERSARIAL:
            times, ratio = growth(parser, case, args.repeats)
            worst = max(worst, ratio)
            flag = "SUPER-LINEAR" if ratio > args.growth else "ok"
            print(f"{flag:>12}  x{ratio:6.1f}  {parser:28} {case:40} "
                  + ", ".join(f"{t * 1000:.2f} ms" for t in times))
            if ratio > args.growth:
                bad.append((parser, case))
    print(f"{len(PARSERS) * len(ADVERSARIAL)} paths x inputs; sizes {SIZES} bytes ({SIZES[-1] // SIZES[0]}x); "
          f"worst growth x{worst:.1f} (linear up to x{args.growth:g}); {len(bad)} super-linear")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
