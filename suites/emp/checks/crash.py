"""Crash injection: a writer process whose write is cut short at a chosen byte, during an append, an
update and a delete.

Only for targets that run each operation as a process of their own (`cmd:`, on Linux): the harness
finds the process the call started (a descendant of the harness whose input file names this check's
folder), stops it (SIGSTOP) before it has touched the folder, lowers its file-size limit
(RLIMIT_FSIZE) to a chosen byte, and lets it go on. A write past that byte fails, as it would on a
full disk, or kills the process (SIGXFSZ) as a crash would: either way the write stops at exactly
that byte, whatever the machine's speed, so no timing decides a verdict. Two cuts per operation:
halfway through the file as it was (a rewrite in place loses other apps' lines there; a temporary
file renamed into place, or an append, loses nothing) and 40 bytes past its end (a torn last line).
Whatever the cut, every other app's line is still in the file byte for byte and in order, and every
line but a torn last one is readable; after the stale lock (if any) is cleared, the target appends
and reads again. Counts are Jepsen-style (memconform.core.history_counts): the lines written before the
cut are acknowledged; other apps' lines and entries gone are lost, unreadable lines before the last
are corrupted.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, SkipCheck, TargetError
from memconform.suites.emp import format as emp
from memconform.suites.emp import model
from memconform.suites.emp.checks.common import (
    OTHER,
    append,
    call,
    entry,
    new_file,
    offers_update,
    read_bytes,
    target_view,
    written_id,
)
from memconform.suites.emp.checks.locking import Pending, let_go
from memconform.suites.emp.checks.writing import foreign_lines, in_order
from memconform.suites.emp.suite import SUITE

try:
    import resource  # Unix only; the check is not applicable without prlimit
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

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
    out: set[int] = set()
    frontier = {pid}
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


def state_of(pid: int) -> str:
    """The process's state letter from /proc (T: stopped), or "" once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return ""


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            continue


def folder_state(folder: str) -> tuple[list[str], bytes]:
    return sorted(os.listdir(folder)), read_bytes(os.path.join(folder, emp.FILE_NAME))


def stop_before_writing(pending: Pending, folder: str, known: set[int]) -> list[int]:
    """Stop (SIGSTOP) every process of the call, once they are found, and keep looking until no new one
    appears (a wrapper may start the writer just then). [] if the call ended first."""
    name = os.fsencode(folder)
    stopped: list[int] = []
    quiet, deadline = 0, time.monotonic() + 10
    while not pending.done() and time.monotonic() < deadline and quiet < 3:
        found = [p for p in children_of(os.getpid()) - known - set(stopped) if names_folder(p, name)]
        if found:
            signal_all(found, signal.SIGSTOP)
            stopped += found
            quiet = 0
        elif stopped:
            quiet += 1
        else:
            time.sleep(0.001)
    for pid in stopped:  # SIGSTOP is delivered asynchronously: wait until each one is stopped (or gone)
        while state_of(pid) not in ("T", "t", "", "Z", "X") and time.monotonic() < deadline:
            time.sleep(0.001)
    return stopped


def cut_short(ctx: CheckContext, op: str, body: dict[str, Any], limit: int) -> str:
    """Run op with its writes cut at `limit` bytes of file size. "cut" when the limit was in place
    before the process touched the folder; "early" when it wrote (or ended) before it could be stopped."""
    folder = os.path.dirname(body["path"])
    before, known = folder_state(folder), children_of(os.getpid())
    pending = Pending(ctx, op, body)
    stopped = stop_before_writing(pending, folder, known)
    try:
        clean = bool(stopped) and folder_state(folder) == before
        if clean:
            for pid in stopped:
                try:
                    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, limit))
                except ProcessLookupError:
                    continue
    finally:
        signal_all(stopped, signal.SIGCONT)
    try:
        pending.result(ctx.profile.limits.call_deadline_s + 5)
    except TargetError:
        pass  # the write failed, or SIGXFSZ ended the process: what the cut is for
    return "cut" if clean else "early"


CUT_PAST_END = 40  # bytes of a new last line written before the cut


def crash_file(ctx: CheckContext) -> tuple[dict[str, Any], list[bytes], str]:
    """A victim entry, then other apps' lines (with one long one, so that half the file is more than any
    lock file an app writes): the file the cut operations work on."""
    victim = entry(ctx, "victim")
    foreign = [json.dumps(entry(ctx, "long", content=ctx.unique("x") * 64)).encode(), *foreign_lines(ctx)]
    return victim, foreign, new_file(ctx, [victim, *foreign])


def cut_body(ctx: CheckContext, op: str, path: str, victim: dict[str, Any]) -> dict[str, Any]:
    if op == "append":
        return {"path": path, "entry": entry(ctx, "cut")}
    if op == "update":
        return {"path": path, "id": victim["id"], "entry": {"content": ctx.unique("cut-update")}}
    return {"path": path, "id": victim["id"]}


@SUITE.check(level="writer", section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def writer_killed_mid_write(ctx: CheckContext) -> Iterator[Failure]:
    """A write cut short at a chosen byte (a crash, a full disk) during an append, an update and a
    delete costs at most a torn last line: a rewrite made in place, not through a temporary file
    renamed into place, loses other apps' lines (errata E7)."""
    if getattr(ctx.target, "kind", "") != "cmd" or not os.path.isdir("/proc") or not hasattr(resource, "prlimit"):
        raise SkipCheck("crash injection needs a target that runs each operation as its own process (cmd:) "
                        "on a system with /proc and prlimit (Linux)", not_applicable=True)
    append(ctx, new_file(ctx), entry(ctx, "control"))  # the positive control: an uncut append works
    ops = ("append", "update", "delete") if offers_update(ctx) else ("append", "delete")
    cuts, lost, corrupted, acknowledged = 0, 0, 0, 0
    for op in ops:
        for where in ("halfway through the file", f"{CUT_PAST_END} bytes past its end"):
            for _attempt in range(3):  # the process wrote before it could be stopped: a fresh file, again
                victim, foreign, path = crash_file(ctx)
                size = os.path.getsize(path)
                limit = size // 2 if where.startswith("halfway") else size + CUT_PAST_END
                cut = cut_body(ctx, op, path, victim)
                if cut_short(ctx, op, cut, limit) == "cut":
                    break
                ctx.note(f"{op}: the process touched the file before it could be stopped; again on a fresh file")
            else:
                ctx.note(f"{op}, cut {where}: never stopped in time; not assessed")
                continue
            after = read_bytes(path)
            if len(after) > max(limit, size):
                ctx.note(f"{op}, cut {where}: the file grew past the cut ({len(after)} > {limit} bytes): another "
                         "process wrote it; not assessed")
                continue
            cuts += 1
            acknowledged += len(foreign) + 1  # other apps' lines and the victim, all written before the cut
            lines = [raw for raw in after.split(b"\n") if raw.strip()]
            missing = in_order(foreign, after.split(b"\n"))
            bad = [raw for raw in lines[:-1] if not emp.readable(emp.parse_line(emp.decode(raw))) and raw not in foreign]
            lost, corrupted = lost + len(missing), corrupted + len(bad)
            ctx.note(f"{op}: cut at byte {limit} ({where}); file {size} -> {len(after)} bytes; "
                     f"{len(missing)} foreign lines lost, {len(bad)} lines corrupted")
            if missing:
                yield Failure(f"a write cut short during {op} lost other apps' lines", f"{len(missing)} of {len(foreign)} lost",
                              "every other app's line kept: write a temporary file and rename it into place",
                              f"cut at byte {limit} ({where})", detail=f"file {size} -> {len(after)} bytes")
            if bad:
                yield Failure(f"a write cut short during {op} left corrupt lines before the last", bad[:2],
                              "only a torn last line", f"cut at byte {limit} ({where})")
            yield from after_the_cut(ctx, op, path, victim, cut, missing)
    ctx.note(f"cuts={cuts} lost={lost} corrupted={corrupted}")
    history_counts.record(ctx, history_counts.counts(acknowledged=acknowledged, lost=lost, corrupted=corrupted))
    if not cuts:
        raise Inconclusive("no write could be cut: every operation touched the file before it could be stopped")


def after_the_cut(ctx: CheckContext, op: str, path: str, victim: dict[str, Any], cut: dict[str, Any],
                  missing: list[int]) -> Iterator[Failure]:
    """The next app goes on: a leftover lock cleared (what the stale rule, errata E2, does without the
    wait), the next append works, and the target's view is one the model allows (suites/emp/model.py):
    the file as it was before the cut write, or as that write would have left it, and the next append
    in it (entries compared by content: a writer may stamp its own ts). Other apps' lines are judged above."""
    let_go(path + emp.LOCK_SUFFIX)
    following = entry(ctx, "after-cut")
    reply = call(ctx, "append", {"path": path, "entry": following})
    if not reply.ok:
        yield Failure(f"after a write was cut short during {op}, the next append was refused", reply.raw[:200], "appended")
        return
    seen = target_view(ctx, path)
    if seen is None or missing:
        return
    answers = cut_answers(op, victim, cut, dict(following, id=written_id(ctx, reply, following)))
    maybe = {str(cut["entry"].get("content"))} if op == "append" else set()  # a cut append under an id the writer picked
    mine = [e for e in seen if isinstance(e, dict) and (e.get("id") in answers or e.get("content") in maybe)]
    problems = model.view_problems([e for e in mine if e.get("id") in answers], answers,
                                       same=lambda a, b: a.get("content") == b.get("content"))
    if problems:
        yield Failure(f"after a write was cut short during {op}, the view is neither the file before it nor after it",
                      problems[:4], "the model's view of the file before or after the cut write, with the next append")


def cut_answers(op: str, victim: dict[str, Any], cut: dict[str, Any], following: dict[str, Any]) -> dict[str, Any]:
    """The model's answers after a cut write and the next append: the victim's file before the write, or
    after it (an append of the cut entry, the victim updated, or the victim deleted in any form)."""
    before = model.File().append(victim)
    fields = cut.get("entry", {})
    entry_id = str(fields.get("id")) if op == "append" else str(victim["id"])
    afters = model.write_results(before, op, entry_id, fields, victim["ts"] + 1, OTHER)
    return model.any_of(f.append(following) for f in (before, *afters))
