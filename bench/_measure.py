"""What the benchmark scripts share: best-of-N timing, and one phase measured in a fresh process.

A phase runs in its own interpreter so its peak RSS is its own; a `cli` phase reports the peak of the
command it ran (RUSAGE_CHILDREN). The scripts import this as `_measure` (their folder is on sys.path).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def best(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs, in seconds: the least disturbed by the rest of the machine."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def phase_in_child(script: str, phase: str, path: Path, *args: str, timeout: float | None = None) -> tuple[float, float]:
    """(seconds, peak MB) of `script --phase PHASE --file PATH ARGS` run in a fresh process."""
    out = subprocess.run([sys.executable, script, "--phase", phase, "--file", str(path), *args],
                         capture_output=True, text=True, check=True, timeout=timeout)
    seconds, peak_kb = out.stdout.split()
    return float(seconds), float(peak_kb) / 1024


def report_phase(phase: str, seconds: float) -> None:
    """The child's side of phase_in_child: its time and its peak RSS (for `cli`, the command's)."""
    who = resource.RUSAGE_CHILDREN if phase == "cli" else resource.RUSAGE_SELF
    print(seconds, resource.getrusage(who).ru_maxrss)
