"""Writer checks of the lock file: taken around every write, waited for while another app holds it,
removed afterwards, taken over only when stale (errata E2, E5, E6, E7).

The lock file is the spec's "Recommended approach" (SHOULD); the Writer level's clause lists the
checks of it all the same, because the lock file is the only lock other apps can see (errata E5)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

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
from memconform.suites.emp.suite import SUITE


class Pending:
    """A target call running in a thread while the check holds the lock; its error is re-raised, never lost."""

    def __init__(self, ctx: CheckContext, op: str, body: dict[str, Any]) -> None:
        self.reply: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(ctx, op, body), daemon=True)
        self.thread.start()

    def _run(self, ctx: CheckContext, op: str, body: dict[str, Any]) -> None:
        try:
            self.reply = call(ctx, op, body)
        except BaseException as exc:  # handed to the check's thread by result()
            self.error = exc

    def done(self) -> bool:
        return not self.thread.is_alive()

    def wait(self, seconds: float) -> bool:
        """Wait up to seconds for the call to return; True if it has."""
        self.thread.join(seconds)
        return self.done()

    def result(self, timeout: float) -> Any:
        """The reply, or None if the call is still running after timeout seconds."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            return None
        if self.error is not None:
            raise self.error
        return self.reply


def file_state(path: str) -> tuple[int, int] | None:
    """(size, mtime) of the file, None while it does not exist (a writer's first write creates it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def hold_window(ctx: CheckContext) -> float:
    """How long to hold the lock: 1 s, or 5 times one uncontended append if the target is slower (at most 8 s).

    Scaling by the target's own speed keeps the verdict independent of how fast it starts. The
    uncontended append is also the positive control of the checks that hold the lock."""
    path = new_file(ctx)
    started = time.monotonic()
    reply = call(ctx, "append", {"path": path, "entry": entry(ctx, "timing")})
    if not reply.ok:
        raise ControlRefused(f"an uncontended append was refused: {reply.raw[:200]!r}")
    return min(8.0, max(1.0, 5 * (time.monotonic() - started)))  # under 10 s, the shortest stale limit


def write_ops(ctx: CheckContext) -> tuple[str, ...]:
    """The write operations the target offers: append, update (optional) and delete."""
    return ("append", "update", "delete") if offers_update(ctx) else ("append", "delete")


def write_body(ctx: CheckContext, op: str, path: str, existing: str) -> dict[str, Any]:
    """A request for `op` on `path`, whose entry `existing` it updates or deletes."""
    if op == "append":
        return {"path": path, "entry": entry(ctx, "waiter")}
    if op == "update":
        return {"path": path, "id": existing, "entry": {"content": ctx.unique("updated-waiter")}}
    return {"path": path, "id": existing}


def landed(ctx: CheckContext, op: str, body: dict[str, Any], reply: Any, before: bytes, after: bytes) -> bool:
    """Is the acknowledged operation in the file? An append or update must resolve as written; a
    delete (a tombstone of any form, or a rewrite) must at least have changed the file."""
    if op == "delete":
        return after != before
    view = by_id(emp.resolve(emp.iter_text(after)))
    if op == "append":
        return written_id(ctx, reply, body["entry"]) in view
    return bool(view.get(body["id"], {}).get("content") == body["entry"]["content"])


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


def wait_while_held(ctx: CheckContext, op: str, hold: float, content: str | None = None,
                    missing: bool = False) -> Iterator[Failure]:
    """`content`: what the held lock holds (another app's token by default; empty, or a PID). `missing`:
    no memory.jsonl yet (an append only): the writer's own initialise meets the lock first."""
    seed = entry(ctx, "seed")
    path = os.path.join(new_folder(ctx), emp.FILE_NAME) if missing else new_file(ctx, [seed])
    token = ctx.unique("lock-holder") if content is None else content
    lock, held_file = take_lock(path, token)  # the same file, not one recreated with the same content, is checked
    before = read_bytes(path)
    state = file_state(path)
    body = write_body(ctx, op, path, seed["id"])
    pending = Pending(ctx, op, body)
    deadline = time.monotonic() + hold
    while time.monotonic() < deadline and file_state(path) == state and not pending.wait(0.005):
        pass
    during = read_bytes(path)
    returned_while_held = pending.done()
    still_ours = held_as_left(lock, token, held_file)
    if still_ours:
        os.unlink(lock)
    else:
        yield Failure("the app removed or replaced memory.jsonl.lock while another app held it", "lock gone", "lock kept", op)
    reply = pending.result(ctx.profile.limits.call_deadline_s)
    ctx.note(f"{op}: held the lock {hold:.2f} s; the call {'returned' if returned_while_held else 'was still waiting'} "
             "before release")
    if during != before:
        yield Failure("the app wrote while another app held memory.jsonl.lock", f"{len(during)} bytes", f"{len(before)} bytes", op)
    if reply is None:
        yield Failure(f"the {op} did not finish after the lock was released", "still waiting",
                      f"done within {ctx.profile.limits.call_deadline_s} s", op)
        return
    seen = ctx.observe("E6", {"waits for the lock": not returned_while_held,
                              "gives up while the lock is held": returned_while_held and not reply.ok and during == before},
                       reply.status, title=f"the {op} was acknowledged while another app held the lock", path=op)
    if seen.failure:
        seen.failure.expected = f"one of the readings (E6): {'; '.join(seen.accepted)}"
        yield seen.failure
    after = read_bytes(path)
    if reply.ok and not landed(ctx, op, body, reply, before, after):
        yield Failure(f"the {op} was acknowledged but is not in the file", after[len(before):][:300].decode("utf-8", "replace"),
                      body.get("id") or body["entry"]["id"], op)
    if not reply.ok and after != before:
        yield Failure("the app gave up on the lock but changed the file anyway", f"{len(after)} bytes", f"{len(before)} bytes", op)


def held_as_left(lock: str, token: str, held_file: tuple[int, int]) -> bool:
    """Is memory.jsonl.lock still the file the harness left (same inode and mtime, same content)?"""
    try:
        with open(lock) as fh:
            now = os.fstat(fh.fileno())
            return fh.read() == token and (now.st_ino, now.st_mtime_ns) == held_file
    except FileNotFoundError:
        return False


def take_lock(path: str, token: str) -> tuple[str, tuple[int, int]]:
    """Hold memory.jsonl.lock as another app would: (its path, (inode, mtime) of the file left)."""
    lock = path + emp.LOCK_SUFFIX
    with open(lock, "w") as fh:
        fh.write(token)
    held = os.stat(lock)
    return lock, (held.st_ino, held.st_mtime_ns)


LOCKING = "Apps must implement file locking to prevent concurrent writes from corrupting the file."
# how long a lock is held past a writer's own wait: under the shortest stale limit of errata E2 (10 s), past
# which a writer may take a lock over under some accepted reading
PAST_WAIT_S = 9.0


@SUITE.check(level="writer", section="Concurrency Control", keyword="MUST", sentence=LOCKING)
def writer_keeps_out_of_held_lock(ctx: CheckContext) -> Iterator[Failure]:
    """The harness holds a fresh memory.jsonl.lock as another app would while the target appends, and
    keeps holding it until the append returns (the writer's own wait is over: it gave up), for at most
    PAST_WAIT_S: the file must not change and the lock must stay as the harness left it. Writing under
    another app's lock, or breaking a lock that is not stale, is locking not implemented (errata E6)."""
    hold_window(ctx)  # the positive control: an uncontended append is acknowledged
    path = new_file(ctx, [entry(ctx, "seed")])
    token = ctx.unique("lock-holder")
    lock, held_file = take_lock(path, token)
    before = read_bytes(path)
    body = {"path": path, "entry": entry(ctx, "under-held-lock")}
    pending = Pending(ctx, "append", body)
    deadline = time.monotonic() + PAST_WAIT_S
    while time.monotonic() < deadline and not pending.wait(0.01):
        if read_bytes(path) != before or not held_as_left(lock, token, held_file):
            break  # the rule is broken already: no need to hold on
    during, kept, returned = read_bytes(path), held_as_left(lock, token, held_file), pending.done()
    if kept:
        os.unlink(lock)
    reply = pending.result(ctx.profile.limits.call_deadline_s)
    how = ("returned " + ("acknowledged" if reply is not None and reply.ok else "refused") if returned
           else f"was still waiting after {PAST_WAIT_S:g} s")
    ctx.note(f"append under another app's fresh lock: the call {how} while the lock was held")
    if during != before:
        yield Failure("the app wrote memory.jsonl while another app held a fresh memory.jsonl.lock",
                      f"{len(during)} bytes", f"{len(before)} bytes (unchanged until the lock is released)", "append")
    if not kept:
        gave_up = reply is not None and not reply.ok
        yield Failure("the app removed or replaced a fresh memory.jsonl.lock it did not own" + (" when it gave up" if gave_up else ""),
                      "lock gone or replaced", "the lock left as the other app holds it (only a stale lock may be taken over)",
                      emp.FILE_NAME + emp.LOCK_SUFFIX)


RELEASE_ATTEMPTS = 6  # each with an entry twice as long: a longer write holds the lock longer


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD", sentence="Remove lock file")
def writer_release_keeps_taken_lock(ctx: CheckContext) -> Iterator[Failure]:
    """While the target appends, the harness takes its lock over the moment it appears, as another app
    would that judged it stale (the write outlived the stale limit): it renames a lock of its own over
    it. The target's release must then leave that lock alone (it is no longer the target's): removing
    it lets a third app write beside the second. The kernel's order of file events (inotify) tells
    whether the takeover came while the target still held its lock; when it came after the release,
    the attempt shows nothing and is repeated with a longer entry (the verdict never rests on timing)."""
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
        watch = fswatch.FolderEvents.open(folder)
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
        os.unlink(lock)  # ours: nothing else will remove it
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
    if released_first:
        return False
    if not kept:
        return Failure("the app removed memory.jsonl.lock after another app had taken it over (its release did not check "
                       "the lock was still its own)", "lock gone or replaced", "the other app's lock left in place",
                       emp.FILE_NAME + emp.LOCK_SUFFIX)
    return True


def unlocked_writes(events: list[tuple[str, str]]) -> tuple[int, list[int]]:
    """(writes to memory.jsonl, indexes of those made while no memory.jsonl.lock existed)."""
    lock_name = emp.FILE_NAME + emp.LOCK_SUFFIX
    held, writes, unlocked = False, 0, []
    for i, (name, kind) in enumerate(events):
        if name == lock_name and kind != "written":
            held = kind == "appeared"
        elif name == emp.FILE_NAME:
            writes += 1
            if not held:
                unlocked.append(i)
    return writes, unlocked


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
        os.unlink(lock)


def stale_lock(ctx: CheckContext, path: str, content: str = "999999\n") -> str:
    """Leave the lock a crashed writer leaves, aged past the stale limit of errata emp.stale_lock_s."""
    lock = path + emp.LOCK_SUFFIX
    with open(lock, "w") as fh:
        fh.write(content)
    old = time.time() - float(ctx.option("stale_lock_s")) - 5
    os.utime(lock, (old, old))
    return lock


def stale_reading(ctx: CheckContext) -> tuple[str, ...]:
    return (f"a lock is stale after {ctx.option('stale_lock_s')} s", "stale_lock_takeover=required")


TAKES_OVER, GIVES_UP, WAITS = "takes over a stale lock", "waits on a stale lock, then gives up", "waits on a stale lock"


def append_past_stale_lock(ctx: CheckContext, path: str, e: dict[str, Any], written: list[str],
                           content: str = "999999\n") -> Iterator[Failure]:
    """An append while a lock older than the stale limit sits there. The sentence asks a writer to wait
    while a lock exists; taking over a stale one is errata E2's advice, required only under
    `emp.stale_lock_takeover=required`. By default what the writer did is recorded, and a refusal must
    leave the file as it was. `written` receives the id of an append the writer acknowledged."""
    control = call(ctx, "append", {"path": new_file(ctx), "entry": entry(ctx, "stale-control")})
    if not control.ok:  # a writer refusing every append would otherwise "give up" on the stale lock and pass
        raise ControlRefused(f"an append to a file without a lock was refused: {control.raw[:200]!r}")
    lock = stale_lock(ctx, path, content)
    before = read_bytes(path)
    required = ctx.option("stale_lock_takeover") == "required"
    pending = Pending(ctx, "append", {"path": path, "entry": e})
    reply = pending.result(5)
    changed = reply is not None and read_bytes(path) != before
    ctx.observe("E2", {TAKES_OVER: reply is not None and reply.ok, GIVES_UP: reply is not None and not reply.ok and not changed,
                       WAITS: reply is None}, "still waiting after 5 s" if reply is None else reply.brief())
    if reply is None:
        if os.path.exists(lock):
            os.unlink(lock)  # let the waiting app finish before the folder goes
        late = pending.result(ctx.profile.limits.call_deadline_s)
        if required:
            yield Failure("a lock older than the stale limit blocked the write", "still waiting after 5 s",
                          f"take over a lock older than {ctx.option('stale_lock_s')} s", readings=stale_reading(ctx))
        elif late is not None and late.ok:
            written.append(written_id(ctx, late, e))
    elif not reply.ok:
        if required:
            yield Failure("the append was refused because of a stale lock", reply.raw[:200], "taken over and written",
                          readings=stale_reading(ctx))
        elif changed:
            yield Failure("an append refused on a stale lock changed the file", "the file changed",
                          "a refused append writes nothing", emp.FILE_NAME)
    else:
        written.append(written_id(ctx, reply, e))


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
    reply, failure = despite_bad_lines(ctx, "append", {"path": path, "entry": e}, "a torn last line")
    if failure is not None:
        yield failure
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    for want in (good["id"], written_id(ctx, reply, e)):
        if want not in got:
            yield Failure("after an append to a file ending in a torn line, an entry is unreadable",
                          [raw for _, raw, _ in emp.iter_lines(path)][-2:], want, f"id {want}")


@SUITE.check(level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_after_killed_writer(ctx: CheckContext) -> Iterator[Failure]:
    """What a writer killed mid-append leaves, a stale lock and a torn last line, stops neither the
    next append nor the lines already there."""
    good, e = entry(ctx, "good"), entry(ctx, "after-kill")
    path = new_file(ctx, [good])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(TORN)
    written: list[str] = []
    failures = list(append_past_stale_lock(ctx, path, e, written))
    yield from failures
    if failures:
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    for want in (good["id"], *written):
        if want not in got:
            yield Failure("after a killed writer's stale lock and torn line, an entry is unreadable", None, want,
                          f"id {want}")
    if written and os.path.exists(path + emp.LOCK_SUFFIX):
        yield Failure("the stale lock was taken over but never removed", "present", "removed")
