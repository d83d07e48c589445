"""The classic ~40 ms stall of small exchanges: a peer that does not set TCP_NODELAY (Nagle's
algorithm meeting a delayed ACK) answers every small request about 40 ms late, while large answers,
whose full segments are never held back, come at the speed of the machine.

A measurement of the target, never a verdict: the note compares the small exchanges with a control
measured in the same run (large answers from the same target), so a busy machine, which slows both,
does not look like a stall; it says how sure it is. Shared by the OMP suite's report and bench/bench_omp.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

STALL_BAND_S = (0.035, 0.045)
STALL_MESSAGE = "~40 ms per small request: the target may not set TCP_NODELAY"
MIN_SMALL = 20  # one slow request, or a few, is not a pattern
MIN_CONTROL = 5
# the small exchanges must be this much slower than the control: the stall is ~40 ms on top of the work
MIN_GAP_S = 0.025


@dataclass(frozen=True)
class StallNote:
    confidence: str  # "confirmed" | "unconfirmed"
    small_median_s: float
    small_count: int
    control_median_s: float | None
    control_count: int

    def text(self) -> str:
        small = f"median {self.small_median_s * 1000:.1f} ms over {self.small_count} small requests"
        if self.confidence == "confirmed":
            return (f"{STALL_MESSAGE} ({small}, against a median of {self.control_median_s * 1000:.1f} ms over "  # type: ignore[operator]
                    f"{self.control_count} large answers of the same run; confirmed: the large answers do not stall)")
        return (f"{STALL_MESSAGE} ({small}; unconfirmed: no control to compare with, "
                f"{self.control_count} large answers in this run, so a busy machine cannot be ruled out)")


def judge_stall(small: Sequence[float], control: Sequence[float] = ()) -> StallNote | None:
    """The note, or None. `small`: seconds per small exchange; `control`: seconds per large answer
    from the same target in the same run. Confirmed only when the small exchanges sit in the band and
    the control is at least MIN_GAP_S faster (quartiles apart, not just medians); a control as slow as
    the small exchanges means the machine, not the peer, is slow: no note."""
    if len(small) < MIN_SMALL:
        return None
    small_median = statistics.median(small)
    if not STALL_BAND_S[0] <= small_median <= STALL_BAND_S[1]:
        return None
    if len(control) < MIN_CONTROL:
        return StallNote("unconfirmed", small_median, len(small), None, len(control))
    control_median = statistics.median(control)
    small_low = statistics.quantiles(small, n=4)[0]
    control_high = statistics.quantiles(control, n=4)[2]
    if small_low - control_high < MIN_GAP_S:
        return None
    return StallNote("confirmed", small_median, len(small), control_median, len(control))
