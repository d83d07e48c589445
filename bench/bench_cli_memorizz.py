"""MemoRizz beside its floors and beside the memorizz package, whole process, as bench_cli.py measures.

    python bench/bench_cli_memorizz.py [--runs 5] [--memconform PATH] [--keep DIR] [--memorizz-python PATH]

Two archives of 100,000 records (bench_memorizz.py's generator): `plain`, whose floats orjson already
writes in the spec's form, and `special`, with floats the number rules write differently (1.0 and
1e-7 on every record). For each, pairs A B A B ... (bench_cli.pairs): A = `memconform validate FILE`,
B = the orjson floor (read + orjson parse + drop integrity + orjson's text with sorted keys + sha256;
no rule judged). On `special` the floor hashes orjson's text, which is not the canonical form
there: no correct validator can stop at it. With `--memorizz-python` (an interpreter that has the
memorizz package) each archive is also run through memorizz's own `validate_archive` after the
stdlib's json.loads (as memorizz reads a file): A = memorizz, B = memconform, so A/B says how many
times faster memconform is. Children run with a bytecode cache, as an installed copy has one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_cli  # noqa: E402

MEMORIZZ = ("import json,sys;from memorizz.memory_archive import validate_archive;"
            "validate_archive(json.loads(open(sys.argv[1],'rb').read()))")
ARCHIVES = {"plain": False, "special": True}


def make(kind: str, folder: Path) -> Path:
    from bench_memorizz import make_archive

    path = folder / f"{kind}.memorizz.json"
    if not path.exists():
        path.write_text(json.dumps(make_archive(100_000, ARCHIVES[kind]), ensure_ascii=False), "utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--memconform", default=str(Path(sys.executable).with_name("memconform")))
    ap.add_argument("--keep", type=Path, help="generate the archives here (and keep them)")
    ap.add_argument("--memorizz-python", help="an interpreter with the memorizz package (its validate_archive)")
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the children inherit it: without it they keep .pyc files
    with tempfile.TemporaryDirectory(prefix="memconform-bench-memorizz-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for kind in ARCHIVES:
            path = make(kind, folder)
            print(f"\nmemorizz {kind}: {path.name}, {path.stat().st_size / 1e6:.1f} MB")
            bench_cli.pairs(f"memorizz {kind}: memconform validate (A) vs orjson floor (B)",
                            [args.memconform, "validate", str(path)],
                            [sys.executable, "-c", bench_cli.FLOORS["memorizz"], str(path)], args.runs)
            if args.memorizz_python:
                bench_cli.pairs(f"memorizz {kind}: memorizz validate_archive (A) vs memconform validate (B)",
                                [args.memorizz_python, "-c", MEMORIZZ, str(path)],
                                [args.memconform, "validate", str(path)], args.runs)
            else:
                print("memorizz validate_archive: skipped (no --memorizz-python)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
