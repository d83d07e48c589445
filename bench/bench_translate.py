"""Benchmark for `memconform translate`: N records of each format (100,000 by default) into every other
format, through the CLI, each translation in a fresh process. Figures go into closing notes; unit tests
never time things.

    python bench/bench_translate.py [--records 100000] [--from amps,emp] [--to omp] [--timeout 900] [--detect]

Per directed pair: wall time, CPU time (user + system) and peak RSS of the translate process
(RUSAGE_CHILDREN of a fresh wrapper), the input and output sizes, peak RSS over the input size, the
1-minute load average before and after (wall time on a shared machine means little without it), and the
exit code (0 written, 1 refused: the ledger's reason is printed). `--detect` runs each translation without
`--from`: the format found as the CLI finds it (portability/detected.py, or the whole parse). `--markdown` prints the rows as a
bench/RESULTS.md table instead of JSON lines. `--phases` shows where the memory goes instead: per pair, in a
fresh process doing the CLI's steps one by one (load, judge the source, read it into canonical records letting
the parsed source go, write letting the records go (a streaming writer: only its envelope), an output `validate`
reads whole judged in memory, the text written to a file (a streaming writer's records made here), the file
judged as `validate` judges it), the peak RSS of each step
and the RSS after it, in MB (Linux: the peak is reset between steps through /proc/self/clear_refs).
The documents are generated deterministically from the first record of a reference fixture, each record
with its own id and text.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("memoryai", "omp", "memorizz", "amps", "emp")


def _fixture(fmt: str, name: str) -> Any:
    return json.loads((ROOT / "fixtures" / fmt / "valid" / name).read_text(encoding="utf-8"))["document"]


def generate(fmt: str, n: int) -> str:
    """The text of a document of `fmt` holding n records."""
    if fmt == "memoryai":
        from memconform.suites.memoryai import format as mai

        doc = _fixture(fmt, "full_bundle_all_sections.json")
        first = doc["chunks"][0]
        doc["chunks"] = []
        for i in range(n):
            chunk = dict(copy.deepcopy(first), id=i + 1, content=f"record {i}: the release owner is Mira")
            chunk["content_hash"] = mai.content_hash(chunk["content"])
            doc["chunks"].append(chunk)
        for section in ("memory_edges", "entities", "l2_sessions", "mood_states", "agents"):
            doc[section] = []
        return json.dumps(mai.seal(doc), ensure_ascii=False)
    if fmt == "omp":
        doc = json.loads((ROOT / "suites" / "omp" / "portability" / "omp-export.json").read_text(encoding="utf-8"))
        first = doc["memories"][0]
        doc["memories"] = [dict(copy.deepcopy(first), id=f"mem_{i:016d}", content=f"record {i}: the release owner is Mira")
                           for i in range(n)]
        return json.dumps(doc, ensure_ascii=False)
    if fmt == "memorizz":
        from memconform.suites.memorizz import format as mz

        doc = _fixture(fmt, "every-store.json")
        first = doc["stores"]["knowledge_base"][0]
        for store in doc["stores"]:
            doc["stores"][store] = []
        doc["stores"]["knowledge_base"] = [
            {"id": f"kb-{i}", "data": dict(copy.deepcopy(first["data"]), content=f"record {i}: the release owner is Mira")}
            for i in range(n)]
        return json.dumps(mz.seal(doc), ensure_ascii=False)
    if fmt == "amps":
        doc = _fixture(fmt, "linked-complete.json")
        first = next(a for a in doc["atoms"] if not (a.get("provenance") or {}).get("artifact_ids"))
        doc["atoms"] = [dict(copy.deepcopy(first), atom_id=f"atom_{i}", text=f"record {i}: the release owner is Mira")
                        for i in range(n)]
        doc["artifacts"] = []
        return json.dumps(doc, ensure_ascii=False)
    lines = []
    for i in range(n):
        lines.append(json.dumps({"v": "1.0", "id": str(uuid.UUID(int=i + 1, version=4)), "ts": 1_760_000_000_000 + i,
                                 "src": "com.example.app", "content": f"record {i}: the release owner is Mira",
                                 "type": "fact", "tags": ["release"]}))
    return "\n".join(lines) + "\n"


# the wrapper: a fresh interpreter whose only child is the translate command, so RUSAGE_CHILDREN is its peak
WRAPPER = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(done.returncode, time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
sys.stderr.write(done.stderr[-400:])
"""


# the CLI's steps (cli/portability.py cmd_translate, portability/written.py) one by one, the peak RSS reset before
# each: the output is written to a file and judged from it
PHASES = """
import gc, os, sys, tempfile
from pathlib import Path
from memconform.portability import translate as T
from memconform.portability.canonical import consuming
from memconform.portability.formats import portable
from memconform.portability.ledger import Ledger
from memconform.portability.validation import judge
from memconform.portability.streamed import streaming
from memconform.portability.written import judge_file, judged_in_parts
from memconform.portability.sourced import read_source

def rss():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmHWM"].split()[0]) // 1024, int(status["VmRSS"].split()[0]) // 1024

def step(name):
    peak, now = rss()
    print(name, peak, now)
    open("/proc/self/clear_refs", "w").write("5")

gc.disable()
path, source, target = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
step("start")
first = read_source(path, source, target)  # a source read in windows (sourced.py): judged and counted here
if first is not None:
    step("judge_and_count_source")
    canonical, ledger = first.canonical, first.ledger  # its records are read as they are written
    del first
else:
    source, doc = T.load(path, source)
    step("load")
    judge(source, doc)
    step("judge_source")
    with consuming():
        canonical = T.read(source, doc)
    del doc
    ledger = Ledger(source, target, records_in=len(canonical.records))
    T.prepare(canonical, ledger)
    step("read")
parts = judged_in_parts(target)
fd, part = tempfile.mkstemp(dir=path.parent)
with consuming(), streaming(parts):  # a streaming writer makes its records in write_file
    output = portable(target).write(canonical, ledger)
    del canonical
    step("write")
    if not parts:
        judge(target, output)
        step("judge_output")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        for piece in T.chunks(target, output):
            out.write(piece)
    del output
step("write_file")
size = os.path.getsize(part)
if not T.limit_refusal(target, size) and parts:
    judge_file(target, Path(part), size)
    step("judge_file")
os.unlink(part)
"""


def phases(src: Path, source: str, target: str, timeout: float) -> dict[str, Any]:
    """Peak and resident MB after each of the CLI's steps, in a fresh process."""
    load_before = os.getloadavg()[0]
    done = subprocess.run([sys.executable, "-c", PHASES, str(src), source, target], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode:
        return {"pair": f"{source}->{target}", "error": done.stderr.strip().splitlines()[-1:]}
    rows = [line.split() for line in done.stdout.splitlines()]
    return {"pair": f"{source}->{target}", "in_mb": round(src.stat().st_size / 2**20, 1),
            "peak_mb": {name: int(peak) for name, peak, _ in rows[1:]},
            "after_mb": {name: int(now) for name, _, now in rows[1:]},
            "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"}


def measure(src: Path, source: str, target: str, out: Path, timeout: float, detect: bool = False) -> dict[str, Any]:
    command = [sys.executable, "-c", WRAPPER, sys.executable, "-m", "memconform", "translate", str(src),
               *([] if detect else ["--from", source]), "--to", target, "--out", str(out)]
    load_before = os.getloadavg()[0]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"pair": f"{source}->{target}", "exit": "timeout", "seconds": timeout}
    code, seconds, cpu, peak_kb = done.stdout.split()
    reason = done.stderr.strip().splitlines()[-1] if int(code) and done.stderr.strip() else ""
    in_mb = src.stat().st_size / 2**20
    return {"pair": f"{source}->{target}", "exit": int(code), "seconds": round(float(seconds), 1),
            "cpu_s": round(float(cpu), 1), "peak_mb": round(int(peak_kb) / 1024), "in_mb": round(in_mb, 1),
            "peak_per_input": round(int(peak_kb) / 1024 / in_mb, 1),
            "out_mb": round(out.stat().st_size / 2**20, 1) if out.exists() else None,
            "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}", "reason": reason[:200]}


def markdown_row(row: dict[str, Any]) -> str:
    """One bench/RESULTS.md row of a measured pair."""
    if row["exit"] == "timeout":
        return f"| {row['pair']} | timeout after {row['seconds']} s | | | | | | |"
    return (f"| {row['pair']} | {row['exit']} | {row['seconds']} | {row['cpu_s']} | {row['in_mb']} | "
            f"{row['peak_mb']} | {row['peak_per_input']}x | {row['load']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--from", dest="sources", default=",".join(FORMATS))
    parser.add_argument("--to", dest="targets", default=",".join(FORMATS))
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--markdown", action="store_true", help="rows of a bench/RESULTS.md table, not JSON lines")
    parser.add_argument("--phases", action="store_true", help="peak RSS per step of a translation (Linux), not timings")
    parser.add_argument("--detect", action="store_true", help="translate without --from: the format found by the CLI")
    args = parser.parse_args()
    if args.markdown:
        print("| pair | exit | wall s | CPU s | input MB | peak RSS MB | peak / input | load average (1 min) |")
        print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="memconform-bench-translate-") as tmp:
        for source in args.sources.split(","):
            src = Path(tmp) / f"{source}.in"
            started = time.perf_counter()
            src.write_text(generate(source, args.records), encoding="utf-8")
            print(f"{'<!--' if args.markdown else '#'} {source}: {args.records} records, {src.stat().st_size / 2**20:.1f} MB, "
                  f"made in {time.perf_counter() - started:.1f} s{' -->' if args.markdown else ''}", flush=True)
            for target in args.targets.split(","):
                if target != source:
                    if args.phases:
                        print(json.dumps(phases(src, source, target, args.timeout)), flush=True)
                        continue
                    out = Path(tmp) / f"{source}-{target}.out"
                    row = measure(src, source, target, out, args.timeout, args.detect)
                    print(markdown_row(row) if args.markdown else json.dumps(row), flush=True)
                    out.unlink(missing_ok=True)
            src.unlink()


if __name__ == "__main__":
    main()
