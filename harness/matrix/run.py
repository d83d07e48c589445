"""Run shards: each one an ordinary `memconform run` in a process of its own, in a folder of its own.

A shard folder holds `shard.json` (the shard, the registry entry, how it went) and `report/` (the
ordinary report of the run). Nothing is shared between shards: each starts its own target instance
on its own port with its own working folder, so shards can run on any machine and be combined by file.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.results import HarnessError
from ..core.suite import get_suite
from .launch import RUNNING, environment, free_port, read_api_key, started, stop
from .plan import Shard
from .registry import Implementation, Slot

SHARD_FILE = "shard.json"
RUN_TIMEOUT_S = 2400  # above memconform run's own default run deadline (1800 s), so its report completes
MEMORY_PER_SHARD_MB = 400  # a run, its target process and the target's children, measured loosely


@dataclass
class RunSettings:
    profile: str = "ci"
    checks: tuple[str, ...] = ()
    extra_options: tuple[str, ...] = ()


def shard_folder(out: Path, shard: Shard) -> Path:
    return out / f"{shard.index:04d}-{shard.implementation}-{shard.suite}-{shard.seed}"


def run_shard(shard: Shard, impl: Implementation, folder: Path, settings: RunSettings) -> dict[str, Any]:
    """Run one shard into `folder`; its shard.json record (status ran, skipped or errored, with the reason)."""
    folder = folder.resolve()  # the run's own working folder is the shard's: a relative path would point inside it
    folder.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {**shard.to_json(), "implementation_entry": impl.to_json(),
                              "harness_version": __version__, "suite_version": _suite_version(shard.suite),
                              "profile": settings.profile}
    started_at = time.monotonic()
    reason = impl.skip_reason() if record["suite_version"] is not None else f"suite {shard.suite!r} is not installed here"
    if reason is not None:
        record.update(status="skipped", reason=reason)
    else:
        try:
            record.update(_run(shard, impl, folder, settings))
        except HarnessError as exc:
            record.update(status="errored", reason=str(exc))
    record["seconds"] = round(time.monotonic() - started_at, 2)
    (folder / SHARD_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return record


def _suite_version(name: str) -> str | None:
    try:
        return get_suite(name).version
    except HarnessError:
        return None


def _run(shard: Shard, impl: Implementation, folder: Path, settings: RunSettings) -> dict[str, Any]:
    workdir = folder / "work"
    workdir.mkdir(parents=True, exist_ok=True)
    slot = Slot(workdir, free_port() if impl.needs_port() else None,
                secrets.token_urlsafe(24) if impl.needs_key() else None)
    env = environment(impl, slot)
    with started(impl, slot, env):
        key = read_api_key(impl, slot)
        if key is not None:
            env["MEMCONFORM_API_KEY"] = key  # by environment, never argv; the report redacts it
        argv = _argv(shard, impl, folder, settings, slot)
        code = _run_memconform(argv, workdir, env, folder / "run.log")
    if code is None:
        return {"status": "errored", "reason": f"memconform run did not finish within {RUN_TIMEOUT_S} s"}
    report = folder / "report" / "report.jsonl"
    if not report.is_file():
        return {"status": "errored", "exit_code": code,
                "reason": f"memconform run wrote no report (exit {code}): {_tail(folder / 'run.log')}"}
    return {"status": "ran", "exit_code": code}


def _run_memconform(argv: list[str], workdir: Path, env: dict[str, str], log_path: Path) -> int | None:
    """The run's exit code, or None when it outlived RUN_TIMEOUT_S (then it is stopped)."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        RUNNING.add(proc)
        try:
            return proc.wait(RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None
        finally:
            stop(proc)
            RUNNING.discard(proc)


def _argv(shard: Shard, impl: Implementation, folder: Path, settings: RunSettings, slot: Slot) -> list[str]:
    argv = [sys.executable, "-m", "memconform.cli.main", "run", "--suite", shard.suite,
            "--target", impl.expand(impl.target, slot), "--profile", settings.profile,
            "--seed", str(shard.seed), "--report-dir", str(folder / "report")]
    for option in (*impl.options, *settings.extra_options):
        argv += ["--option", impl.expand(option, slot)]
    for check in settings.checks:
        argv += ["--check", check]
    return argv


def _tail(path: Path, limit: int = 800) -> str:
    try:
        return path.read_bytes()[-limit:].decode("utf-8", "replace").strip()
    except OSError:
        return "(no output)"


def bounded_jobs(requested: int) -> int:
    """`--jobs`, lowered so the shards running at once fit in the memory available now."""
    available = _available_mb()
    by_memory = max(1, available // MEMORY_PER_SHARD_MB) if available else requested
    return max(1, min(requested, by_memory))


def _available_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def run_shards(shards: list[Shard], entries: dict[str, Implementation], out: Path, settings: RunSettings,
               jobs: int = 1, say: Any = print) -> list[Path]:
    """Every shard, at most `jobs` at a time; the shard folders, in plan order."""
    folders = [shard_folder(out, s) for s in shards]

    def one(pair: tuple[Shard, Path]) -> Path:
        shard, folder = pair
        record = run_shard(shard, entries[shard.implementation], folder, settings)
        note = f" ({record['reason']})" if record.get("reason") else ""
        say(f"shard {shard.index} {shard.implementation} {shard.suite} seed {shard.seed}: "
            f"{record['status']} in {record['seconds']} s{note}")
        return folder

    workers = bounded_jobs(jobs)
    if workers == 1:
        return [one(p) for p in zip(shards, folders, strict=True)]
    with ThreadPoolExecutor(max_workers=workers) as pool:  # each worker drives its own processes
        return list(pool.map(one, zip(shards, folders, strict=True)))
