"""Concurrent writers: a bounded number of clients create, update and delete at once.

Each thread owns one field of a few shared memories (so concurrent partial updates of one memory
meet: the classic lost update) and creates and deletes memories of its own. Afterwards every
acknowledged write must be there, every acknowledged delete gone, and no memory there twice.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.suites.omp import client
from memconform.suites.omp import format as omp
from memconform.suites.omp.suite import SUITE

THREADS = 6
OPS = 15
SHARED = 3
JOIN_S = 120.0  # every request is bounded by the target's limits; this bounds the whole phase


def field_value(ctx: CheckContext, thread: int, op: int, marker: str) -> tuple[str, Any]:
    """The field thread `thread` owns on the shared memories, and a value only (thread, op) writes."""
    stamp = f"t{thread}o{op}"
    return [
        ("content", f"{marker} shared {stamp}"),
        ("tags", [client.run_tag(ctx), marker, stamp]),
        ("metadata", {"memconform_run": ctx.run_id, "stamp": stamp}),
        ("namespace", f"project:{stamp}"),
        ("type", omp.TYPES[op % 3]),
        ("expires_at", f"2099-01-01T00:{thread:02d}:{op:02d}Z"),
    ][thread % 6]


@dataclass
class Ledger:
    acknowledged: int = 0
    unacknowledged: int = 0
    live: dict[str, str] = field(default_factory=dict)  # id -> content, acknowledged creates not deleted
    deleted: set[str] = field(default_factory=set)
    last_field: dict[tuple[str, str], Any] = field(default_factory=dict)  # (shared id, field) -> last acked value
    lock: threading.Lock = field(default_factory=threading.Lock)


def worker(ctx: CheckContext, thread: int, shared: list[str], marker: str, ledger: Ledger, start: threading.Barrier) -> None:
    own: list[str] = []
    start.wait(timeout=30)
    for op in range(OPS):
        kind = ("create", "update", "update", "create", "delete")[op % 5]
        if kind == "delete" and not own:
            kind = "create"
        try:
            if kind == "create":
                content = f"{marker} own t{thread}o{op}"
                answer = client.create(ctx, client.memory(ctx, "conc", content=content, tags=[marker]), record=False, quiet=True)
                ok = answer.ok and isinstance(answer.body, dict) and isinstance(answer.body.get("id"), str)
                if ok:
                    own.append(answer.body["id"])
                    with ledger.lock:
                        ledger.live[answer.body["id"]] = content
            elif kind == "update":
                target = shared[(thread + op) % len(shared)]
                name, value = field_value(ctx, thread, op, marker)
                ok = client.update(ctx, target, {name: value}, record=False, quiet=True).ok
                if ok:
                    with ledger.lock:
                        ledger.last_field[(target, name)] = value
            else:
                doomed = own.pop(0)
                ok = client.delete(ctx, doomed, record=False, quiet=True).status == 204
                if ok:
                    with ledger.lock:
                        ledger.live.pop(doomed, None)
                        ledger.deleted.add(doomed)
        except TargetError:
            ok = False
        with ledger.lock:
            if ok:
                ledger.acknowledged += 1
            else:
                ledger.unacknowledged += 1


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Implements all endpoints in §3.3 with correct HTTP methods and status codes')
def concurrent_writers_nothing_lost(ctx: CheckContext) -> Iterator[Failure]:
    marker = ctx.unique("conc")  # in every content and as a tag: this run's writers only
    shared = [client.created(ctx, client.memory(ctx, "conc-shared", content=f"{marker} shared seed {i}", tags=[marker]))["id"]
              for i in range(SHARED)]
    ledger = Ledger(live={i: "shared" for i in shared})
    start = threading.Barrier(THREADS)
    threads = [threading.Thread(target=worker, args=(ctx, t, shared, marker, ledger, start), daemon=True) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=JOIN_S)
    if any(t.is_alive() for t in threads):
        raise TargetError(f"the concurrent writers did not finish within {JOIN_S:.0f} s")
    everything = client.exported(ctx)
    mine = client.with_marker(everything, marker)
    by_id = collections.Counter(m.get("id") for m in mine)
    by_content = collections.Counter(m.get("content") for m in mine)
    stored = {m.get("id"): m for m in mine}
    lost_creates = sorted(i for i in ledger.live if i not in stored)
    lost_updates = [(i, name) for (i, name), value in ledger.last_field.items()
                    if not _holds(stored.get(i, {}).get(name), value)]
    resurrected = sorted(i for i in ledger.deleted if i in stored)
    duplicated = sum(n - 1 for n in by_id.values() if n > 1) + sum(n - 1 for n in by_content.values() if n > 1)
    counts = (f"acknowledged {ledger.acknowledged}, lost {len(lost_creates) + len(lost_updates)} "
              f"({len(lost_creates)} creates, {len(lost_updates)} updates), duplicated {duplicated}, "
              f"resurrected {len(resurrected)}, unacknowledged {ledger.unacknowledged} "
              f"({THREADS} threads x {OPS} operations)")
    ctx.note(counts)
    client.latency_note(ctx)
    if lost_creates:
        yield Failure("acknowledged creates are missing", lost_creates[:5], "every 201 memory present", "$.memories", counts)
    for i, name in lost_updates[:5]:
        yield Failure(f"an acknowledged update of {name} was lost", stored.get(i, {}).get(name, "<memory absent>"),
                      ledger.last_field[(i, name)], f"$.memories[?id={i}].{name}", counts)
    if resurrected:
        yield Failure("acknowledged deletes came back", resurrected[:5], "absent", "$.memories", counts)
    if duplicated:
        yield Failure("memories appear twice", [k for k, n in by_content.items() if n > 1][:3], "each once", "$.memories", counts)


def _holds(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, list) and isinstance(stored, list):
        return sorted(stored) == sorted(wanted)
    if isinstance(wanted, str) and wanted.startswith("2099-"):
        from memconform.suites.omp.rules import instant

        return instant(stored) == instant(wanted)
    return bool(stored == wanted)
