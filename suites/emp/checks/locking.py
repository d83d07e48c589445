"""How the lock checks hold, wait on and take over the lock, shared with the concurrency, crash and file
checks: a pending write, the hold window, waiting while held, appending past a stale lock, the writes made
without the lock. Registers no check: check modules import it, never one another."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure
from memconform.suites.emp import format as emp
from memconform.suites.emp import fswatch, readings, table
from memconform.suites.emp.checks.common import (
    by_id,
    call,
    entry,
    new_file,
    new_folder,
    read_bytes,
    written_id,
)
from memconform.suites.emp.deviations import FOREIGN_LOCK_REMOVED, FOREIGN_LOCK_WHAT

# the three readings of a stale lock (errata E2)
TAKES_OVER, GIVES_UP, WAITS = readings.TAKES_OVER, readings.GIVES_UP, readings.WAITS


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


def wait_while_held(ctx: CheckContext, op: str, hold: float, content: str | None = None,
                    missing: bool = False) -> Iterator[Failure]:
    """`content`: what the held lock holds (another app's token by default; empty, or a PID). `missing`:
    no memory.jsonl yet (an append only): the writer's own initialise meets the lock first."""
    seed = entry(ctx, "seed")
    path = os.path.join(new_folder(ctx), emp.FILE_NAME) if missing else new_file(ctx, [seed])
    token = ctx.unique("lock-holder") if content is None else content
    watch = folder_events(path)
    try:
        lock, held_file = take_lock(path, token)  # the same file, not one recreated with the same content, is checked
        if watch is not None:
            watch.read()  # memconform's own events
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
        events = read_events(watch)  # before memconform removes its own lock
    finally:
        if watch is not None:
            watch.close()
    if still_ours and not let_go(lock):
        still_ours = False  # removed by the app after the look and before memconform let go: while held
    # the kernel saw the lock removed or replaced before memory.jsonl was written: a write then is the removal's doing
    removed_first = not still_ours and removed_before_written(events)
    if not still_ours:
        established.establish(ctx, FOREIGN_LOCK_REMOVED, FOREIGN_LOCK_WHAT)  # a later check's same fault is explained
        yield established.explained(ctx, Failure("the app removed or replaced memory.jsonl.lock while another app held it",
                                                 "lock gone", "lock kept", op), FOREIGN_LOCK_REMOVED)
    reply = pending.result(ctx.profile.limits.call_deadline_s)
    ctx.note(f"{op}: held the lock {hold:.2f} s; the call {'returned' if returned_while_held else 'was still waiting'} "
             "before release")
    if during != before:
        wrote = Failure("the app wrote while another app held memory.jsonl.lock", f"{len(during)} bytes", f"{len(before)} bytes", op)
        yield established.explained(ctx, wrote, FOREIGN_LOCK_REMOVED) if removed_first else wrote
    if reply is None:
        yield Failure(f"the {op} did not finish after the lock was released", "still waiting",
                      f"done within {ctx.profile.limits.call_deadline_s} s", op)
        return
    failure = held_verdict(ctx, op, readings.Held(returned_while_held, reply.ok, during == before), reply.status)
    if failure is not None:  # acknowledged while "held": after a removal the kernel saw first, the removal's doing too
        yield established.explained(ctx, failure, FOREIGN_LOCK_REMOVED) if removed_first else failure
    after = read_bytes(path)
    if reply.ok and not landed(ctx, op, body, reply, before, after):
        yield Failure(f"the {op} was acknowledged but is not in the file", after[len(before):][:300].decode("utf-8", "replace"),
                      body.get("id") or body["entry"]["id"], op)
    if not reply.ok and after != before:
        yield Failure("the app gave up on the lock but changed the file anyway", f"{len(after)} bytes", f"{len(before)} bytes", op)


def folder_events(path: str) -> fswatch.FolderEvents | None:
    """The kernel's file events of the folder of `path`, or None where they cannot be read (nothing is then
    explained by the order of events)."""
    try:
        return fswatch.FolderEvents.open(os.path.dirname(path))
    except fswatch.Unavailable:
        return None


def read_events(watch: fswatch.FolderEvents | None) -> list[tuple[str, str]]:
    """The events queued so far; none when they cannot be read or the kernel dropped some (an order with a gap
    explains nothing)."""
    try:
        return watch.read() if watch is not None else []
    except fswatch.Unavailable:
        return []


# how long a lock is held past a writer's own wait: under the shortest stale limit of errata E2 (10 s), past
# which a writer may take a lock over under some accepted reading
PAST_WAIT_S = 9.0


def held_past_wait(ctx: CheckContext, content: str | None = None) -> tuple[list[Failure], bool]:
    """Hold a fresh memory.jsonl.lock as another app would (`content`: what it holds, another app's token by
    default; "" is a lock its owner has just created and not yet written) while the target appends, until the
    append returns (the writer's own wait is over) or PAST_WAIT_S: the file must not change and the lock must
    stay as left. The failures, and whether the kernel saw the lock removed or replaced before memory.jsonl was
    written (a write then follows from the removal; False where file events cannot be read). The hold ends on
    the target's reply or on the rule broken, never on a guess of how long the target waits."""
    path = new_file(ctx, [entry(ctx, "seed")])
    token = ctx.unique("lock-holder") if content is None else content
    watch = folder_events(path)
    try:
        lock, held_file = take_lock(path, token)
        if watch is not None:
            watch.read()  # memconform's own events
        before = read_bytes(path)
        body = {"path": path, "entry": entry(ctx, "under-held-lock")}
        pending = Pending(ctx, "append", body)
        deadline = time.monotonic() + PAST_WAIT_S
        while time.monotonic() < deadline and not pending.wait(0.01):
            if read_bytes(path) != before or not held_as_left(lock, token, held_file):
                break  # the rule is broken already: no need to hold on
        during, kept, returned = read_bytes(path), held_as_left(lock, token, held_file), pending.done()
        events = watch.read() if watch is not None else []
    finally:
        if watch is not None:
            watch.close()
    if kept:
        let_go(lock)
    reply = pending.result(ctx.profile.limits.call_deadline_s)
    how = ("returned " + ("acknowledged" if reply is not None and reply.ok else "refused") if returned
           else "had not returned when the lock was removed or the file written" if not kept or during != before
           else f"was still waiting after {PAST_WAIT_S:g} s")
    held = "fresh lock" if content is None else f"fresh lock holding {content!r}"
    ctx.note(f"append under another app's {held}: the call {how} while the lock was held")
    failures = []
    removed_first = not kept and removed_before_written(events)
    if during != before:
        wrote = Failure("the app wrote memory.jsonl while another app held a fresh memory.jsonl.lock",
                        f"{len(during)} bytes", f"{len(before)} bytes (unchanged until the lock is released)", "append")
        # after the kernel saw it remove the lock: the write is the removal's doing, which an earlier check named
        failures.append(established.explained(ctx, wrote, FOREIGN_LOCK_REMOVED) if removed_first else wrote)
    if not kept:
        established.establish(ctx, FOREIGN_LOCK_REMOVED, FOREIGN_LOCK_WHAT)
        gave_up = reply is not None and not reply.ok
        failures.append(established.explained(ctx, Failure(
            "the app removed or replaced a fresh memory.jsonl.lock it did not own" + (" when it gave up" if gave_up else ""),
            "lock gone or replaced", "the lock left as the other app holds it (only a stale lock may be taken over)",
            emp.FILE_NAME + emp.LOCK_SUFFIX), FOREIGN_LOCK_REMOVED))  # the same fault, when an earlier check named it
    return failures, removed_first


def removed_before_written(events: list[tuple[str, str]]) -> bool:
    """Did the kernel see memory.jsonl.lock removed or replaced before memory.jsonl was first written?"""
    lock_name = emp.FILE_NAME + emp.LOCK_SUFFIX
    for name, kind in events:
        if name == emp.FILE_NAME and kind == "written":
            return False
        if name == lock_name:
            return True  # gone, or written over, or another put in its place: no longer the holder's
    return False


def held_verdict(ctx: CheckContext, op: str, held: readings.Held, status: Any) -> Failure | None:
    """What the write did while another app held the lock, judged by the table's E6 readings (recorded)."""
    seen = table.observe(ctx, "E6", Asked(readings.HELD), held, shown=status,
                         title=f"the {op} was acknowledged while another app held the lock", path=op)
    if seen.failure:
        seen.failure.expected = f"one of the readings (E6): {'; '.join(seen.accepted)}"
    return seen.failure


def held_as_left(lock: str, token: str, held_file: tuple[int, int]) -> bool:
    """Is memory.jsonl.lock still the file the harness left (same inode and mtime, same content)?"""
    try:
        with open(lock) as fh:
            now = os.fstat(fh.fileno())
            return fh.read() == token and (now.st_ino, now.st_mtime_ns) == held_file
    except FileNotFoundError:
        return False


def let_go(lock: str) -> bool:
    """Remove memory.jsonl.lock as the app holding it would; False when it is already gone. The target runs
    beside memconform: between a look at the lock and its removal the target may remove it (a hostile or
    lock-breaking writer), which is evidence about the target, never a harness error."""
    try:
        os.unlink(lock)
        return True
    except FileNotFoundError:
        return False


def take_lock(path: str, token: str) -> tuple[str, tuple[int, int]]:
    """Hold memory.jsonl.lock as another app would: (its path, (inode, mtime) of the file left)."""
    lock = path + emp.LOCK_SUFFIX
    with open(lock, "w") as fh:
        fh.write(token)
    held = os.stat(lock)
    return lock, (held.st_ino, held.st_mtime_ns)


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
    pending = Pending(ctx, "append", {"path": path, "entry": e})
    reply = pending.result(5)
    changed = reply is not None and read_bytes(path) != before
    failures = stale_verdict(ctx, readings.Stale(None if reply is None else bool(reply.ok), changed),
                             "still waiting after 5 s" if reply is None else reply.brief(), b"" if reply is None else reply.raw)
    yield from failures
    if reply is None:
        let_go(lock)  # let the waiting app finish before the folder goes
        late = pending.result(ctx.profile.limits.call_deadline_s)
        if not failures and late is not None and late.ok:
            written.append(written_id(ctx, late, e))
    elif reply.ok:
        written.append(written_id(ctx, reply, e))


def stale_verdict(ctx: CheckContext, answer: readings.Stale, shown: str, raw: bytes) -> list[Failure]:
    """An append past a stale lock judged by the table's E2 readings (recorded); a failure worded by what the
    writer did: waited or refused where the takeover is required, or refused and changed the file anyway."""
    if not table.observe(ctx, "E2", Asked(readings.STALE), answer, shown=shown).failure:
        return []
    if answer.acknowledged is None:
        return [Failure("a lock older than the stale limit blocked the write", "still waiting after 5 s",
                        f"take over a lock older than {ctx.option('stale_lock_s')} s", readings=stale_reading(ctx))]
    if ctx.option("stale_lock_takeover") == "required":
        return [Failure("the append was refused because of a stale lock", raw[:200], "taken over and written",
                        readings=stale_reading(ctx))]
    return [Failure("an append refused on a stale lock changed the file", "the file changed",
                    "a refused append writes nothing", emp.FILE_NAME)]


def mended(before: bytes, after: bytes) -> bytes | None:
    """The file as it would be had the writer started a new line: `after` with a newline put between the
    bytes that were there and the writer's, when the writer kept every byte there and glued its own onto a
    last line without its newline; None otherwise."""
    if not before or before.endswith(b"\n") or not after.startswith(before) or after[len(before):][:1] in (b"", b"\n", b"\r"):
        return None
    return before + b"\n" + after[len(before):]


def readable_ids(raw: bytes) -> set[Any]:
    lines = (emp.read_line(n, line) for n, line in enumerate(raw.split(b"\n"), 1))
    return set(by_id(emp.resolve(line for line in lines if line is not None)))


def glued_alone(before: bytes, after: bytes, wanted: tuple[Any, ...]) -> bool:
    """Did the glue alone make the entries unreadable: with the new line started, is every wanted id read?"""
    fixed = mended(before, after)
    return fixed is not None and set(wanted) <= readable_ids(fixed)
