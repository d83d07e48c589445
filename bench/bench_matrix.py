"""Benchmark of `memconform matrix`. Figures go into closing notes; unit tests never time things.

    python bench/bench_matrix.py [--shards 200] [--repeat 3] [--skip-pool] [--pool-suite amps ...] [--jobs 2]

1. Combining: `--shards` shard folders (default 200: 40 implementations x 5 suites) made from one real ci
   run of each embedded reference, each copy with a few results turned into failures (a seeded draw, so
   the classes are not all all-pass), then read + aligned + classified (`combine`), and rendered
   (matrix.md, matrix.html, badges): seconds, the fastest of --repeat, and peak RSS of a fresh process.
2. The local pool against a serial run: `memconform matrix run --all` over the shipped registry's ci
   entries (the references and second opinions; `--pool-suite` to narrow), `--jobs 1` then `--jobs J`,
   each in a fresh process: wall seconds and the ratio serial / pool.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _measure import best
from memconform.core.profile import Profile
from memconform.core.suite import get_suite, suite_names
from memconform.run.session import execute_run

ROOT = Path(__file__).resolve().parent.parent


def reference_reports(folder: Path) -> dict[str, Path]:
    reports = {}
    for suite in suite_names():
        execute_run([suite], None, Profile.named("ci"), folder / suite)
        reports[suite] = folder / suite / "report.jsonl"
    return reports


def _spoil(line: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    if line.get("type") != "result" or line["outcome"] != "passed" or rng.random() > 0.05:
        return line
    failure = {"title": "a planted difference", "received": 1, "expected": 2, "path": "$"}
    return {**line, "outcome": "failed", "failures": [failure], "transcript": ["POST /x -> 200 {}"]}


def make_shards(reports: dict[str, Path], count: int, out: Path) -> list[Path]:
    """`count` shard folders: implementation i x suite, each a copy of the suite's reference report."""
    rng = random.Random(20260528)
    suites = sorted(reports)
    folders = []
    for n in range(count):
        impl, suite = f"impl-{n // len(suites):03d}", suites[n % len(suites)]
        lines = [json.loads(x) for x in reports[suite].read_text("utf-8").splitlines() if x]
        folder = out / f"{n:04d}-{impl}-{suite}"
        (folder / "report").mkdir(parents=True)
        (folder / "report" / "report.jsonl").write_text(
            "\n".join(json.dumps(_spoil(x, rng)) for x in lines) + "\n", "utf-8")
        meta = {"shard": n, "implementation": impl, "suite": suite, "seed": lines[0]["seed"], "status": "ran",
                "implementation_entry": {"id": impl, "name": impl, "independent_of": []},
                "suite_version": get_suite(suite).version}
        (folder / "shard.json").write_text(json.dumps(meta), "utf-8")
        folders.append(folder)
    return folders


def combine_and_render(folders: list[Path], out: Path) -> dict[str, Any]:
    from memconform.matrix.badges import write_badges
    from memconform.matrix.combine import combine, read_all
    from memconform.matrix.render_html import render_html
    from memconform.matrix.render_md import render_markdown

    doc = combine(read_all(folders))
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.md").write_text(render_markdown(doc), "utf-8")
    (out / "matrix.html").write_text(render_html(doc), "utf-8")
    write_badges(doc, out / "badges")
    return doc


def bench_combine(count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="memconform-bench-matrix-") as tmp:
        folder = Path(tmp)
        folders = make_shards(reference_reports(folder / "refs"), count, folder / "shards")
        lines = sum(len((f / "report" / "report.jsonl").read_text("utf-8").splitlines()) for f in folders)
        seconds = best(lambda: combine_and_render(folders, folder / "matrix"), repeat)
        peak = _child_peak(folder / "shards")
        doc = json.loads(json.dumps(combine_and_render(folders, folder / "matrix")))
        print(f"combine {count} shard reports ({lines} report lines, {len(doc['implementations'])} implementations, "
              f"{len(doc['sentences'])} sentences: {doc['counts']}): {seconds:.2f} s best of {repeat}, "
              f"peak RSS of a fresh process {peak:.0f} MB")


def _child_peak(shards: Path) -> float:
    code = ("import resource, sys; from pathlib import Path; sys.path.insert(0, sys.argv[2]);"
            "from bench_matrix import combine_and_render;"
            "combine_and_render(sorted(Path(sys.argv[1]).iterdir()), Path(sys.argv[1]).parent / 'm2');"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, str(shards), str(Path(__file__).parent)], capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1]) / 1024


def bench_pool(suites: list[str], jobs: int) -> None:
    selection = [a for s in suites for a in ("--suite", s)]
    walls = {}
    with tempfile.TemporaryDirectory(prefix="memconform-bench-pool-") as tmp:
        for j in (1, jobs):
            out = Path(tmp) / f"jobs{j}"
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "memconform.cli.main", "matrix", "run", "--all", "--ci-only",
                                   "--jobs", str(j), "--out", str(out), *selection], cwd=ROOT, capture_output=True,
                                  text=True, timeout=7200)
            walls[j] = time.perf_counter() - started
            print(f"matrix run --all --jobs {j}: {walls[j]:.1f} s wall (exit {done.returncode})")
            print("  " + (done.stdout.strip().splitlines() or ["(no output)"])[-2])
            shutil.rmtree(out, ignore_errors=True)
    print(f"serial / pool wall ratio with --jobs {jobs}: {walls[1] / walls[jobs]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-pool", action="store_true")
    parser.add_argument("--pool-suite", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bench_combine(args.shards, args.repeat)
    if not args.skip_pool:
        bench_pool(args.pool_suite, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
