"""One table of `memconform validate` beside its floors, rerunnable (issue 33). Figures go into
closing notes; unit tests never time things.

    python bench/table.py            the quick set (the issue's sizes)      tox -e bench
    python bench/table.py --large    the 10x set                            tox -e bench-large
    python bench/table.py --pairs 5 --out bench-table.md

Each row runs `memconform validate FILE` and an anchor on the same file (a rule-including floor in
bench/floors/, the straightforward Python checking the same rules; ajv + ajv-formats on node where
node and npm are present; memorizz's own validate_archive given an interpreter that has it) as alternated pairs, each in a fresh process: CPU seconds (user + system of
the process, so a busy machine slows it less than wall time) as min / median / max, the ratio of the
medians, the peak RSS of each side, and the 1-minute load average seen around the row's runs. A row
that cannot run says why (skipped). Generated inputs are deterministic (the bench_<format>.py makers).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOORS = HERE / "floors"
NODE_PACKAGES = ("ajv@8", "ajv-formats@3")
NODE_CACHE = Path(os.environ.get("MEMCONFORM_BENCH_NODE", Path.home() / ".cache" / "memconform-bench" / "node"))


@dataclass
class Run:
    cpu_s: float
    peak_mib: float
    load: float
    code: int


@dataclass
class Row:
    work: str
    size: str
    ours: list[Run] = field(default_factory=list)
    anchor_name: str = ""
    anchor: list[Run] = field(default_factory=list)
    skipped: str = ""


GNU_TIME = shutil.which("time") if Path("/usr/bin/time").exists() else None


def measured(argv: list[str], env: dict[str, str] | None = None) -> Run:
    """One run in a fresh process: its CPU seconds and peak RSS, the load average as it starts. Through
    GNU time where it is installed: a process this script forks directly inherits this script's own
    peak in its counters (Linux keeps the larger across exec), so the figures come from time's child."""
    load = os.getloadavg()[0]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        wrapped = [GNU_TIME, "-f", "%e %U %S %M", "-o", out.name, *argv] if GNU_TIME else argv
        proc = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        if GNU_TIME:
            fields = out.read().split()[-4:]
            cpu, peak = float(fields[1]) + float(fields[2]), float(fields[3]) / 1024
        else:
            cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    if code not in (0, 1):
        raise RuntimeError(f"{argv[:3]} exited {code}: {stderr[-500:]}")
    return Run(cpu, peak, load, code)


def pairs(row: Row, ours: list[str], anchor: list[str], n: int, env: dict[str, str] | None = None) -> None:
    """Alternate the two commands n times (ours first, then the anchor, then ours ...)."""
    for i in range(n):
        first, second = (ours, anchor) if i % 2 == 0 else (anchor, ours)
        for argv in (first, second):
            run = measured(argv, env if argv is anchor else None)
            (row.ours if argv is ours else row.anchor).append(run)
    if any(r.code for r in row.ours):
        raise RuntimeError(f"{row.work}: memconform validate found the generated input invalid")


def bytecode_cached() -> None:
    """Compile memconform's modules to bytecode before anything is timed, as `pip install` does: with
    PYTHONDONTWRITEBYTECODE set (CI, some shells) an editable install would otherwise compile ~130 modules
    in every fresh process, half the CPU of a small `validate` (0.19 s against 0.09 s, load ~9)."""
    import compileall

    import memconform

    compileall.compile_dir(str(Path(memconform.__file__).parent), quiet=1)


def validate(path: Path, *extra: str) -> list[str]:
    # --max-bytes: the 10x files pass validate's default bound of 256 MiB
    return [sys.executable, "-m", "memconform", "validate", "--max-bytes", str(1 << 34), str(path), *extra]


def node_ready() -> tuple[dict[str, str] | None, str]:
    """(an environment whose NODE_PATH holds ajv and ajv-formats, "") or (None, why not)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return None, "node or npm is not on PATH"
    modules = NODE_CACHE / "node_modules"
    if not (modules / "ajv").is_dir() or not (modules / "ajv-formats").is_dir():
        NODE_CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", str(NODE_CACHE), "--no-audit", "--no-fund", *NODE_PACKAGES],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return None, f"npm install {' '.join(NODE_PACKAGES)} failed: {done.stderr.strip()[-200:]}"
    return {**os.environ, "NODE_PATH": str(modules)}, ""


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def rows_for(scale: float, folder: Path, n: int, only: list[str] | None = None,
             memorizz_python: str | None = None) -> list[Row]:
    sys.path.insert(0, str(HERE))
    from bench_amps import make_export
    from bench_emp import write_file
    from bench_memorizz import make_archive
    from bench_memoryai import make_bundle
    from memconform.kit.fixtures_loader import fixture_root

    schema = str(fixture_root() / "amps" / "schema.json")
    out: list[Row] = []

    def row(work: str, size: str, make: Callable[[], Path], anchor_name: str, anchor: Callable[[Path], list[str]],
            env: dict[str, str] | None = None, skipped: str = "", extra: tuple[str, ...] = ()) -> None:
        if only and not any(word.lower() in f"{work} {anchor_name}".lower() for word in only):
            return
        r = Row(work, size, anchor_name=anchor_name, skipped=skipped)
        out.append(r)
        if skipped:
            print(f"{work} {size}: skipped ({skipped})", flush=True)
            return
        path = make()
        r.size = f"{size}, {path.stat().st_size / 1e6:.0f} MB"
        print(f"{work} {r.size}: {n} pairs against {anchor_name} ...", flush=True)
        try:
            pairs(r, validate(path, *extra), anchor(path), n, env)
        except (RuntimeError, OSError) as exc:  # one row that cannot run is said, the table goes on
            r.skipped, r.ours, r.anchor = " ".join(f"could not run: {exc}".split())[:300], [], []

    chunks = int(10_000 * scale)
    row("MemoryAI validate", f"{chunks} x 384", lambda: write_json(folder / "bundle.json", make_bundle(chunks, 384)),
        "rule-including floor (orjson)", lambda p: [sys.executable, str(FLOORS / "memoryai_floor.py"), str(p)])
    atoms = int(100_000 * scale)
    amps_path = folder / "amps.json"
    amps_file: Callable[[], Path] = lambda: amps_path if amps_path.exists() else write_json(  # noqa: E731
        amps_path, make_export(atoms, max(1, atoms // 10)))
    row("AMPS validate", f"{atoms} atoms", amps_file,
        "rule-including floor (jsonschema-rs)", lambda p: [sys.executable, str(FLOORS / "amps_floor.py"), str(p), schema])
    env, why = node_ready()
    row("AMPS validate", f"{atoms} atoms", amps_file,
        "ajv 8 + ajv-formats (node)", lambda p: ["node", str(FLOORS / "amps_ajv.mjs"), str(p), schema],
        env=env, skipped=why)
    lines = int(1_000_000 * scale)

    def emp_file() -> Path:
        write_file(folder / "memory.jsonl", lines, max(1, lines // 5))
        return folder / "memory.jsonl"

    row("EMP validate", f"{lines} lines", emp_file, "rule-including floor (orjson per line)",
        lambda p: [sys.executable, str(FLOORS / "emp_floor.py"), str(p)])
    records = int(100_000 * scale)
    archive_path = folder / "archive.memorizz.json"
    archive_file: Callable[[], Path] = lambda: archive_path if archive_path.exists() else write_json(  # noqa: E731
        archive_path, make_archive(records, special_floats=False))
    # past the spec's default limits (50 MiB, 100,000 records) at 10x: the configured ones
    limits = ("--option", "memorizz.max_bytes=1GiB", "--option", "memorizz.max_records=1000000")
    row("MemoRizz validate", f"{records} records", archive_file, "rule-including floor (orjson)",
        lambda p: [sys.executable, str(FLOORS / "memorizz_floor.py"), str(p)], extra=limits)
    row("MemoRizz validate", f"{records} records", archive_file, "memorizz validate_archive",
        lambda p: [str(memorizz_python), str(FLOORS / "memorizz_validate_archive.py"), str(p)], extra=limits,
        skipped="" if memorizz_python else "no interpreter with memorizz given (--memorizz-python)")
    if only and not any(word.lower() in "start-up" for word in only):
        return out
    tiny = write_json(folder / "tiny.memoryai.json", make_bundle(1, 4))
    start = Row("start-up of validate", "a 1-chunk bundle", anchor_name="a bare interpreter")
    print("start-up: ...", flush=True)
    pairs(start, validate(tiny), [sys.executable, "-c", "pass"], max(n, 5))
    out.append(start)
    for flag in ("--version", "--help"):
        quick = Row(f"start-up of {flag}", "", anchor_name="a bare interpreter")
        pairs(quick, [sys.executable, "-m", "memconform", flag], [sys.executable, "-c", "pass"], max(n, 5))
        out.append(quick)
    return out


def spread(runs: list[Run], what: Callable[[Run], float]) -> str:
    values = sorted(map(what, runs))
    return f"{values[0]:.3f} / {statistics.median(values):.3f} / {values[-1]:.3f}"


def table(rows: list[Row], n: int) -> str:
    head = ("| work | size | memconform CPU s (min / median / max) | anchor | anchor CPU s (min / median / max) "
            "| ratio of medians | peak MiB (memconform / anchor) | load average (1 min) |\n"
            "|---|---|---|---|---|---|---|---|\n")
    body = []
    for r in rows:
        if r.skipped:
            body.append(f"| {r.work} | {r.size} | | {r.anchor_name} | skipped: {r.skipped} | | | |")
            continue
        ratio = statistics.median(x.cpu_s for x in r.ours) / statistics.median(x.cpu_s for x in r.anchor)
        loads = [x.load for x in r.ours + r.anchor]
        body.append(f"| {r.work} | {r.size} | {spread(r.ours, lambda x: x.cpu_s)} | {r.anchor_name} | "
                    f"{spread(r.anchor, lambda x: x.cpu_s)} | {ratio:.2f}x | {max(x.peak_mib for x in r.ours):.0f} / "
                    f"{max(x.peak_mib for x in r.anchor):.0f} | {min(loads):.1f}-{max(loads):.1f} |")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (f"{n} alternated pairs per row, {when}, {os.cpu_count()} cores, Python {sys.version.split()[0]}\n\n"
            + head + "\n".join(body) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--large", action="store_true", help="the 10x set")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--scale", type=float, help="sizes times this (1: the quick set, 10: --large)")
    ap.add_argument("--only", action="append", help="rows whose work or anchor holds this word (repeatable)")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    ap.add_argument("--memorizz-python", help="an interpreter with memorizz installed, for its validate_archive "
                    "(memorizz is never a dependency of memconform)")
    args = ap.parse_args()
    bytecode_cached()
    with tempfile.TemporaryDirectory(prefix="memconform-bench-") as tmp:
        scale = args.scale or (10.0 if args.large else 1.0)
        text = table(rows_for(scale, Path(tmp), args.pairs, args.only, args.memorizz_python), args.pairs)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
