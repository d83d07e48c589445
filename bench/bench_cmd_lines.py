"""A `ci` conformance run against a command-line product whose start costs 300 ms: one process per
call (`cmd:`) beside one process for the run (`cmd-lines:`, harness/targets/lines.py). Figures go into
closing notes; unit tests never time things.

    python bench/bench_cmd_lines.py [--suites emp,amps,memoryai,memorizz,omp] [--start-s 0.3] [--profile ci]
                                    [--kinds long-lived,one-shot]

Long-lived: each suite's embedded reference served by `python -m memconform.targets.lines_serve
reference:NAME --sleep-at-start S`; OMP, which speaks HTTP only, by `memconform serve omp` started after
a sleep of S (a server is started once whatever the kind). One-shot: EMP's reference is a per-call
command of its own (the store is the file), `sh -c 'sleep S; exec ADAPTER'`; the SQLite-backed ones are
served per call by bench/oneshot_reference.py, which keeps their state in a folder between processes.
Each run prints its wall time, the CPU seconds of memconform and every process it waited for, the call
count from its footer, its outcomes and the load average at its start and end (the machine is shared:
compare ratios, not seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ONE_SHOT = {  # a suite's reference as one process per call, keeping its state between calls
    "emp": "{python} -m memconform.suites.emp.reference",
    "amps": "{python} {oneshot} reference:amps {state}",
    "memoryai": "{python} {oneshot} reference:memoryai {state}",
    "memorizz": "{python} {oneshot} reference:memorizz {state}",
}
ONESHOT_SCRIPT = Path(__file__).with_name("oneshot_reference.py")


def run(suite: str, target: str, profile: str, folder: Path, extra: list[str] | None = None) -> dict[str, object]:
    load_before = os.getloadavg()[0]
    started, cpu_before = time.monotonic(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "memconform", "run", "--suite", suite, "--profile", profile,
                           "--target", target, "--report-dir", str(folder), *(extra or [])], capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, _children_cpu() - cpu_before
    records = [json.loads(line) for line in (folder / "report.jsonl").read_text().splitlines() if line.strip()]
    outcomes = Counter(r["outcome"] for r in records if r.get("type") == "result")
    footer = records[-1] if records and records[-1].get("type") == "footer" else {}
    calls = [c.get("calls") for c in footer.get("calls", [])]
    return {"wall_s": wall, "cpu_s": cpu, "exit": done.returncode, "outcomes": dict(outcomes), "calls": calls[0] if calls else "?",
            "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_omp(start_s: float, profile: str, folder: Path) -> dict[str, object]:
    """OMP against `memconform serve omp` started after a sleep of start_s: the run command it prints (its
    output goes to a file, so a server that logs every request never blocks on a full pipe)."""
    log = folder.with_suffix(".server.log")
    with log.open("w") as sink:
        server = subprocess.Popen(["sh", "-c", f'sleep {start_s}; exec "$0" -m memconform serve omp --port 0', sys.executable],
                                  stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (line := next((x for x in log.read_text().splitlines() if "run: memconform run" in x), "")):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"memconform serve omp printed no run command: {log.read_text()[:500]}")
            time.sleep(0.05)
        words = shlex.split(line.split("run: ", 1)[1])
        at = words.index("--target")
        extra = [w for w in words[at + 2:] if w not in ("--report-dir", "/tmp/omp-report")]
        return run("omp", words[at + 1], profile, folder, extra)
    finally:
        server.kill()
        server.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suites", default="emp,amps,memoryai,memorizz,omp", help="omp speaks HTTP only: served, not a command")
    ap.add_argument("--kinds", default="long-lived,one-shot")
    ap.add_argument("--start-s", type=float, default=0.3, help="the product's start-up time the adapters sleep")
    ap.add_argument("--profile", default="ci")
    args = ap.parse_args()
    python = shlex.quote(sys.executable)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memconform-bench-lines-") as tmp:
        for suite in args.suites.split(","):
            if suite == "omp":
                print("omp served (HTTP) ...", flush=True)
                rows.append((suite, "served over HTTP (one start)", run_omp(args.start_s, args.profile, Path(tmp) / "omp")))
                print(f"  {rows[-1][2]}", flush=True)
                continue
            kinds = []
            if "long-lived" in args.kinds:
                kinds.append(("long-lived (cmd-lines:)", f"cmd-lines:{python} -m memconform.targets.lines_serve "
                                                        f"reference:{suite} --sleep-at-start {args.start_s}"))
            if "one-shot" in args.kinds and suite in ONE_SHOT:
                state = shlex.quote(str(Path(tmp) / f"{suite}-state"))
                adapter = ONE_SHOT[suite].format(python=python, oneshot=shlex.quote(str(ONESHOT_SCRIPT)), state=state)
                script = shlex.quote(f'sleep {args.start_s}; exec {adapter} "$@"')
                kinds.append(("one-shot (cmd:)", f"cmd:sh -c {script} {suite} {{op}} {{input}} {{output}}"))
            for kind, target in kinds:
                print(f"{suite} {kind} ...", flush=True)
                result = run(suite, target, args.profile, Path(tmp) / f"{suite}-{kind.split()[0]}")
                rows.append((suite, kind, result))
                print(f"  {result}", flush=True)
    print(f"\n`{args.profile}` runs, adapters starting in {args.start_s} s, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| suite | target | wall s | CPU s | calls | outcomes | exit | load average |\n|---|---|---|---|---|---|---|---|")
    for suite, kind, r in rows:
        print(f"| {suite} | {kind} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['calls']} | {r['outcomes']} | {r['exit']} | {r['load']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
