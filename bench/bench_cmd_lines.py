"""A `ci` conformance run against a command-line product whose start costs 300 ms: one process per
call (`cmd:`) beside one process for the run (`cmd-lines:`, harness/targets/lines.py). Figures go into
closing notes; unit tests never time things.

    python bench/bench_cmd_lines.py [--suites emp,amps,memoryai,memorizz,omp] [--start-s 0.3] [--profile ci]

Long-lived: each suite's embedded reference served by `python -m memconform.targets.lines_serve
reference:NAME --sleep-at-start S`. One-shot: where a per-call command adapter keeps its state
between processes (EMP's reference: the store is the file), `sh -c 'sleep S; exec ADAPTER'`. Each run
prints its wall time, the call count from its footer, its outcomes and the load average at its start
and end (the machine is shared: compare ratios, not seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ONE_SHOT = {  # suites whose reference runs as one process per call, keeping its state between calls
    "emp": "{python} -m memconform.suites.emp.reference",
}


def run(suite: str, target: str, profile: str, folder: Path) -> dict[str, object]:
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "memconform", "run", "--suite", suite, "--profile", profile,
                           "--target", target, "--report-dir", str(folder)], capture_output=True, text=True)
    wall = time.monotonic() - started
    records = [json.loads(line) for line in (folder / "report.jsonl").read_text().splitlines() if line.strip()]
    outcomes = Counter(r["outcome"] for r in records if r.get("type") == "result")
    footer = records[-1] if records and records[-1].get("type") == "footer" else {}
    calls = [c.get("calls") for c in footer.get("calls", [])]
    return {"wall_s": wall, "exit": done.returncode, "outcomes": dict(outcomes), "calls": calls[0] if calls else "?",
            "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suites", default="emp,amps,memoryai,memorizz", help="omp speaks HTTP only: its checks skip elsewhere")
    ap.add_argument("--start-s", type=float, default=0.3, help="the product's start-up time the adapters sleep")
    ap.add_argument("--profile", default="ci")
    args = ap.parse_args()
    python = shlex.quote(sys.executable)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memconform-bench-lines-") as tmp:
        for suite in args.suites.split(","):
            lines = f"cmd-lines:{python} -m memconform.targets.lines_serve reference:{suite} --sleep-at-start {args.start_s}"
            kinds = [("long-lived (cmd-lines:)", lines)]
            if suite in ONE_SHOT:
                adapter = ONE_SHOT[suite].format(python=python)
                script = shlex.quote(f'sleep {args.start_s}; exec {adapter} "$@"')
                kinds.append(("one-shot (cmd:)", f"cmd:sh -c {script} {suite} {{op}} {{input}} {{output}}"))
            for kind, target in kinds:
                print(f"{suite} {kind} ...", flush=True)
                result = run(suite, target, args.profile, Path(tmp) / f"{suite}-{kind.split()[0]}")
                rows.append((suite, kind, result))
                print(f"  {result}", flush=True)
            if suite not in ONE_SHOT:
                rows.append((suite, "one-shot (cmd:)", {"skipped": "no per-call adapter keeps this reference's state "
                                                                   "between processes"}))
    print(f"\n`{args.profile}` runs, adapters starting in {args.start_s} s, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| suite | target | wall s | calls | outcomes | exit | load average |\n|---|---|---|---|---|---|---|")
    for suite, kind, r in rows:
        if "skipped" in r:
            print(f"| {suite} | {kind} | skipped: {r['skipped']} | | | | |")
        else:
            print(f"| {suite} | {kind} | {r['wall_s']:.1f} | {r['calls']} | {r['outcomes']} | {r['exit']} | {r['load']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
