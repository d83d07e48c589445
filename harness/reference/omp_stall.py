"""The classic ~40 ms stall of small requests: a peer that does not set TCP_NODELAY (Nagle's
algorithm meeting a delayed ACK) answers every small request about 40 ms late.

Importable without the server stack, so the OMP suite's report and bench/bench_omp.py share it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

STALL_BAND_S = (0.035, 0.045)
MIN_SAMPLES = 5
STALL_MESSAGE = "~40 ms per small request: the target may not set TCP_NODELAY"


def detect_nodelay_stall(samples: Sequence[float]) -> str | None:
    """The stall message when the median latency (seconds) of small requests sits in 35-45 ms, else None.

    Needs at least MIN_SAMPLES samples: one slow request is not a pattern.
    """
    if len(samples) < MIN_SAMPLES:
        return None
    median = statistics.median(samples)
    if STALL_BAND_S[0] <= median <= STALL_BAND_S[1]:
        return f"{STALL_MESSAGE} (median {median * 1000:.1f} ms over {len(samples)} requests)"
    return None
