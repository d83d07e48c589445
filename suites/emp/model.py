"""The EMP oracle: the resolved view of a memory.jsonl after any sequence of appends, updates and deletes
by any number of apps, and for a read (resolve or query) every answer the spec and the errata accept.
Pure: no I/O, no target.

The state is the file as its lines in order (parsed entries; anything that is not an object is a line no
reader uses). Writes (every app writes the same way, so N writers are N callers of the same functions):
`append` adds a line; `update` adds a line of the same id with a newer ts ("Update: Append new entry with
same id (newer ts takes precedence)"); `delete_forms` gives every file a delete may leave ("Delete:
Append tombstone entry or rewrite file without deleted entry": a tombstone of each form E1 accepts, or
the rewrite without the id's lines). Reads: `view_answers` maps each id to the entries a reader may show
for it (None: the id is absent), `query_answers` the same for a query (E9: a query answers from the
resolved view), and `view_problems` says what in a reader's answer fits no accepted answer.

Readings (the defaults accept every plausible one; `Readings` pins them): E3 `ts_tie` (any: either line of
equal ts may win | later-line), E1 `tombstone` (either: both forms delete | deleted-flag | type-tombstone:
only that form is a tombstone, the other an ordinary line), E4 (no option: a tombstone is ordered by its
ts like any other line), E8 (no option: a line of another major is left out, or the whole file refused).
A query's own readings are not options: the check observes which one an answer fits. E62 `query_tags`
(every: each given tag present | any: one of them), E61 `case` (exact | insensitive: a tag or type of
another case), E60 semantic search (`near`: an entry with that very vector is in, one of the same
dimension may be, any other is out); `odd_value_readings` gives, for a parameter value the spec is
silent on, the query each reading reads it as (or a refusal).
Concurrency: `concurrent_answers` is the view N apps writing at once must leave (any interleaving).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memconform.suites.emp import format as emp

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class Readings:
    ts_tie: str = "any"  # E3: "any" | "later-line"
    tombstone: str = "either"  # E1: "either" | "deleted-flag" | "type-tombstone"
    query_tags: str = "every"  # E62: "every" | "any" (several tags asked)
    case: str = "exact"  # E61: "exact" | "insensitive" (a tag or type asked in another case)

    @classmethod
    def pinned(cls, option: Any) -> Readings:
        """The readings a run pins (option: ctx.option, a function of the option's short name)."""
        return cls(ts_tie=str(option("ts_tie")), tombstone=str(option("tombstone")))

    def tombstone_forms(self) -> tuple[str, ...]:
        both = ("deleted-flag", "type-tombstone")
        return both if self.tombstone == "either" else (self.tombstone,)


DEFAULT = Readings()


def is_tombstone(entry: Entry, readings: Readings = DEFAULT) -> bool:
    """A tombstone of a form the readings honour (E1)."""
    meta = entry.get("meta")
    forms = readings.tombstone_forms()
    flagged = isinstance(meta, Mapping) and meta.get("deleted") is True
    return ("type-tombstone" in forms and entry.get("type") == "tombstone") or ("deleted-flag" in forms and flagged)


# ---- the file and the writes ---------------------------------------------------------------------

@dataclass(frozen=True)
class File:
    lines: tuple[Any, ...] = ()  # parsed lines in file order; a non-object is a line no reader uses

    def append(self, entry: Entry) -> File:
        return replace(self, lines=(*self.lines, dict(entry)))

    def newest_ts(self, entry_id: str | None = None) -> Any:
        """The largest ts in the file (of one id when given), or None."""
        stamps = [e["ts"] for e in readable_lines(self.lines) if entry_id is None or e["id"] == entry_id]
        return max(stamps, default=None)

    def update(self, entry_id: str, fields: Entry, ts: Any, base: Entry | None = None) -> File:
        """The line an update appends: `base` (one of the id's acceptable entries, the newest by default)
        with `fields` changed, the same id and `ts`. The caller gives a ts newer than the id's newest;
        one that is not is what `update_problems` reports."""
        start = base if base is not None else next(iter(_winners(self.lines, DEFAULT).get(entry_id, ())), {})
        return self.append({**start, **fields, "id": entry_id, "ts": ts})

    def delete_forms(self, entry_id: str, ts: Any, src: str, readings: Readings = DEFAULT) -> tuple[File, ...]:
        """Every file a delete may leave: a tombstone of each accepted form appended (its ts given by the
        caller, newer than the id's newest), or the file rewritten without the id's lines."""
        tombstones = tuple(self.append(emp.tombstone(entry_id, ts, src, form)) for form in readings.tombstone_forms())
        rewritten = replace(self, lines=tuple(e for e in self.lines if not (isinstance(e, Mapping) and e.get("id") == entry_id)))
        return (*tombstones, rewritten)

    def update_problems(self, entry_id: str, ts: Any) -> list[str]:
        newest = self.newest_ts(entry_id)
        if newest is None:
            return [f"no entry {entry_id!r} to update"]
        if not emp.is_ts(ts) or ts <= newest:
            return [f"the update's ts {ts!r} is not newer than the entry's {newest!r}"]
        return []


def readable_lines(lines: Iterable[Any]) -> list[dict[str, Any]]:
    """The lines a 1.x reader uses (E8: another major is left out; bad lines cost only themselves)."""
    return [e for e in lines if emp.readable(e)]


def may_refuse(lines: Iterable[Any]) -> bool:
    """E8: a reader may refuse a file holding a line of a newer major version."""
    return any(isinstance(e, Mapping) and (v := emp.parse_version(e.get("v"))) is not None and v[0] > emp.MAJOR
               for e in lines)


# ---- the reads --------------------------------------------------------------------------------

def _winners(lines: Sequence[Any], readings: Readings) -> dict[str, tuple[dict[str, Any], ...]]:
    """Per id, the lines that may win: the newest ts (E4: tombstones too); on a tie (E3) any of them, or
    under later-line the last in the file."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for e in readable_lines(lines):
        by_id.setdefault(e["id"], []).append(e)
    out = {}
    for entry_id, versions in by_id.items():
        newest = max(e["ts"] for e in versions)
        tied = [e for e in versions if e["ts"] == newest]
        out[entry_id] = tuple(tied[-1:] if readings.ts_tie == "later-line" else tied)
    return out


def view_answers(lines: Sequence[Any], readings: Readings = DEFAULT) -> dict[str, tuple[dict[str, Any] | None, ...]]:
    """Per id, what a reader's resolved view may hold for it: an entry, or None (the id absent: a
    tombstone won)."""
    return {i: _unique(None if is_tombstone(e, readings) else e for e in won) for i, won in _winners(lines, readings).items()}


def _unique(options: Iterable[dict[str, Any] | None]) -> tuple[dict[str, Any] | None, ...]:
    out: list[dict[str, Any] | None] = []
    for o in options:
        if o not in out:
            out.append(o)
    return tuple(out)


def matches(entry: Entry, query: Entry, readings: Readings = DEFAULT) -> bool:
    """Read Operations 2-5: ts within [start, end], the tags given present (every one, or under E62 any),
    type equal, content containing the text (case-insensitive); and for `near` (E60) the entry may be
    similar (see `similarity`: here "may" counts as a match)."""
    return fit(entry, query, readings) != OUT


IN, OUT, EITHER = "in", "out", "either"


def fit(entry: Entry, query: Entry, readings: Readings = DEFAULT) -> str:
    """IN: the query must return the entry; OUT: it must not; EITHER: it may (a similar vector, E60)."""
    ts = entry["ts"]
    if (query.get("start") is not None and ts < query["start"]) or (query.get("end") is not None and ts > query["end"]):
        return OUT
    if not _tags_fit(entry, query.get("tags"), readings) or not _type_fits(entry, query.get("type"), readings):
        return OUT
    text = query.get("text")
    if text is not None and str(text).lower() not in str(entry.get("content", "")).lower():
        return OUT
    return similarity(entry, query.get("near"))


def _fold(value: Any, readings: Readings) -> Any:
    return value.lower() if readings.case == "insensitive" and isinstance(value, str) else value


def _tags_fit(entry: Entry, asked: Any, readings: Readings) -> bool:
    if not asked:
        return True
    have = {_fold(t, readings) for t in entry["tags"]} if isinstance(entry.get("tags"), list) else set()
    want = {_fold(t, readings) for t in asked}
    return bool(want & have) if readings.query_tags == "any" else want <= have


def _type_fits(entry: Entry, asked: Any, readings: Readings) -> bool:
    return asked is None or _fold(entry.get("type"), readings) == _fold(asked, readings)


def similarity(entry: Entry, near: Any) -> str:
    """E60: "Read entries with similar emb vectors": an entry whose vector is the one asked for is similar
    under any measure (IN); one of the same dimension may be, by a threshold the spec leaves open
    (EITHER); one without a vector, or of another dimension, cannot be compared (OUT)."""
    if near is None:
        return IN
    emb = entry.get("emb")
    if not isinstance(emb, list) or not isinstance(near, list) or len(emb) != len(near) or not near:
        return OUT
    return IN if all(float(a) == float(b) for a, b in zip(emb, near, strict=True)) else EITHER


def query_answers(lines: Sequence[Any], query: Entry, readings: Readings = DEFAULT) -> dict[str, tuple[dict[str, Any] | None, ...]]:
    """Per id, what a query may return for it (E9: from the resolved view; None: not returned)."""
    out = {}
    for i, options in view_answers(lines, readings).items():
        shown: list[dict[str, Any] | None] = []
        for e in options:
            how = OUT if e is None else fit(e, query, readings)
            shown += [e] if how == IN else [None] if how == OUT else [e, None]
        out[i] = _unique(shown)
    return out


REFUSED = "refused"  # a reading under which the query is refused (a rejected reply)
NOTHING: dict[str, Any] = {"text": "\x00 matches no content"}  # a reading under which the query matches nothing


def odd_value_readings(query: Entry, name: str) -> dict[str, tuple[Any, Readings]]:
    """E61/E60: for a parameter value the spec is silent on (null, a string bound, an empty or upper-case
    tag, a type in another case, an empty type, a vector of no entry's length), each plausible reading
    as (the query it reads the request as, or REFUSED; the readings it judges under)."""
    value = query.get(name)
    without = {k: v for k, v in query.items() if k != name}
    out: dict[str, tuple[Any, Readings]] = {"refused": (REFUSED, DEFAULT)}
    if value is None or value == [] or value == "":
        out["read as absent"] = (without, DEFAULT)
    if name in ("tags", "type", "near") and value is not None:
        out["matching nothing"] = ({**without, **NOTHING}, DEFAULT)
    if isinstance(value, str) and name in ("start", "end"):
        try:
            out["compared as the number"] = ({**without, name: float(value)}, DEFAULT)
        except ValueError:
            pass
    if isinstance(value, str) and name == "tags":
        out["read as one tag"] = ({**without, "tags": [value]}, DEFAULT)
    if name in ("tags", "type") and value:
        out["exact"] = (query, DEFAULT)
        out["case-insensitive"] = (query, replace(DEFAULT, case="insensitive"))
    if name == "near":
        out["near ignored"] = (without, DEFAULT)
    return out


def concurrent_answers(writes: Iterable[tuple[str, Entry, bool]], deletes: Iterable[tuple[str, bool]],
                       readings: Readings = DEFAULT) -> dict[str, tuple[dict[str, Any] | None, ...]]:
    """The view N apps writing one file at once must leave, whatever the interleaving: `writes` are
    (id, entry, acknowledged) appends, `deletes` (id, acknowledged) deletes by the app that wrote the id,
    after its append (so its tombstone is newer). An acknowledged append is in the view unless an
    acknowledged delete removed it; an append or a delete that was refused or failed may have happened
    or not. Ids of different apps never interact, so every interleaving leaves the same answers: each
    id's are those of the model's File after that app's own writes."""
    gone = dict(deletes)
    out: dict[str, tuple[dict[str, Any] | None, ...]] = {}
    for entry_id, entry, acked in writes:
        file = File().append({**entry, "id": entry_id})
        histories = [file] if acked else [file, File()]
        if entry_id in gone:
            deleted = [f.delete_forms(entry_id, entry["ts"] + 1, str(entry.get("src", "")), readings)[-1] for f in histories]
            histories = deleted if gone[entry_id] else histories + deleted
        out[entry_id] = _unique(a for f in histories for a in view_answers(f.lines, readings).get(entry_id, (None,)))
    return out


def view_problems(seen: Iterable[Any], answers: Mapping[str, Sequence[Entry | None]],
                  same: Any = None) -> list[str]:
    """What in a reader's answer fits no accepted answer: an id shown twice, an id that should be absent,
    one missing, or an entry equal to none of the id's acceptable entries (`same(a, b)` compares two
    entries; by default, equal as JSON)."""
    equal = same or (lambda a, b: dict(a) == dict(b))
    shown: dict[Any, list[Any]] = {}
    for e in seen:
        shown.setdefault(e.get("id") if isinstance(e, Mapping) else None, []).append(e)
    problems = [f"id {i!r} is in the answer {len(es)} times" for i, es in shown.items() if len(es) > 1]
    problems += [f"id {i!r} is in the answer but no line of the file gives it" for i in shown if i not in answers]
    for i, options in answers.items():
        entries = [o for o in options if o is not None]
        if i not in shown:
            if None not in options:
                problems.append(f"id {i!r} is missing; expected {_said(entries)}")
        elif not any(equal(o, shown[i][0]) for o in entries):
            problems.append(f"id {i!r} is shown as {_said([shown[i][0]])}; expected "
                            + ("it absent" if not entries else _said(entries) + (" or absent" if None in options else "")))
    return problems


def _said(entries: Sequence[Entry]) -> str:
    return " or ".join(repr(e.get("content"))[:60] + f" (ts {e.get('ts')!r})" for e in entries) or "nothing"


def any_of(files: Iterable[File], readings: Readings = DEFAULT) -> dict[str, tuple[dict[str, Any] | None, ...]]:
    """Per id, what a reader may show when the file is any one of `files` (a write cut short leaves the
    file as it was before the write or as the write left it): the union of their answers, an id one of
    them lacks allowed absent."""
    views = [view_answers(f.lines, readings) for f in files]
    ids = [i for v in views for i in v]
    return {i: _unique(o for v in views for o in v.get(i, (None,))) for i in dict.fromkeys(ids)}


def write_results(before: File, op: str, entry_id: str, fields: Entry, ts: Any, src: str,
                  readings: Readings = DEFAULT) -> tuple[File, ...]:
    """Every file one write may leave: an append of `fields` as a new entry, an update of `entry_id` with
    `fields`, or a delete of it (each form, E1)."""
    if op == "append":
        return (before.append({**fields, "id": entry_id}),)
    if op == "update":
        return (before.update(entry_id, fields, ts),)
    return before.delete_forms(entry_id, ts, src, readings)
