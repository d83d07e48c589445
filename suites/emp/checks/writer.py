"""Writer checks: what an append, a delete and an update do to the file, and to other apps' lines."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure, SkipCheck, TargetError, Unsupported
from memconform.suites.emp import format as emp
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks.common import (
    BASE_TS,
    append,
    by_id,
    call,
    control_without_bad_lines,
    despite_bad_lines,
    entry,
    new_file,
    read_bytes,
    target_view,
    written_id,
)
from memconform.suites.emp.checks.writing import dropped, foreign_lines, in_order
from memconform.suites.emp.deviations import (
    FOREIGN_LINES_DROPPED,
    FOREIGN_LINES_DROPPED_WHAT,
    UPDATE_AS_NEW_ID,
)
from memconform.suites.emp.suite import SUITE


def first_difference(before: bytes, after: bytes) -> str:
    lines_before, lines_after = before.split(b"\n"), after.split(b"\n")
    for n, (a, b) in enumerate(zip(lines_before, lines_after, strict=False), 1):
        if a != b:
            return f"line {n}"
    return f"line {min(len(lines_before), len(lines_after))}"


def good_only(lines: list[bytes]) -> list[bytes]:
    """The lines any reader can use (valid UTF-8, JSON): the same file without its bad lines, for a control."""
    return [raw for raw in lines if not isinstance(emp.decode(raw), emp.Replaced)
            and isinstance(emp.parse_line(emp.decode(raw)), dict)]


@SUITE.check(level="writer", section="Write Operations", keyword="MUST", sentence="Append: Add new entry to end of file")
def writer_append_keeps_foreign(ctx: CheckContext) -> Iterator[Failure]:
    """An append leaves every byte already in the file where it was, including other apps' CRLF
    line ends, spellings and invalid UTF-8, and adds the entry after them. The same append to the
    file without its line of invalid UTF-8 is the control."""
    foreign = foreign_lines(ctx)
    lines = [*foreign[:2], foreign[2] + b"\r", *foreign[3:]]
    control_without_bad_lines(ctx, "append", {"path": new_file(ctx, good_only(lines)), "entry": entry(ctx, "control")})
    path = new_file(ctx, lines)
    before = read_bytes(path)
    e = entry(ctx, "appended")
    reply, failure = despite_bad_lines(ctx, "append", {"path": path, "entry": e}, "another app's line of invalid UTF-8")
    if failure is not None:
        yield failure
        return
    written = written_id(ctx, reply, e)
    after = read_bytes(path)
    if not after.startswith(before):
        yield Failure("an append changed or moved lines already in the file", after[:600], before[:600],
                      first_difference(before, after))
    if written not in by_id(emp.resolve(emp.iter_text(after[len(before):] if after.startswith(before) else after))):
        yield Failure("the appended entry is not after the lines already there", after[len(before):][:300], written)


@SUITE.check(level="writer", section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def writer_delete_keeps_foreign(ctx: CheckContext) -> Iterator[Failure]:
    """A delete, by tombstone or by rewrite (errata E1, E13), keeps every other app's line byte for
    byte and in order, and the target's own view no longer shows the entry. The same delete on the
    file without its corrupt and non-UTF-8 lines is the control."""
    victim = entry(ctx, "victim")
    foreign = foreign_lines(ctx)
    corrupt = b"{corrupt but someone's"
    lines = [json.dumps(victim).encode(), *foreign[:2], corrupt, *foreign[2:]]
    twin = entry(ctx, "victim-control")
    control_without_bad_lines(ctx, "delete", {"path": new_file(ctx, [json.dumps(twin).encode(), *good_only(lines[1:])]),
                                              "id": twin["id"]})
    path = new_file(ctx, lines)
    before = read_bytes(path)
    reply, failure = despite_bad_lines(ctx, "delete", {"path": path, "id": victim["id"]},
                                       "a corrupt line and a line of invalid UTF-8 (another app's)")
    if failure is not None:
        yield failure
        return
    after = read_bytes(path)
    lines = after.split(b"\n")
    appended = after.startswith(before)
    kinds = frozenset(tombstone_kind(e) for _, _, e in emp.iter_text(after[len(before):])) if appended else frozenset()
    delete_form_seen(ctx, readings.Deletion(appended, kinds), None if appended else corrupt in lines)
    for i in in_order(foreign, lines):
        if dropped(foreign[i], lines):  # gone, not changed: later checks' lines of other apps missing are its doing
            established.establish(ctx, FOREIGN_LINES_DROPPED, FOREIGN_LINES_DROPPED_WHAT)
        yield Failure("a delete dropped, changed or reordered another app's line", None, foreign[i].decode("utf-8", "replace"),
                      f"foreign line {i + 1}")
    seen = target_view(ctx, path)
    if seen is not None:
        if victim["id"] in by_id(seen):
            yield Failure("the target's own view still shows the deleted entry", victim["id"], "absent")
    elif victim["id"] in by_id(emp.resolve(emp.iter_text(after))):
        yield Failure("the deleted entry is still there (no tombstone form the harness knows, and no line removed)",
                      victim["id"], "absent", readings=("tombstone is deleted-flag or type-tombstone",))


def delete_form_seen(ctx: CheckContext, deletion: readings.Deletion, corrupt_kept: bool | None) -> bool:
    """Record the form a delete took (E1) and, for a rewrite, what it made of a corrupt line (E13). A delete
    of no known form records nothing (False): whether the entry is gone is judged apart."""
    seen = table.observe(ctx, "E1", Asked(readings.DELETED), deletion)
    if corrupt_kept is not None:
        table.observe(ctx, "E13", Asked(readings.REWRITTEN), corrupt_kept)
    return bool(seen.matched)


def tombstone_kind(e: Any) -> str:
    if not isinstance(e, dict):
        return "a line that is not an entry"
    if e.get("type") == "tombstone":
        return readings.TYPE_TOMBSTONE_LINE
    if isinstance(e.get("meta"), dict) and e["meta"].get("deleted") is True:
        return readings.DELETED_FLAG_LINE
    return "a line of another form: " + json.dumps(sorted(e))[:80]


@SUITE.check(level="writer", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def writer_update_same_id(ctx: CheckContext) -> Iterator[Failure]:
    """An update appends a line with the same id and a newer ts; never a new id, never in place."""
    old = entry(ctx, "to-update", ts=BASE_TS)
    foreign = foreign_lines(ctx)[:2]
    path = new_file(ctx, [old, *foreign])
    before = read_bytes(path)
    new_content = ctx.unique("updated")
    try:
        reply = call(ctx, "update", {"path": path, "id": old["id"], "entry": {"content": new_content}})
    except Unsupported as exc:
        raise SkipCheck(f"the target offers no update operation: {exc.reason}", not_applicable=True) from None
    if not reply.ok:
        raise TargetError(f"update was refused: {reply.raw[:200]!r}")
    after = read_bytes(path)
    if not after.startswith(before):
        yield Failure("an update changed lines already in the file instead of appending", after[:600], before[:600],
                      first_difference(before, after))
    new_lines = [e for _, _, e in emp.iter_text(after[len(before):] if after.startswith(before) else after)
                 if isinstance(e, dict) and e.get("content") == new_content]
    if not new_lines:
        yield Failure("the update wrote no line with the new content", after[len(before):][:300], new_content)
    for e in new_lines:
        if e.get("id") != old["id"]:
            established.establish(ctx, UPDATE_AS_NEW_ID, "the writer appends an update under a new id")
            yield Failure("the update was written as a new id instead of the same id", e.get("id"), old["id"])
        elif not (emp.is_ts(e.get("ts")) and e["ts"] > old["ts"]):
            yield Failure("the update's ts is not newer than the entry it updates", e.get("ts"), f"> {old['ts']}")
    # what any reader must see after it: the model's answers for the file as it now is (ties included)
    answers = model.view_answers([e for _, _, e in emp.iter_text(after)]).get(old["id"], (None,))
    if not any(e is not None and e.get("content") == new_content for e in answers):
        got = [e.get("content") if e is not None else None for e in answers]
        yield Failure("after the update the newest line of the id is not the update", got, new_content, f"id {old['id']}")


DAY_MS = 86_400_000


@SUITE.check(level="writer", section="Required Fields", keyword="MUST", sentence="Unix timestamp in milliseconds")
def writer_ts_millis(ctx: CheckContext) -> Iterator[Failure]:
    """An entry appended now carries a ts within a day of now in milliseconds (a writer may stamp its
    own): seconds, microseconds or a fixed number are a thousand times off."""
    path = new_file(ctx)
    now = int(time.time() * 1000)
    written = append(ctx, path, entry(ctx, "now", ts=now))
    got = by_id(emp.resolve(emp.iter_lines(path))).get(written)
    if got is None:
        yield Failure("the acknowledged entry is not in the file", None, written)
    elif not (emp.is_ts(got.get("ts")) and abs(got["ts"] - now) <= DAY_MS):
        yield Failure("an entry written now has a ts that is not now in Unix milliseconds", got.get("ts"),
                      f"within a day of {now}", f"id {written}")


OWN_CHOICES = 5  # appends without id and ts: a generator getting the variant wrong 3 times in 4 hides in 5 at 0.1 %


def own_choices(ctx: CheckContext) -> list[dict[str, Any]]:
    """The lines the writer wrote for appends handed no `id` and no `ts` (the writer picks both, errata
    E14), asked once per run and shared by the two checks of them. A writer that refuses such an entry
    takes the caller's id and ts: nothing of its own to judge (SkipCheck)."""
    def ask() -> list[dict[str, Any]] | str:
        path, lines = new_file(ctx), []
        for i in range(OWN_CHOICES):
            e = entry(ctx, f"own-{i}")
            e.pop("id"), e.pop("ts")
            before = len(read_bytes(path))
            reply = call(ctx, "append", {"path": path, "entry": e})
            if not reply.ok:
                return f"an append without id and ts was refused ({reply.raw[:120]!r}): the writer takes the caller's"
            new = [x for _, _, x in emp.iter_text(read_bytes(path)[before:]) if isinstance(x, dict)]
            mine = [x for x in new if x.get("content") == e["content"]]
            if not mine:
                raise TargetError(f"an append without id and ts was acknowledged but its line is not in the file: {new[:2]!r:.200}")
            lines.append(mine[-1])
        return lines
    found: list[dict[str, Any]] | str = ctx.once("emp.own-id-and-ts", ask)
    if isinstance(found, str):
        raise SkipCheck(found, not_applicable=True)
    return found


@SUITE.check(level="writer", section="Required Fields", keyword="MUST", sentence="Must be a valid UUID v4")
def writer_own_id_uuid4(ctx: CheckContext) -> Iterator[Failure]:
    """The ids a writer picks itself (appends handed none): UUIDs with the RFC 4122 variant (10xx in the
    first digit of the fourth group), every one distinct; version 4 under `emp.id_version=v4`, by default
    any RFC 4122 version, as for ids handed to readers (errata E10, which records the versions seen)."""
    lines = own_choices(ctx)
    ids = [x.get("id") for x in lines]
    v4_only = ctx.option("id_version") == "v4"
    wrong = [i for i in ids if not (isinstance(i, str) and emp.UUID_RE.match(i) and i[19] in "89abAB")
             or v4_only and not emp.UUID4_RE.match(str(i))]
    ctx.note(f"the writer's own ids: versions {sorted({str(i)[14] for i in ids if isinstance(i, str) and len(i) > 14})}")
    if wrong:
        yield Failure("an id the writer picked is not an RFC 4122 UUID" + (" v4" if v4_only else "") + " (its variant digit is 8, 9, a or b)",
                      wrong[:4], "xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx", "$.id", f"{len(wrong)} of {len(ids)} ids")
    if len(set(map(str, ids))) != len(ids):
        yield Failure("the writer picked the same id twice", ids, "a unique id per new entry", "$.id")


@SUITE.check(level="writer", section="Required Fields", keyword="MUST", sentence="Unix timestamp in milliseconds")
def writer_own_ts_millis(ctx: CheckContext) -> Iterator[Failure]:
    """The ts a writer stamps itself (appends handed none): now, in Unix milliseconds (within a day of the
    harness's clock: seconds or microseconds are a thousand times off)."""
    started = int(time.time() * 1000)
    lines = own_choices(ctx)
    ended = int(time.time() * 1000)
    wrong = [x.get("ts") for x in lines if not (emp.is_ts(x.get("ts")) and started - DAY_MS <= x["ts"] <= ended + DAY_MS)]
    if wrong:
        yield Failure("a ts the writer stamped itself is not now in Unix milliseconds", wrong[:4],
                      f"within a day of {started}", "$.ts", f"{len(wrong)} of {len(lines)} lines")


@SUITE.check(level="writer", section="Versioning", keyword="MUST", sentence="Current version: 1.0")
def writer_version_1x(ctx: CheckContext) -> Iterator[Failure]:
    """A writer of this version writes lines of major 1, whatever it adds."""
    path = new_file(ctx)
    written = append(ctx, path, entry(ctx, "version"))
    got = by_id([e for _, _, e in emp.iter_lines(path) if isinstance(e, dict)]).get(written)
    if got is None:
        yield Failure("the acknowledged entry is not in the file", None, written)
    elif (emp.parse_version(got.get("v")) or (None,))[0] != emp.MAJOR:
        yield Failure("a 1.0 writer wrote a line of another major version", got.get("v"), '"1.x"', f"id {written}")


INVALID_ENTRIES: dict[str, dict[str, Any]] = {  # label -> the fields that break the schema
    "content a number": {"content": 42},
    "tags in upper case": {"tags": ["UI"]},
    "id not a UUID": {"id": "not-a-uuid"},
    "ts a string": {"ts": "1701234567890"},
}


@SUITE.check(level="writer", section="Best Practices", keyword="SHOULD", sentence="Validate entries: Check schema before writing")
def writer_validates_before_writing(ctx: CheckContext) -> Iterator[Failure]:
    """An entry that breaks the schema is refused, or written repaired; never written as given. The
    same entry with the one broken field repaired must be accepted first (the positive control)."""
    path = new_file(ctx)
    reply = call(ctx, "append", {"path": path, "entry": entry(ctx, "valid")})
    if not reply.ok:
        raise ControlRefused(f"a valid entry was refused: {reply.raw[:200]!r}")
    for label, broken in INVALID_ENTRIES.items():
        before = read_bytes(path)
        bad = {**entry(ctx, "invalid-" + label.replace(" ", "-")), **broken}
        reply = call(ctx, "append", {"path": path, "entry": bad})
        new = [e for _, _, e in emp.iter_text(read_bytes(path)[len(before):])]
        wrong = [e for e in new if not isinstance(e, dict) or emp.hard_errors(e)]
        if wrong:
            yield Failure(f"an entry with {label} was written as given", wrong[0], "refused, or written valid",
                          f"{label}")
        elif reply.ok and not new:
            yield Failure(f"an entry with {label} was acknowledged but nothing was written", reply.status,
                          "refused, or written valid", label)


def written_file(ctx: CheckContext) -> list[tuple[int, str, Any]]:
    """The file the target writes: a few appends (with tags, type, meta, emb), an update and a delete,
    and the entries of INVALID_ENTRIES, which the writer must refuse or write valid: written as given,
    they make the file break the File level's rules (an id that is no UUID fails emp.id_uuid4)."""
    path = new_file(ctx)
    # non-ASCII and astral content: a writer that encodes other than UTF-8 shows in emp.lines_utf8
    first = entry(ctx, "doc-a", type="preference", tags=["ui", "theme"])
    first["content"] += " caf\u00e9 \U0001F600"
    second = entry(ctx, "doc-b", ts=1701234568000, meta={"priority": "high"}, emb=[0.1, 0.2])
    ids = []
    for e in (first, second):
        e.pop("src")
        ids.append(append(ctx, path, e))
    try:  # the update is optional here: the file is judged on what the target did write
        if not call(ctx, "update", {"path": path, "id": ids[1], "entry": {"content": ctx.unique("doc-b2")}}).ok:
            ctx.note("the update was refused; the file is judged without it (emp.writer_update_same_id judges updates)")
    except Unsupported:
        pass
    reply = call(ctx, "delete", {"path": path, "id": ids[0]})
    if not reply.ok:
        raise TargetError(f"delete was refused: {reply.raw[:200]!r}")
    for label, broken in INVALID_ENTRIES.items():
        before = len(read_bytes(path))
        reply = call(ctx, "append", {"path": path, "entry": {**entry(ctx, "doc-" + label.replace(" ", "-")), **broken}})
        written = [e for _, _, e in emp.iter_text(read_bytes(path)[before:])]
        as_given = [e for e in written if isinstance(e, dict) and all(e.get(k) == v for k, v in broken.items())]
        ctx.note(f"an entry with {label}: " + ("written as given (the file checks judge it)" if as_given
                                               else "written repaired" if written else f"not written ({reply.status})"))
    return list(emp.iter_lines(path))


__all__ = ["written_file", "written_id"]
