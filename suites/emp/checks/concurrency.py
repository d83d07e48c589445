"""Writer checks under contention: many apps at once, and apps starting on a missing file.

Counts are Jepsen-style (memconform.core.history_counts): acknowledged writes, and of those lost, duplicated,
resurrected (deleted but back) and corrupted (lines no reader can use)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.model import Failure, Inconclusive
from memconform.suites.emp import format as emp
from memconform.suites.emp import fswatch
from memconform.suites.emp.checks.common import by_id, entry, new_folder, target_view, written_id
from memconform.suites.emp.checks.lock import unlocked_writes
from memconform.suites.emp.suite import SUITE


def run_apps(n: int, work: Callable[[int], None]) -> list[BaseException]:
    """n apps at once, released together; the errors they raised."""
    start, errors, mutex = threading.Barrier(n), [], threading.Lock()

    def app(i: int) -> None:
        try:
            start.wait(10)
            work(i)
        except BaseException as exc:  # kept, and raised by the check unless the file shows damage
            with mutex:
                errors.append(exc)

    threads = [threading.Thread(target=app, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def counts(ctx: CheckContext, path: str, appended: set[str], deleted: set[str]) -> dict[str, int]:
    lines = list(emp.iter_lines(path)) if os.path.exists(path) else []
    readable = [e for _, _, e in lines if emp.readable(e)]
    shown = target_view(ctx, path)
    view = by_id(shown if shown is not None else emp.resolve(lines))
    live = [e["id"] for e in readable if not emp.is_tombstone(e)]
    return history_counts.counts(
        acknowledged=len(appended) + len(deleted),
        lost=len((appended - deleted) - set(view)),
        duplicated=sum(1 for i in appended if live.count(i) > 1),
        resurrected=len(deleted & set(view)),
        corrupted=len(lines) - len(readable),
    )


@SUITE.check(level="writer", section="Concurrency Control", keyword="MUST",
              sentence="Apps must implement file locking to prevent concurrent writes from corrupting the file.")
def writer_concurrent_no_loss(ctx: CheckContext) -> Iterator[Failure]:
    """Five apps append four entries each at once, then each deletes its first; nothing acknowledged is
    lost, duplicated, resurrected or corrupted, and (where the kernel shows it) no write of the
    file happens while no lock exists."""
    apps, per = 5, 4
    folder = new_folder(ctx)
    path = os.path.join(folder, emp.FILE_NAME)
    with open(path, "w", encoding="utf-8"):
        pass
    appended: set[str] = set()
    deleted: set[str] = set()
    mutex = threading.Lock()

    def work(i: int) -> None:
        mine = []
        for k in range(per):
            e = entry(ctx, f"app{i}-{k}")
            reply = ctx.target.call("append", {"path": path, "entry": e})
            if reply.ok:
                mine.append(written_id(ctx, reply, e))
        with mutex:
            appended.update(mine)
        if mine and ctx.target.call("delete", {"path": path, "id": mine[0]}).ok:
            with mutex:
                deleted.add(mine[0])

    try:
        watch: fswatch.FolderEvents | None = fswatch.FolderEvents.open(folder)
    except fswatch.Unavailable as exc:
        watch = None
        ctx.note(f"no file events on this system ({exc}): lock order not observed")
    try:
        errors = run_apps(apps, work)
        events = watch.read() if watch is not None else []
    except fswatch.Unavailable as exc:
        events = []
        ctx.note(f"file events lost ({exc}): lock order not observed")
    finally:
        if watch is not None:
            watch.close()
    if not appended and not errors:
        raise Inconclusive("no concurrent append was acknowledged: nothing to look for")
    found = counts(ctx, path, appended, deleted)
    history_counts.record(ctx, found)
    ctx.note(f"{apps} apps x {per} appends + 1 delete each: {found}")
    bad = history_counts.anomalies(found)
    if bad:
        yield Failure(f"{apps} concurrent apps damaged the file", found, history_counts.counts(acknowledged=apps * (per + 1)))
    _, unlocked = unlocked_writes(events)
    if unlocked:
        yield Failure("under contention memory.jsonl was written while no memory.jsonl.lock existed",
                      events[max(0, unlocked[0] - 6): unlocked[0] + 1], "every write under a lock",
                      f"event {unlocked[0] + 1} of {len(events)}")
    if not bad and not unlocked and errors:  # a crash under contention is the target erroring, never a pass
        raise errors[0]


@SUITE.check(level="writer", section="Concurrency Control", keyword="MUST",
              sentence="Apps must implement file locking to prevent concurrent writes from corrupting the file.")
def writer_missing_file_contention(ctx: CheckContext) -> Iterator[Failure]:
    """Apps starting at once on a folder without memory.jsonl: each one's first entry survives
    (nobody creates the file by truncating what another just wrote)."""
    rounds, apps = 3, 3
    for r in range(rounds):
        path = os.path.join(new_folder(ctx), emp.FILE_NAME)
        acked: set[str] = set()
        mutex = threading.Lock()

        def work(i: int, path: str = path, acked: set[str] = acked, mutex: threading.Lock = mutex) -> None:
            e = entry(ctx, f"first-{i}")
            reply = ctx.target.call("append", {"path": path, "entry": e})
            if reply.ok:
                with mutex:
                    acked.add(written_id(ctx, reply, e))

        errors = run_apps(apps, work)
        found = counts(ctx, path, acked, set())
        history_counts.record(ctx, found)
        ctx.note(f"round {r + 1}: {apps} apps on a missing file: {found}")
        if found["lost"] or found["corrupted"] or found["duplicated"]:
            yield Failure(f"{apps} apps starting on a missing file lost or damaged a first entry", found,
                          {"acknowledged": apps, "lost": 0, "duplicated": 0, "corrupted": 0}, f"round {r + 1}")
            return
        if errors:
            raise errors[0]
        if not acked:
            raise Inconclusive("no append on a missing file was acknowledged: nothing to look for")
