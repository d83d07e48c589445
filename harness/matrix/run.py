"""Run shards: each one an ordinary `memconform run` in a process of its own, in a folder of its own.

A shard folder holds `shard.json` (the shard, the registry entry, how it went) and `report/` (the
ordinary report of the run). Nothing is shared between shards: each starts its own target instance
on its own port with its own working folder, so shards can run on any machine and be combined by file.

Each shard has its own run budget (`--run-budget`, else the profile's), counted by its own run. Shards
run side by side share the machine, so a shard that ran out of its budget there (a check not run, or cut
short by a budget) is run again alone once the pool is done, with no other shard running: a shard never
starves another. What the second run still could not assess stays not assessed, saying why.

Everything a shard records or prints from a start-up error or an implementation's log is redacted with
that shard's key.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.redact import Redactor
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
    run_budget_s: float | None = None  # each shard's own; None: the profile's


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
        record.update(_run(shard, impl, folder, settings))
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
    redactor = Redactor([slot.key] if slot.key else [])
    env = environment(impl, slot)
    try:
        with started(impl, slot, env):
            key = read_api_key(impl, slot)
            if key is not None:
                redactor.add(key)
                env["MEMCONFORM_API_KEY"] = key  # by environment, never argv; the report redacts it
            argv = _argv(shard, impl, folder, settings, slot)
            code = _run_memconform(argv, workdir, env, folder / "run.log")
    except HarnessError as exc:  # a start-up error quotes the implementation's log: its key is masked
        if impl.api_key_from and slot.key is None:  # a key it wrote before failing: learned, to be masked too
            with contextlib.suppress(HarnessError):
                redactor.add(read_api_key(impl, slot))
        return {"status": "errored", "reason": redactor.text(str(exc))}
    finally:  # the implementation wrote its own log: the shard's key is masked there too, once it has stopped
        redact_file(workdir / "implementation.log", redactor)
    if code is None:
        return {"status": "errored", "reason": f"memconform run did not finish within {RUN_TIMEOUT_S} s"}
    report = folder / "report" / "report.jsonl"
    if not report.is_file():
        return {"status": "errored", "exit_code": code,
                "reason": redactor.text(f"memconform run wrote no report (exit {code}): {_tail(folder / 'run.log')}")}
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
    if settings.run_budget_s is not None:
        argv += ["--run-budget", repr(settings.run_budget_s)]
    for option in (*impl.options, *settings.extra_options):
        argv += ["--option", impl.expand(option, slot)]
    for check in settings.checks:
        argv += ["--check", check]
    return argv


MAX_LOG_BYTES = 64 << 20


def redact_file(path: Path, redactor: Redactor) -> None:
    """Mask the shard's key in a log the implementation wrote (a larger log is cut to its last MAX_LOG_BYTES)."""
    if not redactor.secrets or not path.is_file() or path.is_symlink():
        return
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - MAX_LOG_BYTES))
            data = fh.read(MAX_LOG_BYTES)
        path.write_bytes(redactor.binary(data))
    except OSError:
        path.unlink(missing_ok=True)  # a log that cannot be masked is not kept


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

    from .text import visible

    def one(pair: tuple[Shard, Path], note: str = "") -> Path:
        shard, folder = pair
        record = run_shard(shard, entries[shard.implementation], folder, settings)
        if note:
            record["rerun"] = note
            (folder / SHARD_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
        why = f" ({record['reason']})" if record.get("reason") else ""
        say(visible(f"shard {shard.index} {shard.implementation} {shard.suite} seed {shard.seed}: "
                    f"{record['status']} in {record['seconds']} s{why}{' ' + note if note else ''}"))
        return folder

    workers = bounded_jobs(jobs)
    if workers == 1:
        return [one(p) for p in zip(shards, folders, strict=True)]
    with ThreadPoolExecutor(max_workers=workers) as pool:  # each worker drives its own processes
        done = list(pool.map(one, zip(shards, folders, strict=True)))
    for shard, folder in zip(shards, done, strict=True):  # the pool is drained: each of these runs alone
        cut = budget_cut_lines(folder / "report" / "report.jsonl")
        if cut:
            shutil.rmtree(folder)  # nothing of the first run (its implementation's state included) carries over
            one((shard, folder), f"(run again alone: {cut} checks ran out of budget beside {workers - 1} other shards)")
    return done


def budget_cut_lines(report: Path) -> int:
    """How many result lines of a shard's own report a spent budget decided (not run, or cut short)."""
    from .outcomes import budget_cut

    try:
        with report.open("rb") as fh:
            lines = fh.read(256 << 20).split(b"\n")
    except OSError:
        return 0
    count = 0
    for raw in lines:
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("type") == "result" and line.get("outcome") in ("failed", "errored") \
                and (budget_cut(line) or str(line.get("reason", "")).startswith("not run")):
            count += 1
    return count
