"""The canonical record: the union of what the formats can say about one memory, and a document of them.

Every translator reads its format into a `Document` and writes one out; the ledger compares what each
canonical field became. Times are one spelling (UTC, milliseconds) so that two readings compare equal.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

# the per-record fields of the canonical record, in ledger order
FIELDS = (
    "text", "id", "type", "created_at", "updated_at", "accessed_at", "valid_from", "valid_until",
    "origin_tool", "origin_session", "origin_user", "observed_at", "provenance", "tags", "namespace",
    "protection", "dna", "sensitivity", "confidence", "embedding", "embedding_model", "content_hash",
    "extensions", "deleted",
)
# document-level things (the ledger counts them per item)
DOCUMENT_FIELDS = ("subject", "producer", "graph", "other_objects")

# the canonical type vocabulary: the type names of the formats this repository ships (each vocabulary's
# names, from its spec); any other string is a free type and passes as itself
TYPES = (
    "fact", "episodic", "goal", "error", "preference", "decision", "identity", "pitfall", "procedure", "life_event",
    "relationship", "belief", "skill", "semantic", "procedural", "event", "conversation", "note",
    "personas", "entity_memory", "knowledge_base", "toolbox", "workflow_memory", "skillbox", "conversation_memory",
    "summaries", "tool_log", "short_term_memory", "semantic_cache", "shared_memory", "agents",
)

HATCH_KEY = "memconform_port"
NO_ID = "#"  # a record with no id of its own is named "#<position>": never a native id, never compared  # the one key a translation adds to a format's escape hatch


@dataclass
class Record:
    """One memory. `ids` holds every id the record has had, by format (the current one included)."""

    ids: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # canonical field -> value (absent: the format had none)
    # how the source spelled a value whose canonical form differs (a date-time's offset, a type's native name):
    # a writer that writes another spelling says `respelled`, not `kept`
    spelled: dict[str, Any] = field(default_factory=dict)
    restored: list[str] = field(default_factory=list)  # fields the source's escape-hatch block restored
    refused_restore: list[str] = field(default_factory=list)  # block values that contradict the visible field
    # what the record's own fields showed where the block restored another value: a target that drops a field
    # the block also holds is still seen to drop it (port compares these too)
    shown: dict[str, Any] = field(default_factory=dict)
    ledger_key: str = ""  # the name a ledger gives the record when its own id is not unique in the document

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def has(self, name: str) -> bool:
        return self.values.get(name) is not None

    def key(self, fmt: str) -> str:
        return self.ids.get(fmt, "")

    def name(self, fmt: str) -> str:
        """How the ledger names the record: its id in `fmt`, or a unique name when that id repeats."""
        return self.ledger_key or self.ids.get(fmt, "")

    def time(self, name: str, raw: Any) -> None:
        """A date-time read from a native field: its canonical form, the native spelling remembered."""
        self.values[name] = instant(raw) or raw
        if isinstance(raw, str):
            self.spelled[name] = raw


@dataclass
class Document:
    """What one exported document says: its records and the document-level objects."""

    source: str  # the format it was read from
    records: list[Record] = field(default_factory=list)
    subject: dict[str, Any] | None = None
    producer: str | None = None
    exported_at: str | None = None
    exported_spelled: str | None = None  # the export time as the source wrote it (offset, precision)
    # envelope items no other format has a place for (path -> value): each is a document-level ledger line
    envelope: dict[str, Any] = field(default_factory=dict)
    graph: list[dict[str, Any]] = field(default_factory=list)  # edges, entities, links (each item tagged with its kind)
    other_objects: list[dict[str, Any]] = field(default_factory=list)

    def live(self) -> list[Record]:
        return [r for r in self.records if not r.get("deleted")]


@dataclass(frozen=True)
class Reading:
    """A format's reader in three steps, so that the same code reads a document held whole (`read`) and one whose
    record sections are handed in windows (sourced.py): `begin` reads everything but the records (a Document without
    them, and the state its records need), `records` makes the records of one section's items, in order, and
    `finish` completes the Document from what the records left in the state (the artifacts no record cites, say)."""

    sections: tuple[str, ...]  # the arrays that hold the records, read in this order
    begin: Callable[[dict[str, Any]], tuple[Document, Any]]
    records: Callable[[Any, str, Iterable[Any]], Iterator[Record]]  # (state, section, its items)
    finish: Callable[[Document, Any], None] | None = None
    group: str | None = None  # the top-level object holding the sections (a format's stores of records); None: the top level
    # the state a pass after the first starts from, made from the first pass's once finished: what a record needs that
    # only the whole first pass saw (a split record's later parts); None: each pass starts from `begin`'s
    again: Callable[[Any], Any] | None = None

    def read(self, doc: dict[str, Any]) -> Document:
        out, state = self.begin(doc)
        holder = doc.get(self.group) if self.group is not None else doc
        for section in self.sections:
            found = holder.get(section) if isinstance(holder, dict) else None
            # the parsed items let go once read (consuming)
            out.records.extend(self.records(state, section, drain(found if isinstance(found, list) else [])))
        if self.finish is not None:
            self.finish(out, state)
        return out

    def windowed(self, section: str) -> str:
        """The section's name as the window reader gives it (`<group>.<section>` inside a group)."""
        return f"{self.group}.{section}" if self.group is not None else section


@dataclass(frozen=True)
class LineReading:
    """A text format's reader by lines (JSON Lines), so that a file is read a line at a time (sourced.py) into the
    records `read` makes of its whole text: `line` parses one line's bytes (its line end cut; None: a blank line),
    `chosen` is handed (offset in the file, parsed value) of every other line in file order and gives the offsets
    of the lines that become records, in the records' order (say, the newest line of each id, ordered by time),
    keeping only what choosing needs; `record` makes one chosen line's record."""

    line: Callable[[bytes], Any]
    chosen: Callable[[Iterable[tuple[int, Any]]], Sequence[int]]
    record: Callable[[Any], Record]


class OnePass(list):  # type: ignore[type-arg]
    """A Document's records made as they are read (sourced.py): a writer that reads its records in one pass
    (`written_records`, `drain`) meets them as it would a list, and never holds them all. `len` is the count a
    first pass found. A writer that needs facts of every record before it writes the first (a subject seeded from
    every id, an envelope's most common model) takes them in a pass of its own, `again(doc)`, which makes the
    records anew and holds none. A second writing pass would meet nothing, so it raises: a harness bug, never an
    empty output."""

    def __init__(self, count: int, make: Callable[[], Iterator[Record]], again: Callable[[], Iterator[Record]]) -> None:
        super().__init__()
        self.length, self._make, self._again = count, make, again
        self.spent = False

    def __len__(self) -> int:
        return self.length

    def __bool__(self) -> bool:
        return self.length > 0

    def __iter__(self) -> Iterator[Record]:
        if self.spent:
            raise RuntimeError("the records read in windows were already written: a writer read them twice")
        self.spent = True
        return self._make()

    def __getitem__(self, index: Any) -> Any:
        raise RuntimeError("the records read in windows are read in one pass, not by position")

    def again(self) -> Iterator[Record]:
        return self._again()


def again(doc: Document) -> Iterable[Record]:
    """The records for a pass that gathers facts before the writing pass: the list itself, or a OnePass's records
    made anew (named and scrubbed as the writing pass's are; what that pass notes in the ledger is not noted twice)."""
    return doc.records.again() if isinstance(doc.records, OnePass) else doc.records


def id_lists(doc: Document) -> list[list[tuple[str, str]]]:
    """Every record's ids as sorted pairs, sorted (the seed of an invented subject), without the writing pass."""
    return sorted(sorted(r.ids.items()) for r in again(doc))


_T = TypeVar("_T")
# set while a translation may let go of what it has read: the CLI's, which keeps neither the parsed source nor
# the canonical records (translate.py); the library's translate() leaves both to its caller, whole
_CONSUMING: ContextVar[bool] = ContextVar("memconform_port_consuming", default=False)


@contextlib.contextmanager
def consuming(allowed: bool = True) -> Iterator[None]:
    """Inside it, `drain` lets go of each item once it has been handed on."""
    token = _CONSUMING.set(allowed)
    try:
        yield
    finally:
        _CONSUMING.reset(token)


def written_records(doc: Document, ledger: Any) -> Iterator[tuple[Record, str]]:
    """(record, its ledger name) for each record a writer writes, drained (one pass): a deleted record is
    not written, and the ledger says so where it meets it."""
    for r in drain(doc.records):  # each canonical record let go once written (consuming)
        rid = r.name(doc.source)
        if r.get("deleted"):
            ledger.note(rid, "deleted", "lost", "a deleted record is not written")
            continue
        yield r, rid


def drain(items: list[_T]) -> Iterator[_T]:
    """The items one by one for the one pass a reader or writer makes over a big list (parsed source records,
    canonical records). Inside `consuming()` each slot is emptied (None) as its item is handed on, so the memory
    of what was read is freed while its translation is built, never held beside all of it; a second pass over
    the list would meet None, so a reader or writer drains only its last pass over a list."""
    if not _CONSUMING.get() or isinstance(items, OnePass):  # a OnePass holds nothing to let go
        yield from items
        return
    for i in range(len(items)):
        item = items[i]
        items[i] = None  # type: ignore[assignment]  # the slot is emptied: the caller promised no other pass
        yield item


LEAP = ":60"  # a leap second (23:59:60 UTC): RFC 3339 allows it, datetime cannot hold it


def _parse(value: Any) -> tuple[dt.datetime, bool] | None:
    """(the instant, whether it was written as a leap second) of an ISO 8601 / RFC 3339 date-time."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    leap = text[16:19] == LEAP
    if leap:  # read as the second before; the canonical spelling puts :60 back
        text = text[:17] + "59" + text[19:]
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC), leap


# in a canonical extension object: the record's fields its format names nowhere (x- fields, unknown fields),
# beside the extension object itself; restored by the same format, carried by any other (placement.py)
OUTSIDE = "outside"


def jcopy(value: Any) -> Any:
    """A copy of a JSON value (dicts and lists rebuilt, scalars shared): what copy.deepcopy does for JSON,
    without its memo (several times faster over 100k records)."""
    if type(value) is dict:
        return {k: jcopy(v) for k, v in value.items()}
    if type(value) is list:
        return [jcopy(v) for v in value]
    if isinstance(value, (dict, list)):
        return copy.deepcopy(value)
    return value


def instant(value: Any) -> str | None:
    """A date-time in the canonical spelling (UTC, Z, milliseconds, or microseconds when it has them; a leap
    second keeps its :60), or None when it names no instant."""
    return _instant(value) if isinstance(value, str) and len(value) <= 64 else None


@functools.lru_cache(maxsize=8192)  # a writer asks about the same few values of a record several times
def _instant(value: str) -> str | None:
    parsed = _parse(value)
    if parsed is None:
        return None
    return _spelled(*parsed)


def _spelled(when: dt.datetime, leap: bool = False) -> str:
    """The canonical spelling of a UTC datetime (a leap second: the second before it, marked)."""
    fraction = f"{when.microsecond // 1000:03d}" if when.microsecond % 1000 == 0 else f"{when.microsecond:06d}"
    text = when.strftime("%Y-%m-%dT%H:%M:%S.") + fraction + "Z"
    return text[:17] + "60" + text[19:] if leap else text


def offset_of(value: Any) -> dt.timedelta | None:
    """The UTC offset a date-time was written with (None: not a date-time; no offset reads as UTC)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    text = text[:-1] + "+00:00" if text.endswith(("z", "Z")) else text
    text = text[:17] + "59" + text[19:] if text[16:19] == LEAP else text
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.utcoffset() or dt.timedelta(0)


def writable(iso: str) -> str:
    """A canonical instant every format's date-time readers accept: a leap second becomes the second after it
    (as POSIX time counts it); the caller says so in the ledger and carries the exact value."""
    if iso[16:19] != LEAP:
        return iso
    base = dt.datetime.fromisoformat(iso[:17] + "59" + iso[19:].replace("Z", "+00:00")) + dt.timedelta(seconds=1)
    return instant(base.isoformat()) or iso


def from_millis(ms: Any) -> str | None:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms != ms or abs(ms) > 2**53:
        return None
    try:  # a fraction of a millisecond is kept to the microsecond (a format may allow any non-negative number)
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)
    except OverflowError:
        return None
    return _spelled(when)  # what instant(when.isoformat()) gives, without writing and parsing the text


def to_millis(iso: str) -> int:
    when = dt.datetime.fromisoformat(writable(iso).replace("Z", "+00:00"))
    return (when - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(milliseconds=1)


def seconds_form(iso: str, keep_leap: bool = False) -> str:
    """A canonical instant as ISO 8601 UTC with a fraction only when it is not zero. A leap second stays :60
    for a format whose checks accept RFC 3339's leap second (`keep_leap`); elsewhere it is written
    as the second after it (see `writable`)."""
    return (iso if keep_leap else writable(iso)).replace(".000Z", "Z")


def digest(*parts: Any) -> bytes:
    """A stable hash of values: the seed of every id a translation invents (same input, same id)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).digest()


def primary_id(record: Record) -> str:
    """The id the record was read under (its source format's id), used to name it in ledgers."""
    return record.ids.get("_source", "") or next(iter(record.ids.values()), "")


def now_canonical() -> str:
    return instant(dt.datetime.now(dt.UTC).isoformat()) or ""
