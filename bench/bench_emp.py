"""Benchmark for the EMP suite. Figures go into closing notes; unit tests never time things.

    python bench/bench_emp.py [--lines 1000000] [--ids 50000] [--writers 4] [--appends 500] [--cli-appends 25]

1. Validate (every file check, one streaming pass) and resolve (the newest-ts view) a memory.jsonl
   of --lines lines over --ids distinct ids, generated deterministically (updates, tags, meta, emb,
   tombstones), against the floor measured in the same run: read the file line by line and
   json-parse each line. Each phase runs in its own process, so its peak memory (max RSS) is its
   own. The same phases on a file a tenth as long show whether memory grows with the file.
2. Appends per second through memory.jsonl.lock from --writers concurrent processes: (a) each
   process loops the reference store's append --appends times, (b) each writer runs the reference
   CLI (`python -m memconform.suites.emp.reference append ...`, one process per append) --cli-appends times.
   Afterwards the file is checked: every acknowledged append present once, no torn line.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from _measure import phase_in_child, report_phase
from memconform.core.profile import Profile
from memconform.run.document_run import validate_document
from memconform.suites.emp import format as emp

PHASES = ("floor", "validate", "resolve", "cli")
TIMEOUT_S = 600


def write_file(path: Path, n_lines: int, n_ids: int) -> None:
    rng = random.Random(7)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n_ids)]
    srcs = ["com.example.chat", "com.example.notes", "org.example.assistant"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n_lines):
            entry_id, ts = ids[i % n_ids], 1701234567890 + i
            if i % 50 == 49:
                line = emp.tombstone(entry_id, ts, srcs[0])
            else:
                line = {"v": "1.0", "id": entry_id, "ts": ts, "src": srcs[i % 3],
                        "content": f"User note {i}: prefers option {rng.randrange(10**6)} — café ✓",
                        "type": "preference", "tags": ["ui", f"t{i % 20}"]}
                if i % 4 == 0:
                    line["meta"] = {"priority": "high", "n": i}
                if i % 10 == 0:
                    line["emb"] = [round(rng.random(), 4) for _ in range(8)]
            fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def run_phase(phase: str, path: Path) -> float:
    t = time.perf_counter()
    if phase == "floor":
        with path.open("rb") as fh:
            for raw in fh:
                json.loads(raw)
    elif phase == "validate":
        results = validate_document(emp.LineStream(path), "emp", Profile.named("ci"))
        assert all(r.outcome.value == "passed" for r in results), [r.check_id for r in results if r.failures]
    elif phase == "resolve":
        view = emp.resolve(emp.iter_lines(path))
        assert view
    else:
        cli = subprocess.run([sys.executable, "-m", "memconform.cli.main", "validate", str(path)],
                             capture_output=True, text=True, timeout=TIMEOUT_S)
        assert cli.returncode == 0, cli.stdout[-2000:] + cli.stderr[-2000:]
    return time.perf_counter() - t


WRITER = """
import sys, uuid
from memconform.suites.emp.reference import ReferenceEmpApp
app, path, n, w = ReferenceEmpApp(), sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(n):
    eid = str(uuid.uuid4())
    app.append({"path": path, "entry": {"id": eid, "content": f"writer {w} append {i}"}})
    print(eid, flush=True)
"""


def check_file(path: Path, acked: list[str]) -> str:
    lines = list(emp.iter_lines(path))
    torn = sum(1 for _, _, e in lines if not emp.readable(e))
    ids = [e["id"] for _, _, e in lines if emp.readable(e)]
    lost, dup = len(set(acked) - set(ids)), len(ids) - len(set(ids))
    return f"acknowledged {len(acked)}, lines {len(lines)}, lost {lost}, torn {torn}, duplicated {dup}"


def bench_library_writers(folder: Path, writers: int, appends: int) -> None:
    path = folder / "lib" / emp.FILE_NAME
    path.parent.mkdir()
    t = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(appends), str(w)],
                              stdout=subprocess.PIPE, text=True) for w in range(writers)]
    outs = [p.communicate(timeout=TIMEOUT_S)[0] for p in procs]
    elapsed = time.perf_counter() - t
    acked = [line for out in outs for line in out.split()]
    print(f"{writers} writer processes x {appends} appends (reference store loop): {elapsed:.2f} s, "
          f"{len(acked) / elapsed:.0f} appends/s; {check_file(path, acked)}")


def bench_cli_writers(folder: Path, writers: int, appends: int) -> None:
    path = folder / "cli" / emp.FILE_NAME
    path.parent.mkdir()
    acked: list[str] = []
    mutex = threading.Lock()

    def writer(w: int) -> None:
        work = folder / f"cli-{w}"
        work.mkdir()
        for i in range(appends):
            eid = str(uuid.uuid4())
            (work / "in.json").write_text(json.dumps({"path": str(path), "entry": {"id": eid, "content": f"cli {w} {i}"}}))
            done = subprocess.run([sys.executable, "-m", "memconform.suites.emp.reference", "append", str(work / "in.json"),
                                   str(work / "out.json")], timeout=60)
            if done.returncode == 0:
                with mutex:
                    acked.append(eid)

    t = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(TIMEOUT_S)
    elapsed = time.perf_counter() - t
    print(f"{writers} concurrent writers x {appends} CLI runs (one process per append): {elapsed:.2f} s, "
          f"{len(acked) / elapsed:.0f} appends/s; {check_file(path, acked)}")


def bench_model_steps(profile: str, targets: dict[str, str]) -> None:
    """emp.writer_model_sequences: state-machine steps per second against the reference, in process and as a command."""
    from memconform.core.registry import REGISTRY
    from memconform.core.runner import Context, run_one
    from memconform.core.suite import get_suite
    from memconform.targets import open_target

    prof = Profile.named(profile)
    for name, spec in targets.items():
        target = open_target(spec, {}, prof.limits, None)
        ctx = Context(suite=get_suite("emp"), target=target, profile=prof)
        t = time.perf_counter()
        result = run_one(REGISTRY.get("emp.writer_model_sequences"), ctx)
        elapsed = time.perf_counter() - t
        steps = sum(len(m.steps) for m in ctx.cache.get("emp.stateful-models", []))
        print(f"model sequences ({profile}, {name}): {result.outcome.value}, {steps} steps in {elapsed:.2f} s, "
              f"{steps / elapsed:.1f} steps/s")
        target.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--ids", type=int, default=50_000)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--appends", type=int, default=500)
    ap.add_argument("--cli-appends", type=int, default=25)
    ap.add_argument("--model-only", action="store_true", help="only the state-machine steps per second")
    ap.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    ap.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:  # a child: one phase, then its time and its own peak RSS
        report_phase(args.phase, run_phase(args.phase, args.file))
        return
    command = f"cmd:{sys.executable} -m memconform.suites.emp.reference {{op}} {{input}} {{output}}"
    bench_model_steps("ci", {"in process": "reference:emp", "command": command})
    if args.model_only:
        return
    with tempfile.TemporaryDirectory(prefix="memconform-bench-emp-") as tmp:
        folder = Path(tmp)
        for n_lines in (args.lines // 10, args.lines):
            path = folder / f"memory-{n_lines}.jsonl"
            write_file(path, n_lines, args.ids)
            print(f"memory.jsonl: {n_lines} lines, {args.ids} ids, {path.stat().st_size / 1e6:.1f} MB")
            figures = {phase: phase_in_child(__file__, phase, path, timeout=TIMEOUT_S) for phase in PHASES}
            t_floor = figures["floor"][0]
            for phase, (seconds, peak) in figures.items():
                ratio = "" if phase == "floor" else f"  ratio {seconds / t_floor:.2f}x"
                print(f"  {phase:<9} {seconds:7.2f} s  peak {peak:6.0f} MB{ratio}")
            path.unlink()
        bench_library_writers(folder, args.writers, args.appends)
        bench_cli_writers(folder, args.writers, args.cli_appends)


if __name__ == "__main__":
    main()
