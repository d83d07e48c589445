"""Two installations of memconform on the same files, whole process, alternated pairs (as bench_cli.py).

    python bench/bench_versions.py --before OLD_MEMCONFORM [--after NEW_MEMCONFORM] [--runs 7]
                                   [--only amps,memorizz] [--keep DIR]

A = `memconform validate FILE` of the installation under test (--after, default: this interpreter's),
B = the same with --before (e.g. an older checkout's venv). A/B below 1 means the new one is faster.
The machine's drift moves both commands of a pair alike, so the ratio is steadier than either figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_cli  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the memconform command to compare against")
    ap.add_argument("--after", default=str(Path(sys.executable).with_name("memconform")))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="amps,memorizz")
    ap.add_argument("--keep", type=Path, help="generate the files here (and keep them)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memconform-bench-versions-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        bench_cli.CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        bench_cli.CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for fmt in args.only.split(","):
            path = folder / bench_cli.FILE_NAMES[fmt]
            if not path.exists():
                path = bench_cli.make_in_child(fmt, folder)
            print(f"\n{fmt}: {path.name}, {path.stat().st_size / 1e6:.1f} MB")
            bench_cli.pairs(f"{fmt}: validate, after (A) vs before (B)", [args.after, "validate", str(path)],
                            [args.before, "validate", str(path)], args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
