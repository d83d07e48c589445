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

from harness.core.model import Failure, TargetError
from harness.core.registry import check
from harness.core.suite import Level, SuiteSpec, register_suite
from harness.formats import emp

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


SUITE = register_suite(SuiteSpec(
    name=emp.SUITE, spec_title=SPEC, version="1.0",
    levels=[Level("file", "File"), Level("reader", "Reader"), Level("writer", "Writer")],
    document_source=written_file, detect=emp.detect, parse=_parse,
))

doc_check = partial(check, suite=emp.SUITE, spec=SPEC, kind="document", level="file")
reader_check = partial(check, suite=emp.SUITE, spec=SPEC, level="reader")
writer_check = partial(check, suite=emp.SUITE, spec=SPEC, level="writer")


# ---- File: each line, on its own -------------------------------------------------------------

def _field_rule(doc: Any, name: str) -> Iterator[Failure]:
    for n, _raw, e in emp.as_lines(doc):
        if isinstance(e, dict):
            for rule, message, value in emp.field_errors(e):
                if rule == name:
                    yield Failure(message, value, None, f"line {n}")


@doc_check(section="Storage Format: JSONL", keyword="MUST",
           sentence="Each memory entry is a single line of JSON")
def lines_are_json_objects(doc: Any, ctx: Any) -> Iterator[Failure]:
    for n, raw, e in emp.as_lines(doc):
        if isinstance(e, emp.LineError):
            yield Failure(f"line is not a JSON object: {e}", raw, "one JSON object per line", f"line {n}")


@doc_check(section="Required Fields", keyword="MUST", sentence="Required Fields: v, id, ts, src, content")
def required_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "required_fields")


@doc_check(section="Required Fields", keyword="MUST", sentence='Format: "MAJOR.MINOR" (e.g., "1.0")')
def version_format(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "version_format")


@doc_check(section="Required Fields", keyword="MUST", sentence="Must be a valid UUID v4")
def id_uuid4(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "id_uuid4")


@doc_check(section="Required Fields", keyword="MUST", sentence="Unix timestamp in milliseconds")
def ts_millis(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "ts_millis")


@doc_check(section="Required Fields", keyword="MUST",
           sentence='Reverse domain notation (e.g., "com.company.appname")')
def src_reverse_domain(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "src_reverse_domain")


@doc_check(section="Required Fields", keyword="MUST", sentence="content (string): Memory content")
def content_string(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "content_string")


@doc_check(section="Optional Fields", keyword="MUST", sentence="Array of lowercase strings")
def tags_lowercase(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "tags_lowercase")


@doc_check(section="Optional Fields", keyword="MUST",
           sentence="type (string) ... meta (object): Arbitrary JSON object ... emb (number[]): Array of floats")
def optional_field_types(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "optional_field_types")


@doc_check(section="Encryption (Optional)", keyword="MUST", sentence="Prefix: encrypted:ALGORITHM:")
def encrypted_content_form(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _field_rule(doc, "encrypted_content_form")


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

@writer_check(section="Concurrency Control", keyword="MUST",
              sentence="Create lock file (memory.jsonl.lock) before writing ... If lock file exists, wait with exponential backoff")
def writer_waits_for_lock(ctx: Any) -> Iterator[Failure]:
    path = new_file(ctx, [entry(ctx, "seed")])
    lock = path + emp.LOCK_SUFFIX
    open(lock, "w").close()  # another app is writing
    before = open(path, "rb").read()
    e = entry(ctx, "waiter")
    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(call(ctx, "append", {"path": path, "entry": e})), daemon=True)
    t.start()
    time.sleep(0.4)
    during = open(path, "rb").read()
    os.unlink(lock)
    t.join(10)
    if during != before:
        yield Failure("the app wrote while another app held memory.jsonl.lock", len(during), len(before))
    if not done or not done[0].ok:
        yield Failure("the append did not finish after the lock was released", done and done[0].status, "ok")
    elif e["id"] not in by_id(view(ctx, path)):
        yield Failure("the append was acknowledged but the entry is not in the file", None, e["id"])


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
    mutex = threading.Lock()

    def work(w: int) -> None:
        for i in range(per):
            e = entry(ctx, f"w{w}-{i}")
            try:
                ok = ctx.target.call("append", {"path": path, "entry": e}).ok
            except Exception:
                ok = False
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


@writer_check(section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_stale_lock(ctx: Any) -> Iterator[Failure]:
    path = new_file(ctx)
    lock = path + emp.LOCK_SUFFIX
    open(lock, "w").close()
    old = time.time() - float(ctx.option("stale_lock_s")) - 5
    os.utime(lock, (old, old))
    e = entry(ctx, "after-crash")
    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(call(ctx, "append", {"path": path, "entry": e})), daemon=True)
    t.start()
    t.join(5)
    if not done or not done[0].ok:
        if os.path.exists(lock):
            os.unlink(lock)  # let the waiting app finish
        t.join(10)
        yield Failure("a lock older than the stale limit blocked the write forever", "still waiting after 5 s",
                      f"take over a lock older than {ctx.option('stale_lock_s')} s")


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
