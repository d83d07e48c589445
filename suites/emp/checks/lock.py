"""Writer checks of the lock file: taken around every write, waited for while another app holds it,
removed afterwards, taken over only when stale (errata E2, E5, E6, E7).

The lock file is the spec's "Recommended approach" (SHOULD); the Writer level's clause lists the
checks of it all the same, because the lock file is the only lock other apps can see (errata E5)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure, Inconclusive, SkipCheck
from memconform.suites.emp import format as emp
from memconform.suites.emp import fswatch
from memconform.suites.emp.checks.common import (
    by_id,
    call,
    control_without_bad_lines,
    despite_bad_lines,
    entry,
    new_file,
    new_folder,
    offers_update,
    read_bytes,
    written_id,
)
from memconform.suites.emp.checks.locking import (
    Pending,
    append_past_stale_lock,
    glued_alone,
    held_past_wait,
    hold_window,
    let_go,
    unlocked_writes,
    wait_while_held,
)
from memconform.suites.emp.deviations import APPEND_GLUED, FOREIGN_LOCK_REMOVED, FOREIGN_LOCK_WHAT
from memconform.suites.emp.suite import SUITE


def write_ops(ctx: CheckContext) -> tuple[str, ...]:
    """The write operations the target offers: append, update (optional) and delete."""
    return ("append", "update", "delete") if offers_update(ctx) else ("append", "delete")


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_waits_for_lock(ctx: CheckContext) -> Iterator[Failure]:
    """The harness holds memory.jsonl.lock as another app would, while the target appends, updates
    (when it offers update) and deletes; none may land (nor be acknowledged) while it is held, and
    each must land once it is released. A writer whose own wait times out may give up (a rejected
    reply) but must then not write at all (errata E6)."""
    hold = hold_window(ctx)
    for op in write_ops(ctx):
        yield from wait_while_held(ctx, op, hold)


LOCKING = "Apps must implement file locking to prevent concurrent writes from corrupting the file."


@SUITE.check(level="writer", section="Concurrency Control", keyword="MUST", sentence=LOCKING)
def writer_keeps_out_of_held_lock(ctx: CheckContext) -> Iterator[Failure]:
    """The harness holds a fresh memory.jsonl.lock as another app would while the target appends, and
    keeps holding it until the append returns (the writer's own wait is over: it gave up), for at most
    PAST_WAIT_S: the file must not change and the lock must stay as the harness left it. Writing under
    another app's lock, or breaking a lock that is not stale, is locking not implemented (errata E6)."""
    hold_window(ctx)  # the positive control: an uncontended append is acknowledged
    failures, _ = held_past_wait(ctx)
    yield from failures


RELEASE_ATTEMPTS = 6  # each with an entry twice as long: a longer write holds the lock longer


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD", sentence="Remove lock file")
def writer_release_keeps_taken_lock(ctx: CheckContext) -> Iterator[Failure]:
    """While the target appends, the harness takes its lock over the moment it appears, as another app
    would that judged it stale (the write outlived the stale limit): it renames a lock of its own over
    it. The target's release must then leave that lock alone (it is no longer the target's): removing
    it lets a third app write beside the second. The kernel's order of file events (inotify) tells
    whether the takeover came while the target still held its lock; when it came after the release, or
    between the release's reading its lock and removing it, the attempt shows nothing and is repeated
    with a longer entry (the verdict never rests on timing)."""
    for attempt in range(RELEASE_ATTEMPTS):
        outcome = take_lock_over_once(ctx, 64 * 1024 << attempt)
        if isinstance(outcome, Failure):
            yield outcome
            return
        if outcome:
            ctx.note(f"attempt {attempt + 1}: the lock was taken over while the app held it, and its release left it")
            return
    raise Inconclusive(f"in {RELEASE_ATTEMPTS} appends the app always released its lock before memconform could take it "
                       "over: what its release does with another app's lock was not seen")


def take_lock_over_once(ctx: CheckContext, content_chars: int) -> bool | Failure:
    """One append with the takeover: True (taken while held, left alone), False (the release came first:
    nothing seen), or the Failure. Inconclusive when the app took no lock at all."""
    path = new_file(ctx, [entry(ctx, "seed")])
    folder, lock = os.path.dirname(path), path + emp.LOCK_SUFFIX
    token = ctx.unique("taken-over")
    spare = os.path.join(new_folder(ctx), "taken.lock")  # same file system (the temporary folder): rename is atomic
    with open(spare, "w") as fh:
        fh.write(token)
    lock_name = os.path.basename(lock)
    try:
        watch = fswatch.FolderEvents.open(folder, also=fswatch.IN_CLOSE_NOWRITE)
    except fswatch.Unavailable as exc:
        raise SkipCheck(f"cannot observe the order of file events on this system: {exc}", not_applicable=True) from None
    with watch:
        e = entry(ctx, "released")
        e["content"] += " " + "x" * content_chars
        pending = Pending(ctx, "append", {"path": path, "entry": e})
        events: list[tuple[str, int]] = []
        deadline = time.monotonic() + ctx.profile.limits.call_deadline_s
        while not any(n == lock_name and m & fswatch.IN_CREATE for n, m in events) and time.monotonic() < deadline:
            if pending.done() and not watch.wait(0):
                break
            if watch.wait(0.05):
                events += watch.read_masks()
        took = any(n == lock_name and m & fswatch.IN_CREATE for n, m in events)
        if took:
            os.rename(spare, lock)
        reply = pending.result(ctx.profile.limits.call_deadline_s)
        events += watch.read_masks()
    kept = took and read_bytes(lock) == token.encode()
    if kept:
        let_go(lock)  # ours, unless the target removes it in the meantime
    if reply is None:
        raise Inconclusive("the append did not return within the call deadline")
    if not took:
        raise Inconclusive("the app created no memory.jsonl.lock during the append (emp.writer_locks_around_write judges "
                           "that): there was no lock of its own to take over")
    on_lock = [m for n, m in events if n == lock_name]
    ours = max(i for i, m in enumerate(on_lock) if m & fswatch.IN_MOVED_TO)
    if any(m & fswatch.IN_MOVED_TO for m in on_lock[:ours]):
        raise Inconclusive("the app renames its own lock into place: the takeover cannot be told from its lock")
    released_first = any(m & (fswatch.IN_DELETE | fswatch.IN_MOVED_FROM) for m in on_lock[:ours])
    if released_first or read_for_release_before(events, lock_name, os.path.basename(path)):
        return False
    if not kept:
        established.establish(ctx, FOREIGN_LOCK_REMOVED, FOREIGN_LOCK_WHAT)  # the same fault, when an earlier check named it
        return established.explained(ctx, Failure(
            "the app removed memory.jsonl.lock after another app had taken it over (its release did not check the lock was "
            "still its own)", "lock gone or replaced", "the other app's lock left in place", emp.FILE_NAME + emp.LOCK_SUFFIX),
            FOREIGN_LOCK_REMOVED)
    return True


def read_for_release_before(events: list[tuple[str, int]], lock_name: str, data_name: str) -> bool:
    """Whether the lock was read after the entry was written and before the takeover: a release that reads
    its lock to see it is still its own, then removes it. The takeover landed between the two, which no
    file system lets a release close (there is no remove-if-unchanged), so the attempt shows nothing."""
    written = False
    for name, mask in events:
        if name == data_name and mask & fswatch.IN_MODIFY:
            written = True
        elif name == lock_name and mask & fswatch.IN_MOVED_TO:
            return False  # the takeover, reached first
        elif name == lock_name and mask & fswatch.IN_CLOSE_NOWRITE and written:
            return True
    return False


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="Create lock file (memory.jsonl.lock) before writing")
def writer_locks_around_write(ctx: CheckContext) -> Iterator[Failure]:
    """The kernel's own record of file events (a hook no target can race) shows memory.jsonl.lock
    present at every write of memory.jsonl, by an append, an update (when offered) and a delete
    (errata E5; its removal afterwards is emp.writer_lock_removed)."""
    path = new_file(ctx, [entry(ctx, "seed")])
    try:
        watch = fswatch.FolderEvents.open(os.path.dirname(path))
    except fswatch.Unavailable as exc:
        raise SkipCheck(f"cannot observe the order of file events on this system: {exc}", not_applicable=True) from None
    e = entry(ctx, "watched")
    with watch:
        reply = call(ctx, "append", {"path": path, "entry": e})
        if not reply.ok:
            raise ControlRefused(f"append was refused: {reply.raw[:200]!r}")
        steps = [("append", watch.read())]
        written = written_id(ctx, reply, e)
        for op, body in (("update", {"path": path, "id": written, "entry": {"content": ctx.unique("watched-update")}}),
                         ("delete", {"path": path, "id": written})):
            if op == "update" and not offers_update(ctx):
                continue
            reply = call(ctx, op, body)
            events = watch.read()
            if reply.ok:
                steps.append((op, events))
            else:  # what a refused write does to the file is judged elsewhere: nothing to watch here
                ctx.note(f"{op} was refused ({reply.raw[:120]!r}): its writes are not watched")
    for op, events in steps:
        ctx.note(f"{op}: file events {events[:12]}")
        writes, unlocked = unlocked_writes(events)
        if not writes:
            yield Failure(f"{op} was acknowledged but memory.jsonl was never written", events, "a write under the lock")
        if unlocked:
            yield Failure(f"{op} wrote memory.jsonl while no memory.jsonl.lock existed", events,
                          "lock appeared, file written, lock gone", f"event {unlocked[0] + 1} of {len(events)}")


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD", sentence="Remove lock file")
def writer_lock_removed(ctx: CheckContext) -> Iterator[Failure]:
    """No memory.jsonl.lock is left behind after an append, an update or a delete, nor after an
    update or delete the target refuses (an id nobody wrote): a lock left on an early exit stops
    every other app until it is stale."""
    path = new_file(ctx)
    e = entry(ctx, "one")
    reply = call(ctx, "append", {"path": path, "entry": e})
    if not reply.ok:
        raise ControlRefused(f"append was refused: {reply.raw[:200]!r}")
    yield from lock_left(path, "an append")
    written, unknown = written_id(ctx, reply, e), str(uuid.uuid4())
    for op in write_ops(ctx)[1:]:
        one = "an update" if op == "update" else "a delete"
        for target_id, what in ((unknown, f"{one} of an id nobody wrote"), (written, one)):
            body: dict[str, Any] = {"path": path, "id": target_id}
            if op == "update":
                body["entry"] = {"content": ctx.unique("updated")}
            reply = call(ctx, op, body)
            yield from lock_left(path, what if reply.ok else f"a refused {op} (an id nobody wrote)"
                                 if target_id == unknown else f"a refused {op}")


def lock_left(path: str, after: str) -> Iterator[Failure]:
    """A failure if memory.jsonl.lock is there after the call; the harness then removes it (the
    next call must not wait for a lock the check already blamed)."""
    lock = path + emp.LOCK_SUFFIX
    if os.path.exists(lock):
        yield Failure(f"memory.jsonl.lock is left behind after {after}", "present", "removed", emp.FILE_NAME + emp.LOCK_SUFFIX)
        let_go(lock)




@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_stale_lock(ctx: CheckContext) -> Iterator[Failure]:
    path, written = new_file(ctx), list[str]()
    yield from append_past_stale_lock(ctx, path, entry(ctx, "after-crash"), written)
    if written and written[0] not in by_id(emp.resolve(emp.iter_lines(path))):
        yield Failure("an append acknowledged after a stale lock is not in the file", None, written[0], f"id {written[0]}")
    if written and os.path.exists(path + emp.LOCK_SUFFIX):
        yield Failure("the stale lock was taken over but never removed", "present", "removed")


TORN = '{"v":"1.0","id":"'  # what a writer killed mid-line leaves: no closing brace, no newline


@SUITE.check(level="writer", section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def writer_after_torn_line(ctx: CheckContext) -> Iterator[Failure]:
    """An append to a file whose last line is torn starts a new line instead of gluing onto it (errata E7).
    The same append to the file without the torn line is the control."""
    good, e = entry(ctx, "good"), entry(ctx, "after-torn")
    control_without_bad_lines(ctx, "append", {"path": new_file(ctx, [entry(ctx, "good-control")]),
                                              "entry": entry(ctx, "control")})
    path = new_file(ctx, [good])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(TORN)
    before = read_bytes(path)
    reply, failure = despite_bad_lines(ctx, "append", {"path": path, "entry": e}, "a torn last line")
    if failure is not None:
        yield failure
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    wanted = (good["id"], written_id(ctx, reply, e))
    unreadable = [want for want in wanted if want not in got]
    for want in unreadable:
        yield Failure("after an append to a file ending in a torn line, an entry is unreadable",
                      [raw for _, raw, _ in emp.iter_lines(path)][-2:], want, f"id {want}")
    if unreadable and glued_alone(before, read_bytes(path), wanted):
        # what a later check meets on a last line without its newline (a killed writer's, a file's own)
        established.establish(ctx, APPEND_GLUED, "an append to a file whose last line has no newline is glued onto "
                                                 "that line (no new line started)")


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_after_killed_writer(ctx: CheckContext) -> Iterator[Failure]:
    """What a writer killed mid-append leaves, a stale lock and a torn last line, stops neither the
    next append nor the lines already there."""
    good, e = entry(ctx, "good"), entry(ctx, "after-kill")
    path = new_file(ctx, [good])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(TORN)
    before = read_bytes(path)
    written: list[str] = []
    failures = list(append_past_stale_lock(ctx, path, e, written))
    yield from failures
    if failures:
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    wanted = (good["id"], *written)
    # the torn line's own fault (writer_after_torn_line), when a newline started there makes every entry readable
    glued = glued_alone(before, read_bytes(path), wanted)
    for want in wanted:
        if want not in got:
            failure = Failure("after a killed writer's stale lock and torn line, an entry is unreadable",
                              [raw for _, raw, _ in emp.iter_lines(path)][-2:], want, f"id {want}")
            yield established.explained(ctx, failure, APPEND_GLUED) if glued else failure
    if written and os.path.exists(path + emp.LOCK_SUFFIX):
        yield Failure("the stale lock was taken over but never removed", "present", "removed")
