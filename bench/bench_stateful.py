"""Benchmark of the stateful phase. Figures go into closing notes; unit tests never time things.

    python bench/bench_stateful.py [--profile default] [--repeat 1] [--skip-suites]

1. Per suite, its model-based check against the embedded reference under `--profile` (default: the
   `default` profile, more sequences than ci): operations sent to the target per second and model
   steps per second (a step is one rule of the state machine; OMP keeps no per-step list, so its
   steps are not counted), the fastest of --repeat runs.
2. The whole suite under `--profile ci` against each reference (target: each < 60 s), and
   `memconform run` of every suite (target: < 3 min), each in a fresh process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from typing import Any

from _measure import best
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.suite import suite_names
from memconform.run.session import Session

MACHINES = {
    "memoryai": "memoryai.model_sequences",
    "amps": "amps.model_sequences",
    "memorizz": "memorizz.model_sequences",
    "emp": "emp.writer_model_sequences",
    "omp": "omp.model_based_sequences",
}


def stateful_once(suite: str, profile: str) -> dict[str, Any]:
    """One run of the suite's model-based check: seconds, target operations, model steps, sequences."""
    check = next(c for c in REGISTRY.for_suite(suite) if c.id == MACHINES[suite])
    with Session([suite], None, Profile.named(profile), None) as session:
        ctx = session.context(suite)
        sent = [0]
        inner = ctx.target.send

        def counting(request: Any) -> Any:
            sent[0] += 1
            return inner(request)

        ctx.target.send = counting
        started = time.perf_counter()
        result = session.run_check(check)
        seconds = time.perf_counter() - started
        models = ctx.cache.get(f"{suite}.stateful-models") or []
        steps = sum(len(getattr(m, "steps", ()) or ()) for m in models)
    return {"outcome": result.outcome.value, "seconds": seconds, "ops": sent[0], "steps": steps, "sequences": len(models)}


def measured(suite: str, profile: str, repeat: int) -> dict[str, Any]:
    """The fastest of `repeat` runs (_measure.best times each; the check's own seconds are reported)."""
    runs: list[dict[str, Any]] = []
    best(lambda: runs.append(stateful_once(suite, profile)), repeat)
    return min(runs, key=lambda x: x["seconds"])


def whole_run(args: list[str]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="memconform-bench-") as folder:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "memconform.cli.main", "run", "--profile", "ci", "--report-dir", folder, *args],
                              capture_output=True, text=True)
        return time.perf_counter() - started, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="default", help="profile of the stateful measurement (default: default)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-suites", action="store_true", help="only the stateful measurement")
    args = parser.parse_args()

    print(f"stateful checks against the embedded references, profile {args.profile} (best of {args.repeat})")
    print(f"{'suite':<10} {'check':<28} {'outcome':<8} {'seconds':>8} {'sequences':>9} {'ops':>6} {'ops/s':>8} "
          f"{'steps':>6} {'steps/s':>8}")
    for suite in MACHINES:
        r = measured(suite, args.profile, args.repeat)
        steps = f"{r['steps']:>6} {r['steps'] / r['seconds']:>8.1f}" if r["steps"] else f"{'-':>6} {'-':>8}"
        print(f"{suite:<10} {MACHINES[suite]:<28} {r['outcome']:<8} {r['seconds']:>8.2f} {r['sequences']:>9} {r['ops']:>6} "
              f"{r['ops'] / r['seconds']:>8.1f} {steps}")
    if args.skip_suites:
        return 0
    print("\nwhole suites under --profile ci against their references (fresh process each; target < 60 s each)")
    print(f"{'suite':<10} {'seconds':>8} {'exit':>5}")
    total = 0.0
    for suite in suite_names():
        seconds, code = whole_run(["--suite", suite])
        total += seconds
        print(f"{suite:<10} {seconds:>8.1f} {code:>5}{'' if seconds < 60 else '  OVER 60 s'}")
    seconds, code = whole_run([])
    print(f"{'all':<10} {seconds:>8.1f} {code:>5}  (memconform run of every suite; target < 180 s; sum of the above {total:.1f} s)"
          + ("" if seconds < 180 else "  OVER 3 min"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
