"""Crash injection: a writer process killed at random points of an append and of a delete.

Only for targets that run each operation as a process of their own (`cmd:`): the harness finds the
process the call started (a descendant of the harness whose input file names this check's folder),
lets it run for a random part of one uncontended operation, and kills it. Whatever the point, every
other app's line is still in the file byte for byte and in order, and every line but a torn last one
is readable; after the stale lock (if any) is cleared, the target appends and reads again.
Counts are Jepsen-style (memconform.core.jepsen): the lines written before the kill are acknowledged;
other apps' lines and entries gone are lost, unreadable lines before the last are corrupted.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator
from typing import Any

from memconform.core import jepsen
from memconform.core.model import Failure, Inconclusive, SkipCheck, TargetError
from memconform.formats import emp

from .common import append, by_id, call, entry, new_file, read_bytes, target_view, writer_check
from .lock_checks import Pending
from .writer_checks import foreign_lines, in_order


def children_of(pid: int) -> set[int]:
    """Every live descendant of `pid`, from /proc."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    parents[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - out
        out |= frontier
    return out


def names_folder(pid: int, folder: bytes) -> bool:
    """Is this the process of our call? Its arguments name a small file that holds our folder's path."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().split(b"\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    for arg in args:
        path = os.path.join(cwd, os.fsdecode(arg)) if arg else ""
        try:
            if path and os.path.isfile(path) and os.path.getsize(path) < 1 << 20:
                with open(path, "rb") as fh:
                    if folder in fh.read():
                        return True
        except OSError:
            continue
    return False


def holds_file_in(pid: int, folder: bytes) -> bool:
    """Has the process a file of our folder open (the data file, the lock, a temporary file)?"""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.fsencode(os.readlink(f"/proc/{pid}/fd/{fd}")).startswith(folder + b"/"):
                return True
        except OSError:
            continue
    return False


def kill_during(ctx: Any, op: str, body: dict[str, Any], delay: float, at_open: bool) -> bool:
    """Run op and kill its process group `delay` seconds after its process is found (or, with
    at_open, after it opens a file of the folder). True if it was killed before it finished."""
    folder = os.fsencode(os.path.dirname(body["path"]))
    before = children_of(os.getpid())
    pending = Pending(ctx, op, body)
    deadline = time.monotonic() + 10
    while not pending.done() and time.monotonic() < deadline:
        # a wrapper (a shell, a supervisor) may start first: look again until one holds a file
        ours = [p for p in children_of(os.getpid()) - before if names_folder(p, folder)]
        if ours and (not at_open or any(holds_file_in(p, folder) for p in ours)):
            time.sleep(delay)
            kill_groups(ours)
            break
        time.sleep(0.001)
    try:
        pending.result(ctx.profile.limits.call_deadline_s + 5)
    except TargetError:
        return True  # the command died: killed
    return False


def kill_groups(pids: list[int]) -> None:
    """Kill the app: the process groups of its processes (never the harness's own group)."""
    own = os.getpgrp()
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != own:
                os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            continue


@writer_check(section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def writer_killed_mid_write(ctx: Any) -> Iterator[Failure]:
    if getattr(ctx.target, "kind", "") != "cmd" or not os.path.isdir("/proc"):
        raise SkipCheck("crash injection needs a target that runs each operation as its own process (cmd:) "
                        "on a system with /proc", not_applicable=True)
    timing = new_file(ctx)
    started = time.monotonic()
    append(ctx, timing, entry(ctx, "timing"))
    span = time.monotonic() - started
    rng = random.Random(ctx.profile.seed if ctx.profile.derandomize else None)
    kills, lost, corrupted, acknowledged = 0, 0, 0, 0
    # each operation twice: once at a random point of its whole life, once soon after it opens a file
    for op, at_open in (("append", False), ("delete", False), ("append", True), ("delete", True)):
        victim = entry(ctx, "victim")
        foreign = foreign_lines(ctx)
        path = new_file(ctx, [victim, *foreign])
        body = {"path": path, "entry": entry(ctx, "killed")} if op == "append" else {"path": path, "id": victim["id"]}
        delay = rng.uniform(0, 0.02) if at_open else rng.uniform(0, span)
        if not kill_during(ctx, op, body, delay, at_open):
            ctx.note(f"{op}: finished before the kill at {delay:.3f} s")
            continue
        kills += 1
        acknowledged += len(foreign) + 1  # other apps' lines and the victim, all written before the kill
        after = read_bytes(path)
        lines = [raw for raw in after.split(b"\n") if raw.strip()]
        missing = in_order(foreign, after.split(b"\n"))
        lost += len(missing)
        bad = [raw for raw in lines[:-1] if not emp.readable(emp.parse_line(emp.decode(raw))) and raw not in foreign]
        corrupted += len(bad)
        ctx.note(f"{op}: killed {delay:.3f} s in; {len(missing)} foreign lines lost, {len(bad)} lines corrupted")
        if missing:
            yield Failure(f"a writer killed during {op} lost other apps' lines", len(missing), 0,
                          f"kill {delay:.3f} s into {op}")
        if bad:
            yield Failure(f"a writer killed during {op} left corrupt lines before the last", bad[:2], "only a torn last line")
        lock = path + emp.LOCK_SUFFIX
        if os.path.exists(lock):  # what the stale rule (errata E2) would do, without waiting for it
            os.unlink(lock)
        reply = call(ctx, "append", {"path": path, "entry": entry(ctx, "after-kill")})
        if not reply.ok:
            yield Failure(f"after a writer was killed during {op}, the next append was refused", reply.raw[:200], "appended")
        seen = target_view(ctx, path)
        if seen is not None and not missing:
            want = [e for e in (victim,) if op == "append"]
            gone = [e["id"] for e in want if e["id"] not in by_id(seen)]
            lost += len(gone)
            if gone:
                yield Failure(f"after a writer was killed during {op}, the target no longer reads an entry", gone, "present")
    ctx.note(f"kills={kills} lost={lost} corrupted={corrupted}")
    jepsen.record(ctx, jepsen.counts(acknowledged=acknowledged, lost=lost, corrupted=corrupted))
    if not kills:
        raise Inconclusive("every operation finished before the harness could kill it")
