"""`memconform validate` as users run it, whole process, against the fastest floor a Python program reaches.

    python bench/bench_cli.py [--runs 5] [--only memoryai,amps,memorizz,emp] [--memconform PATH] [--keep DIR]
                              [--stdlib] [--node PATH]

For each format one file is generated (the other bench scripts' generators, in a child process so
this process's own peak RSS, which a child inherits as its starting figure, stays small) and two
commands run in turn, A B A B ..., each pair giving one ratio (so a machine whose speed drifts moves
both alike): A = `memconform validate FILE`, B = the floor in a fresh interpreter. Figures are CPU
seconds (user + system, from os.wait4) and peak RSS, min / median / max over the runs.

The floors (FLOORS below; what each does, no more):
  memoryai  read + orjson parse + drop manifest.checksum + orjson dumps with sorted keys + sha256.
            orjson's bytes are not quite §3.6's (floats below 1e-4 differ from Python's json), so
            this floor is a little faster than any exact canonical form.
  amps      read + orjson parse + jsonschema-rs is_valid with the schema's formats (memconform's own
            fast validator object: its format callbacks are Python).
  memorizz  read + orjson parse + drop integrity + orjson dumps with sorted keys + sha256 (orjson's
            floats, not the ECMAScript forms the spec's canonical form needs).
  emp       for each line of the file: orjson parse (a Python loop over lines).
`--stdlib` adds the same floors with the json module in place of orjson (the issue's first floors).
None of them judges a single rule, and each starts a bare interpreter (about 0.02 s) where validate
imports the harness, every suite's SuiteSpec and format, and the checks of the one suite it runs:
that start-up difference is in every ratio (the two start-up rows measure it, on a tiny file under
--format and on a small valid bundle whose format is detected).

Child interpreters get a bytecode cache in a temporary folder (PYTHONPYCACHEPREFIX), as an installed
package has its own: without it (PYTHONDONTWRITEBYTECODE) every run would compile the harness again.
AMPS is also run beside ajv 8 + ajv-formats (the spec's own validator) when node and npm are there
(`--node` names a node binary; npm installs the packages into the bench folder, outside the repo);
without them that row says so and is skipped. `--memconform` names another installation's command
(e.g. an older checkout's venv) to compare versions the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FLOORS = {
    "memoryai": "import hashlib,orjson,sys;d=orjson.loads(open(sys.argv[1],'rb').read());"
                "m=d['manifest'];m.pop('checksum',None);hashlib.sha256(orjson.dumps(d,option=orjson.OPT_SORT_KEYS))",
    "amps": "import orjson,sys;from memconform.suites.amps import format as amps;"
            "assert amps.fast_validator().is_valid(orjson.loads(open(sys.argv[1],'rb').read()))",
    "memorizz": "import hashlib,orjson,sys;d=orjson.loads(open(sys.argv[1],'rb').read());d.pop('integrity');"
                "hashlib.sha256(orjson.dumps(d,option=orjson.OPT_SORT_KEYS))",
    "emp": "import orjson,sys\nfor line in open(sys.argv[1],'rb'):\n    line.strip() and orjson.loads(line)",
}

STDLIB_FLOORS = {
    "memoryai": "import hashlib,json,sys;d=json.loads(open(sys.argv[1],'rb').read());"
                "m=d['manifest'];m.pop('checksum',None);"
                "hashlib.sha256(json.dumps(d,sort_keys=True,separators=(',',':'),ensure_ascii=False).encode())",
    "memorizz": "import hashlib,json,sys;d=json.loads(open(sys.argv[1],'rb').read());d.pop('integrity');"
                "hashlib.sha256(json.dumps(d,sort_keys=True,separators=(',',':'),ensure_ascii=False).encode())",
    "amps": "import json,sys;from memconform.suites.amps import format as amps;"
            "assert amps.fast_validator().is_valid(json.loads(open(sys.argv[1],'rb').read()))",
    "emp": "import json,sys\nfor line in open(sys.argv[1],'rb'):\n    line.strip() and json.loads(line)",
}

AJV = """
const Ajv = require("ajv/dist/2020"), addFormats = require("ajv-formats"), fs = require("fs");
const ajv = new Ajv({allErrors: false, strict: false}); addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(process.argv[2], "utf8")));
const ok = validate(JSON.parse(fs.readFileSync(process.argv[3], "utf8")));
process.exit(ok ? 0 : 1);
"""


FILE_NAMES = {"memoryai": "bundle.json", "amps": "export.json", "memorizz": "archive.memorizz.json",
              "emp": "memory.jsonl"}


def make_in_child(fmt: str, folder: Path) -> Path:
    """Generate the file in a child process: the generators build the whole document in memory."""
    subprocess.run([sys.executable, str(Path(__file__)), "--make", fmt, "--keep", str(folder)], check=True)
    return folder / FILE_NAMES[fmt]


def make(fmt: str, folder: Path) -> Path:
    if fmt == "memoryai":
        from bench_memoryai import make_bundle
        path = folder / "bundle.json"
        path.write_text(json.dumps(make_bundle(10_000, 384)), encoding="utf-8")
    elif fmt == "amps":
        from bench_amps import make_export
        path = folder / "export.json"
        path.write_text(json.dumps(make_export(100_000, 10_000), ensure_ascii=False), encoding="utf-8")
    elif fmt == "memorizz":
        from bench_memorizz import make_archive
        path = folder / "archive.memorizz.json"
        path.write_text(json.dumps(make_archive(100_000, False), ensure_ascii=False), "utf-8")
    else:
        from bench_emp import write_file
        path = folder / "memory.jsonl"
        write_file(path, 1_000_000, 50_000)
    return path


CHILD_ENV = dict(os.environ)


def write_small_valid_bundle(folder: Path) -> Path:
    """The document of a valid MemoryAI fixture (every section, 2 KB): what `validate` costs beyond
    starting when it names the format itself and passes every check (a failing file may import more)."""
    from memconform.kit.fixtures_loader import fixture_root

    case = json.loads((fixture_root() / "memoryai" / "valid" / "full_bundle_all_sections.json").read_text("utf-8"))
    path = folder / "small-valid.json"
    path.write_text(json.dumps(case["document"]), encoding="utf-8")
    return path


def run(cmd: list[str]) -> tuple[float, float, float, int]:
    """(cpu seconds, wall seconds, peak RSS MiB, exit code) of one whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def spread3(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def pairs(label: str, a: list[str], b: list[str], runs: int) -> None:
    """A and B in turn; CPU of each, and A/B pair by pair."""
    run(a), run(b)  # warm the file cache and the bytecode
    rows = [(run(a), run(b)) for _ in range(runs)]
    codes = {ra[3] for ra, _ in rows} | {rb[3] for _, rb in rows}
    if any(rb[3] != 0 for _, rb in rows):
        print(f"  WARNING: B (the floor) failed (exit codes {sorted({rb[3] for _, rb in rows})}): its figures mean nothing")
    print(f"{label}\n  A cpu s {spread([ra[0] for ra, _ in rows])}  peak MiB {spread([ra[2] for ra, _ in rows])}\n"
          f"  B cpu s {spread([rb[0] for _, rb in rows])}  peak MiB {spread([rb[2] for _, rb in rows])}\n"
          f"  A/B cpu {spread([ra[0] / rb[0] for ra, rb in rows])}  (min / median / max of {runs} pairs; exit codes {sorted(codes)})\n"
          f"  A-B cpu s {spread3([ra[0] - rb[0] for ra, rb in rows])}")


def ajv_folder(folder: Path, node: str | None) -> Path | None:
    if not (node and shutil.which("npm")):
        print("ajv 8 + ajv-formats: skipped (node or npm not found)")
        return None
    where = folder / "ajv"
    if (where / "validate.js").exists():  # a kept folder from an earlier run
        return where
    where.mkdir(exist_ok=True)
    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "ajv@8", "ajv-formats@3"],
                          cwd=where, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        print(f"ajv 8 + ajv-formats: skipped (npm install failed: {done.stderr.strip()[-300:]})")
        return None
    (where / "validate.js").write_text(AJV, encoding="utf-8")
    return where


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="memoryai,amps,memorizz,emp")
    ap.add_argument("--memconform", default=str(Path(sys.executable).with_name("memconform")))
    ap.add_argument("--keep", type=Path, help="generate the files here (and keep them) instead of a temporary folder")
    ap.add_argument("--stdlib", action="store_true", help="also the floors with the json module (the issue's first floors)")
    ap.add_argument("--node", default=shutil.which("node"), help="the node binary for the ajv row")
    ap.add_argument("--make", help=argparse.SUPPRESS)  # the child that generates one file
    args = ap.parse_args()
    if args.make:
        make(args.make, args.keep)
        return 0
    with tempfile.TemporaryDirectory(prefix="memconform-bench-cli-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        small = folder / "small.json"
        small.write_text(json.dumps({"format": "memoryai.bundle"}), encoding="utf-8")
        pairs("start-up: validate of a tiny file (A) vs an empty interpreter (B)",
              [args.memconform, "validate", "--format", "memoryai", str(small)], [sys.executable, "-c", "pass"], args.runs)
        valid = write_small_valid_bundle(folder)
        pairs("start-up: validate of a small valid bundle, format detected (A) vs an empty interpreter (B)",
              [args.memconform, "validate", str(valid)], [sys.executable, "-c", "pass"], args.runs)
        for fmt in args.only.split(","):
            path = folder / FILE_NAMES[fmt]
            if not path.exists():
                path = make_in_child(fmt, folder)
            print(f"\n{fmt}: {path.name}, {path.stat().st_size / 1e6:.1f} MB")
            pairs(f"{fmt}: memconform validate (A) vs orjson floor (B)", [args.memconform, "validate", str(path)],
                  [sys.executable, "-c", FLOORS[fmt], str(path)], args.runs)
            if args.stdlib:
                pairs(f"{fmt}: memconform validate (A) vs stdlib json floor (B)", [args.memconform, "validate", str(path)],
                      [sys.executable, "-c", STDLIB_FLOORS[fmt], str(path)], args.runs)
            if fmt == "amps" and (where := ajv_folder(folder, args.node)) is not None:
                from memconform.kit.fixtures_loader import fixture_root
                pairs("amps: memconform validate (A) vs ajv 8 + ajv-formats, node (B)",
                      [args.memconform, "validate", str(path)],
                      [args.node, str(where / "validate.js"), str(fixture_root() / "amps" / "schema.json"), str(path)],
                      args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
