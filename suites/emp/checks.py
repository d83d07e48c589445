"""Edge Memory Protocol v1.0 suite: the SuiteSpec, File (document) checks, Reader and Writer checks.

Operations a target offers (errata/emp.md): append {"path","entry"}, delete {"path","id"},
resolve {"path"} -> [entries], query {"path", "start"?, "end"?, "tags"?, "type"?, "text"?} -> [entries].
Every file lives in a fresh temporary folder; checks never write outside it.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, SkipCheck, TargetError
from memconform.core.registry import check
from memconform.core.suite import Level, SuiteSpec, register_suite
from memconform.formats import emp

from . import fswatch

SPEC = emp.SPEC
OTHER = "com.example.other"


def new_file(ctx: Any, lines: list[Any] = ()) -> str:
    folder = tempfile.mkdtemp(prefix="memconform-emp-")
    atexit.register(shutil.rmtree, folder, True)  # removed when the run's process ends
    path = os.path.join(folder, emp.FILE_NAME)
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


def entry(ctx: Any, label: str, ts: int = 1701234567890, **fields: Any) -> dict[str, Any]:
    e = {"v": emp.VERSION, "id": str(uuid.uuid4()), "ts": ts, "src": OTHER, "content": ctx.unique(label)}
    e.update(fields)
    return e


def call(ctx: Any, op: str, body: dict[str, Any]) -> Any:
    reply = ctx.target.call(op, body)
    ctx.note(f"{op} {json.dumps({k: v for k, v in body.items() if k != 'path'})[:200]} -> {reply.status}")
    return reply


def view(ctx: Any, path: str, op: str = "resolve", **filters: Any) -> list[dict[str, Any]]:
    reply = call(ctx, op, {"path": path, **filters})
    body: list[dict[str, Any]] = reply.accepted_json(list, op)
    return body


def by_id(entries: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {e.get("id"): e for e in entries if isinstance(e, dict)}


def written_file(ctx: Any) -> list[tuple[int, str, Any]]:
    """The file the target writes: a few appends (with tags, type, meta, emb) and one delete."""
    path = new_file(ctx)
    first = entry(ctx, "doc-a", type="preference", tags=["ui", "theme"])
    second = entry(ctx, "doc-b", ts=1701234568000, meta={"priority": "high"}, emb=[0.1, 0.2])
    for e in (first, second):
        e.pop("src")
        reply = call(ctx, "append", {"path": path, "entry": e})
        if not reply.ok:
            raise TargetError(f"append was refused: {reply.raw[:200]!r}")
    call(ctx, "delete", {"path": path, "id": first["id"]})
    return list(emp.iter_lines(path))


def _parse(raw: bytes) -> Any:
    return list(emp.iter_text(raw))


def _reference() -> Any:
    """`reference:emp`: the embedded implementation."""
    from memconform.reference.emp import ReferenceEmpApp

    return ReferenceEmpApp()


def _mutants() -> Any:
    from memconform.mutants import emp as mutants

    return mutants


SUITE = register_suite(SuiteSpec(
    name=emp.SUITE, spec_title=SPEC, version="1.0",
    levels=[Level("file", "File"), Level("reader", "Reader"), Level("writer", "Writer")],
    document_source=written_file, detect=emp.detect, parse=_parse, stream=emp.LineStream,
    reference=_reference, mutants=_mutants,
))

doc_check = partial(check, suite=emp.SUITE, spec=SPEC, kind="document", level="file")
reader_check = partial(check, suite=emp.SUITE, spec=SPEC, level="reader")
writer_check = partial(check, suite=emp.SUITE, spec=SPEC, level="writer")


# ---- File: each line, on its own -------------------------------------------------------------

def _findings(doc: Any, ctx: Any) -> emp.Findings:
    """One pass over the file shared by every file check of the run (a streamed file is read once)."""
    findings: emp.Findings = ctx.once("emp.findings", lambda: emp.scan(emp.as_lines(doc)))
    ctx.note(f"{findings.lines} non-blank lines read in one pass")
    return findings


def _field_rule(doc: Any, ctx: Any, name: str, expected: Any = None) -> Iterator[Failure]:
    found = _findings(doc, ctx)
    offenders = found.offenders.get(name, [])
    for n, message, value in offenders:
        yield Failure(message, value, expected, f"line {n}")
    more = found.counts.get(name, 0) - len(offenders)
    if more:
        yield Failure(f"{more} more lines break this rule (the first {len(offenders)} are listed)", more, 0,
                      f"after line {offenders[-1][0]}")


@doc_check(section="Storage Format: JSONL", keyword="MUST",
           sentence="Each memory entry is a single line of JSON")
def lines_are_json_objects(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "lines_are_json_objects", "one JSON object per line")


@doc_check(section="Required Fields", keyword="MUST", sentence="Required Fields: v, id, ts, src, content")
def required_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "required_fields")


@doc_check(section="Required Fields", keyword="MUST", sentence='Format: "MAJOR.MINOR" (e.g., "1.0")')
def version_format(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "version_format")


@doc_check(section="Required Fields", keyword="MUST", sentence="Must be a valid UUID v4")
def id_uuid4(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "id_uuid4")


@doc_check(section="Required Fields", keyword="MUST", sentence="Unix timestamp in milliseconds")
def ts_millis(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "ts_millis")


@doc_check(section="Required Fields", keyword="MUST",
           sentence='Reverse domain notation (e.g., "com.company.appname")')
def src_reverse_domain(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "src_reverse_domain")


@doc_check(section="Required Fields", keyword="MUST", sentence="content (string): Memory content")
def content_string(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "content_string")


@doc_check(section="Optional Fields", keyword="MUST", sentence="Array of lowercase strings")
def tags_lowercase(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "tags_lowercase")


@doc_check(section="Optional Fields", keyword="MUST",
           sentence="type (string) ... meta (object): Arbitrary JSON object ... emb (number[]): Array of floats")
def optional_field_types(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "optional_field_types")


@doc_check(section="Encryption (Optional)", keyword="MUST", sentence="Prefix: encrypted:ALGORITHM:")
def encrypted_content_form(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, ctx, "encrypted_content_form")


# ---- Reader ----------------------------------------------------------------------------------

@reader_check(section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def reader_newest_ts_wins(ctx: Any) -> Iterator[Failure]:
    new = entry(ctx, "newer", ts=1701234569000)
    old = dict(new, ts=1701234568000, content=ctx.unique("older"))
    got = by_id(view(ctx, new_file(ctx, [new, old]))).get(new["id"])
    if got is None or got.get("content") != new["content"]:
        yield Failure("an older line written later won over the newer ts", got, new, f"id {new['id']}")


@reader_check(section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def reader_tombstone_deletes(ctx: Any) -> Iterator[Failure]:
    kept, gone = entry(ctx, "kept"), entry(ctx, "gone")
    tomb = emp.tombstone(gone["id"], gone["ts"] + 1000, OTHER, ctx.option("tombstone"))
    got = by_id(view(ctx, new_file(ctx, [kept, gone, tomb])))
    if gone["id"] in got:
        yield Failure("a deleted entry is still in the view", got[gone["id"]], "absent", f"id {gone['id']}")
    if kept["id"] not in got:
        yield Failure("an entry nobody deleted is missing", None, kept, f"id {kept['id']}")


@reader_check(section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def reader_deleted_stays_deleted(ctx: Any) -> Iterator[Failure]:
    """An older update of a deleted id, appended after the tombstone (say, synced late), does not revive it."""
    gone = entry(ctx, "deleted")
    tomb = emp.tombstone(gone["id"], gone["ts"] + 2000, OTHER, ctx.option("tombstone"))
    late = dict(gone, ts=gone["ts"] + 1000, content=ctx.unique("stale-update"))
    got = by_id(view(ctx, new_file(ctx, [gone, tomb, late])))
    if gone["id"] in got:
        yield Failure("an update older than the tombstone, written after it, brought the deleted entry back",
                      got[gone["id"]], "absent (the tombstone has the newest ts)", f"id {gone['id']}")


@reader_check(section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def reader_equal_ts_tie(ctx: Any) -> Iterator[Failure]:
    """Two lines of one id with equal ts: exactly one wins; under ts_tie=later-line, the later line."""
    first = entry(ctx, "tie-first")
    second = dict(first, content=ctx.unique("tie-second"), src="com.example.second")
    got = [e for e in view(ctx, new_file(ctx, [first, second])) if isinstance(e, dict) and e.get("id") == first["id"]]
    contents = [e.get("content") for e in got]
    if len(got) != 1:
        yield Failure(f"one id with two equal-ts lines resolved to {len(got)} entries", contents, "exactly one",
                      f"id {first['id']}")
    elif ctx.option("ts_tie") == "later-line" and contents[0] != second["content"]:
        yield Failure("on equal ts the earlier line won (reading ts_tie=later-line: the later line wins)",
                      contents[0], second["content"], f"id {first['id']}")
    elif contents[0] not in (first["content"], second["content"]):
        yield Failure("on equal ts the view shows content neither line has", contents[0],
                      [first["content"], second["content"]], f"id {first['id']}")


@reader_check(section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def reader_corrupt_line_isolated(ctx: Any) -> Iterator[Failure]:
    a, b = entry(ctx, "before"), entry(ctx, "after")
    path = new_file(ctx, [a, '{"v":"1.0","id":', "not json at all", b, '{"v":"1.0","id":"trunc'])
    reply = call(ctx, "resolve", {"path": path})
    if not reply.ok:
        yield Failure("the read was refused because of corrupt lines", reply.raw[:200], "the good lines")
        return
    got = by_id(reply.json())
    for e in (a, b):
        if e["id"] not in got:
            yield Failure("a good line was lost next to corrupt ones", None, e, f"id {e['id']}")


@reader_check(section="Backward Compatibility", keyword="MUST",
              sentence="Ignore unknown fields in newer versions")
def reader_unknown_ignored(ctx: Any) -> Iterator[Failure]:
    lines = [entry(ctx, "minor", v="1.7", novel={"x": 1}), entry(ctx, "custom", type="x-custom-type", meta={"z": [1]})]
    got = by_id(view(ctx, new_file(ctx, lines)))
    for e in lines:
        if e["id"] not in got or got[e["id"]].get("content") != e["content"]:
            yield Failure("an entry with unknown fields, type or newer minor was not read", got.get(e["id"]), e, f"id {e['id']}")


@reader_check(section="Versioning", keyword="MUST",
              sentence="MAJOR: Breaking changes (incompatible format)")
def reader_newer_major_refused(ctx: Any) -> Iterator[Failure]:
    ok, future = entry(ctx, "v1"), entry(ctx, "v2", v="2.0")
    reply = call(ctx, "resolve", {"path": new_file(ctx, [ok, future])})
    if not reply.ok:
        return  # refusing clearly is fine
    got = by_id(reply.json())
    if future["id"] in got:
        yield Failure("an entry of an unknown major version was read as if it were 1.x", got[future["id"]], "refused or left out")


def _query(ctx: Any, filters: dict[str, Any], want: dict[str, Any], other: dict[str, Any]) -> Iterator[Failure]:
    got = by_id(view(ctx, new_file(ctx, [want, other]), "query", **filters))
    if want["id"] not in got:
        yield Failure(f"query {filters} left out a matching entry", sorted(got, key=str), want["id"])
    if other["id"] in got:
        yield Failure(f"query {filters} returned an entry that does not match", got[other["id"]], "absent")


@reader_check(section="Read Operations", keyword="MUST",
              sentence="Filter by Time: Read entries where ts >= startTime && ts <= endTime")
def query_time(ctx: Any) -> Iterator[Failure]:
    yield from _query(ctx, {"start": 2000, "end": 3000}, entry(ctx, "in", ts=3000), entry(ctx, "out", ts=3001))


@reader_check(section="Read Operations", keyword="MUST",
              sentence="Filter by Tags: Read entries where tags includes specified tag(s)")
def query_tags(ctx: Any) -> Iterator[Failure]:
    yield from _query(ctx, {"tags": ["calendar"]}, entry(ctx, "in", tags=["calendar", "x"]), entry(ctx, "out", tags=["ui"]))


@reader_check(section="Read Operations", keyword="MUST",
              sentence="Filter by Type: Read entries where type matches specified type")
def query_type(ctx: Any) -> Iterator[Failure]:
    yield from _query(ctx, {"type": "event"}, entry(ctx, "in", type="event"), entry(ctx, "out", type="fact"))


@reader_check(section="Read Operations", keyword="MUST",
              sentence="Search by Content: Read entries where content contains keyword (case-insensitive)")
def query_content(ctx: Any) -> Iterator[Failure]:
    word = ctx.unique("kw").lower()
    want = entry(ctx, "in", content=f"Note about {word.upper()} here")
    yield from _query(ctx, {"text": word}, want, entry(ctx, "out"))


# ---- Writer ----------------------------------------------------------------------------------

class Pending:
    """A target call running in a thread while the check holds the lock; its error is re-raised, never lost."""

    def __init__(self, ctx: Any, op: str, body: dict[str, Any]) -> None:
        self.reply: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(ctx, op, body), daemon=True)
        self.thread.start()

    def _run(self, ctx: Any, op: str, body: dict[str, Any]) -> None:
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


def file_state(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def hold_window(ctx: Any) -> float:
    """How long to hold the lock: 1 s, or 5 times one uncontended append if the target is slower (at most 8 s).

    Scaling by the target's own speed keeps the verdict independent of how fast it starts."""
    path = new_file(ctx)
    started = time.monotonic()
    reply = call(ctx, "append", {"path": path, "entry": entry(ctx, "timing")})
    if not reply.ok:
        raise TargetError(f"an uncontended append was refused: {reply.raw[:200]!r}")
    return min(8.0, max(1.0, 5 * (time.monotonic() - started)))  # under 10 s, the shortest stale limit


@writer_check(section="Concurrency Control", keyword="MUST",
              sentence="Create lock file (memory.jsonl.lock) before writing ... If lock file exists, wait with exponential backoff")
def writer_waits_for_lock(ctx: Any) -> Iterator[Failure]:
    """The harness holds memory.jsonl.lock as another app would; the append must not land (nor be
    acknowledged) while it is held, and must land once it is released. A writer whose own wait
    times out may give up (a rejected reply) but must then not write at all."""
    hold = hold_window(ctx)
    path = new_file(ctx, [entry(ctx, "seed")])
    lock, token = path + emp.LOCK_SUFFIX, ctx.unique("lock-holder")
    with open(lock, "w") as fh:
        fh.write(token)
    with open(path, "rb") as fh:
        before = fh.read()
    state = file_state(path)
    e = entry(ctx, "waiter")
    pending = Pending(ctx, "append", {"path": path, "entry": e})
    deadline = time.monotonic() + hold
    while time.monotonic() < deadline and file_state(path) == state and not pending.wait(0.005):
        pass
    with open(path, "rb") as fh:
        during = fh.read()
    returned_while_held = pending.done()
    try:
        with open(lock) as fh:
            still_ours = fh.read() == token
    except FileNotFoundError:
        still_ours = False
    if still_ours:
        os.unlink(lock)
    else:
        yield Failure("the app removed or replaced memory.jsonl.lock while another app held it", "lock gone", "lock kept")
    reply = pending.result(ctx.profile.limits.call_deadline_s)
    ctx.note(f"held the lock {hold:.2f} s; the call {'returned' if returned_while_held else 'was still waiting'} before release")
    if during != before:
        yield Failure("the app wrote while another app held memory.jsonl.lock", f"{len(during)} bytes", f"{len(before)} bytes")
    if reply is None:
        yield Failure("the append did not finish after the lock was released", "still waiting",
                      f"done within {ctx.profile.limits.call_deadline_s} s")
        return
    if returned_while_held and reply.ok:
        yield Failure("the append was acknowledged while another app held the lock", reply.status,
                      "wait for the lock, or give up with a rejected reply")
    with open(path, "rb") as fh:
        after = fh.read()
    landed = e["id"] in by_id(emp.resolve(emp.iter_text(after)))
    if reply.ok and not landed:
        yield Failure("the append was acknowledged but the entry is not in the file", None, e["id"])
    if not reply.ok and after != before:
        yield Failure("the app gave up on the lock but changed the file anyway", f"{len(after)} bytes", f"{len(before)} bytes")


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


@writer_check(section="Concurrency Control", keyword="MUST",
              sentence="Create lock file (memory.jsonl.lock) before writing; Write to file; Remove lock file")
def writer_locks_around_write(ctx: Any) -> Iterator[Failure]:
    """The kernel's own record of file events (a hook no target can race) shows memory.jsonl.lock
    present at every write of memory.jsonl, by an append and by a delete (its removal afterwards is
    emp.writer_lock_removed)."""
    path = new_file(ctx, [entry(ctx, "seed")])
    try:
        watch = fswatch.FolderEvents.open(os.path.dirname(path))
    except fswatch.Unavailable as exc:
        raise SkipCheck(f"cannot observe the order of file events on this system: {exc}") from None
    e = entry(ctx, "watched")
    with watch:
        for op, body in (("append", {"path": path, "entry": e}), ("delete", {"path": path, "id": e["id"]})):
            reply = call(ctx, op, body)
            if not reply.ok:
                raise TargetError(f"{op} was refused: {reply.raw[:200]!r}")
            events = watch.read()
            ctx.note(f"{op}: file events {events[:12]}")
            writes, unlocked = unlocked_writes(events)
            if not writes:
                yield Failure(f"{op} was acknowledged but memory.jsonl was never written", events, "a write under the lock")
            if unlocked:
                yield Failure(f"{op} wrote memory.jsonl while no memory.jsonl.lock existed", events,
                              "lock appeared, file written, lock gone", f"event {unlocked[0] + 1} of {len(events)}")


@writer_check(section="Concurrency Control", keyword="MUST", sentence="Remove lock file")
def writer_lock_removed(ctx: Any) -> Iterator[Failure]:
    path = new_file(ctx)
    call(ctx, "append", {"path": path, "entry": entry(ctx, "one")})
    if os.path.exists(path + emp.LOCK_SUFFIX):
        yield Failure("memory.jsonl.lock is left behind after the write", "present", "removed", emp.FILE_NAME + emp.LOCK_SUFFIX)


@writer_check(section="Concurrency Control", keyword="MUST",
              sentence="Apps must implement file locking to prevent concurrent writes from corrupting the file.")
def writer_concurrent_no_loss(ctx: Any) -> Iterator[Failure]:
    path, writers, per = new_file(ctx), 8, 6
    acked: list[str] = []
    errors: list[BaseException] = []
    mutex = threading.Lock()

    def work(w: int) -> None:
        for i in range(per):
            e = entry(ctx, f"w{w}-{i}")
            try:
                ok = ctx.target.call("append", {"path": path, "entry": e}).ok
            except BaseException as exc:  # kept, and raised below unless the file shows damage
                with mutex:
                    errors.append(exc)
                return
            if ok:
                with mutex:
                    acked.append(e["id"])

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    lines = list(emp.iter_lines(path))
    torn = [n for n, _, e in lines if not emp.readable(e)]
    ids = [e["id"] for _, _, e in lines if emp.readable(e)]
    lost = sorted(set(acked) - set(ids))
    dup = len(ids) - len(set(ids))
    ctx.note(f"{writers} writers x {per}: acknowledged={len(acked)} lines={len(lines)}")
    if lost or torn or dup:
        yield Failure(f"{writers} concurrent writers x {per} appends damaged the file",
                      {"acknowledged": len(acked), "lost": len(lost), "torn": len(torn), "duplicated": dup},
                      {"acknowledged": writers * per, "lost": 0, "torn": 0, "duplicated": 0},
                      f"line {torn[0]}" if torn else "$")
    elif errors:  # a crash under contention is the target erroring, never a pass
        raise errors[0]


def stale_lock(ctx: Any, path: str) -> str:
    """Leave the lock a crashed writer leaves, aged past the stale limit of errata emp.stale_lock_s."""
    lock = path + emp.LOCK_SUFFIX
    with open(lock, "w") as fh:
        fh.write("999999\n")
    old = time.time() - float(ctx.option("stale_lock_s")) - 5
    os.utime(lock, (old, old))
    return lock


def append_past_stale_lock(ctx: Any, path: str, e: dict[str, Any]) -> Iterator[Failure]:
    lock = stale_lock(ctx, path)
    pending = Pending(ctx, "append", {"path": path, "entry": e})
    reply = pending.result(5)
    if reply is None:
        if os.path.exists(lock):
            os.unlink(lock)  # let the waiting app finish before the folder goes
        pending.result(ctx.profile.limits.call_deadline_s)
        yield Failure("a lock older than the stale limit blocked the write", "still waiting after 5 s",
                      f"take over a lock older than {ctx.option('stale_lock_s')} s")
    elif not reply.ok:
        yield Failure("the append was refused because of a stale lock", reply.raw[:200], "taken over and written")


@writer_check(section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_stale_lock(ctx: Any) -> Iterator[Failure]:
    yield from append_past_stale_lock(ctx, new_file(ctx), entry(ctx, "after-crash"))


TORN = '{"v":"1.0","id":"'  # what a writer killed mid-line leaves: no closing brace, no newline


@writer_check(section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def writer_after_torn_line(ctx: Any) -> Iterator[Failure]:
    """An append to a file whose last line is torn starts a new line instead of gluing onto it."""
    good, e = entry(ctx, "good"), entry(ctx, "after-torn")
    path = new_file(ctx, [good])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(TORN)
    reply = call(ctx, "append", {"path": path, "entry": e})
    if not reply.ok:
        yield Failure("the append was refused because another line is torn", reply.raw[:200], "appended")
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    for want in (good, e):
        if want["id"] not in got:
            yield Failure("after an append to a file ending in a torn line, an entry is unreadable",
                          [raw for _, raw, _ in emp.iter_lines(path)][-2:], want, f"id {want['id']}")


@writer_check(section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_after_killed_writer(ctx: Any) -> Iterator[Failure]:
    """What a writer killed mid-append leaves, a stale lock and a torn last line, stops neither the
    next append nor the lines already there."""
    good, e = entry(ctx, "good"), entry(ctx, "after-kill")
    path = new_file(ctx, [good])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(TORN)
    failures = list(append_past_stale_lock(ctx, path, e))
    yield from failures
    if failures:
        return
    got = by_id(emp.resolve(emp.iter_lines(path)))
    for want in (good, e):
        if want["id"] not in got:
            yield Failure("after a killed writer's stale lock and torn line, an entry is unreadable", None, want,
                          f"id {want['id']}")
    if os.path.exists(path + emp.LOCK_SUFFIX):
        yield Failure("the stale lock was taken over but never removed", "present", "removed")


@writer_check(section="Overview", keyword="MUST",
              sentence="Multiple apps from different developers can share memory")
def writer_delete_keeps_foreign(ctx: Any) -> Iterator[Failure]:
    victim = entry(ctx, "victim")
    foreign = [json.dumps(entry(ctx, "plain")), json.dumps(entry(ctx, "future", v="3.0", shape=[1])),
               json.dumps(entry(ctx, "extra", unknown={"a": 1}, type="x-other")), "{corrupt but someone's"]
    path = new_file(ctx, [json.dumps(victim), *foreign])
    reply = call(ctx, "delete", {"path": path, "id": victim["id"]})
    if not reply.ok:
        raise TargetError(f"delete was refused: {reply.raw[:200]!r}")
    raws = {raw for _, raw, _ in emp.iter_lines(path)}
    for i, line in enumerate(foreign, 2):
        if line not in raws:
            yield Failure("a delete dropped or changed another app's line", None, line, f"line {i}")
    if victim["id"] in by_id(emp.resolve(emp.iter_lines(path))):
        yield Failure("the deleted entry is still there", victim["id"], "absent")
