"""Benchmark: `memconform validate` on a sealed 100,000-record MemoRizz archive, against the floor and memorizz.

    python bench/bench_memorizz.py [--records N] [--repeat R] [--keep FILE]

The floor is what any validator must do: read the file, parse it, write the canonical serialisation and
sha256 it. memconform's validate (in process, the same code path as the CLI) should be within 1.5x of
the floor; memorizz's `validate_archive` (timed only when memorizz is importable: run this with the
interpreter of a venv that has it) should be at least 10x slower than memconform, at 10k records as at
100k (issue 33). Each step runs in a fresh interpreter (median of --repeat runs): wall and CPU seconds
of the step, and the peak RSS of that process (which on Linux starts at this script's own peak, the
archive it generated: bench/table.py measures peaks through GNU time instead).
A second archive with floats that need the special number rules (1.0, 1e-7) measures the marked writer.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memconform.cli.main import main as memconform_main  # noqa: E402
from memconform.suites.memorizz import format as mz  # noqa: E402

WORDS = ("harbor launch release owner mira window deploy check note agent memory summary tool result "
         "context review plan after before schedule ticket customer follow up verify").split()


def make_archive(records: int, special_floats: bool, seed: int = 4) -> dict[str, Any]:
    rng = random.Random(seed)
    archive = mz.empty_archive(created_at="2026-05-01T12:00:00+00:00", memorizz_version="0.17.16",
                               source_provider="FileSystemProvider")
    stores = [s for s in mz.STORES if s != "agents"]
    for i in range(records):
        store = stores[i % len(stores)]
        rid = f"{i:08x}-859c-4cde-9921-{rng.getrandbits(48):012x}"
        data: dict[str, Any] = {
            "_id": rid, "id": rid, "memory_id": f"ns-{i % 50}", "user_id": None,
            "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(14, 24))) + " Ünïcode ☂.",
            "timestamp": f"2026-05-{1 + i % 28:02d}T12:{i % 60:02d}:00+00:00",
            "importance": round(rng.uniform(0.05, 0.95), 3), "tags": [rng.choice(WORDS), rng.choice(WORDS)],
        }
        if special_floats:
            data["weight"] = 1.0 if i % 2 else 1e-7
        natural = mz.NATURAL_IDS_IMPLIED.get(store)
        if natural:
            data[natural] = rid
        archive["stores"][store].append({"id": rid, "data": data})
    return mz.seal(archive)


STEPS = ("floor", "memconform", "memorizz")


def run_step(step: str, path: Path) -> dict[str, float]:
    """One measurement in a fresh interpreter: wall and CPU seconds, and the process's peak RSS."""
    proc = subprocess.run([sys.executable, __file__, "--step", step, "--file", str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"step {step} failed: {proc.stderr[-800:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(step: str, path: Path, repeat: int) -> dict[str, float]:
    runs = [run_step(step, path) for _ in range(repeat)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def step_main(step: str, path: Path) -> int:
    import resource

    fn = {"floor": floor, "memconform": memconform_validate, "memorizz": memorizz_validate}[step]
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if step == "memconform" and result != 0:
        print(f"memconform validate said {result}", file=sys.stderr)
        return 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"wall": wall, "cpu": cpu, "peak_mib": peak}))
    return 0


def floor(path: Path) -> str:
    value = json.loads(path.read_bytes())
    body = {k: v for k, v in value.items() if k != "integrity"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def memconform_validate(path: Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return memconform_main(["validate", str(path)])


def memorizz_validate(path: Path) -> Any:
    from memorizz.memory_archive import validate_archive

    return validate_archive(json.loads(path.read_bytes()))


def bench(path: Path, repeat: int, have_memorizz: bool, label: str) -> dict[str, dict[str, float]]:
    size = path.stat().st_size
    print(f"\n{label}: {path.name} ({size / 1e6:.1f} MB); median of {repeat} fresh processes each")
    rows = {}
    names = {"floor": "floor (read + parse + canonical + sha256)", "memconform": "memconform validate (CLI code path)",
             "memorizz": "memorizz validate_archive (+ json.loads)"}
    for step in STEPS:
        if step == "memorizz" and not have_memorizz:
            print(f"  {names[step]:<44} (memorizz not importable: skipped)")
            continue
        rows[step] = m = measure(step, path, repeat)
        print(f"  {names[step]:<44} wall {m['wall']:6.2f} s  cpu {m['cpu']:6.2f} s  peak RSS {m['peak_mib']:6.0f} MiB")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", help="also write the plain archive here")
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        return step_main(args.step, Path(args.file))
    try:
        import memorizz.memory_archive  # noqa: F401
        have_memorizz = True
    except ImportError:
        have_memorizz = False
    with tempfile.TemporaryDirectory(prefix="memconform-bench-") as folder:
        results = {}
        for label, special in (("plain floats", False), ("floats needing the number rules", True)):
            path = Path(folder) / f"archive-{'special' if special else 'plain'}.memorizz.json"
            path.write_text(json.dumps(make_archive(args.records, special), ensure_ascii=False), "utf-8")
            if args.keep and not special:
                Path(args.keep).write_bytes(path.read_bytes())
            results[label] = bench(path, args.repeat, have_memorizz, f"{args.records} records, {label}")
            # the floor writes Python's float repr; where a float needs the spec's number rules that text is
            # not the canonical form, so the floor there is a bound no correct validator can reach
            sealed = json.loads(path.read_bytes())["integrity"]["digest"]
            print(f"  floor's digest {'equals' if floor(path) == sealed else 'DIFFERS from'} the archive's "
                  f"(the floor {'is' if floor(path) == sealed else 'is not'} a canonical serialisation here)")
            os.unlink(path)
        over = Path(folder) / "over.memorizz.json"
        with open(over, "wb") as fh:  # a sparse file over the 50 MiB limit: must be refused without reading
            fh.write(b'{"format": "memorizz.memory", "version": 1, "pad": "')
            fh.seek(60 * 2**20)
            fh.write(b'"}')
        memconform_validate(over)  # warm: the first call imports every suite module
        tracemalloc.start()
        started = time.perf_counter()
        code = memconform_validate(over)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"\nover-limit 60 MiB file: exit {code} in {elapsed * 1000:.1f} ms, traced peak {peak:.2f} MiB "
              "(refused before reading)")
    print("\nratios (wall; cpu in brackets, steadier on a shared machine):")
    for label, rows in results.items():
        f, m = rows["floor"], rows["memconform"]
        line = f"  {label}: memconform/floor = {m['wall'] / f['wall']:.2f} [{m['cpu'] / f['cpu']:.2f}] (goal <= 1.5)"
        if "memorizz" in rows:
            z = rows["memorizz"]
            line += f"; memorizz/memconform = {z['wall'] / m['wall']:.1f} [{z['cpu'] / m['cpu']:.1f}] (goal >= 10)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
