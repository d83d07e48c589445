"""The canonical record: the union of what the five formats can say about one memory, and a document of them.

Every translator reads its format into a `Document` and writes one out; the ledger compares what each
canonical field became. Times are one spelling (UTC, milliseconds) so that two readings compare equal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("memoryai", "omp", "memorizz", "amps", "emp")

# the per-record fields of the canonical record, in ledger order
FIELDS = (
    "text", "id", "type", "created_at", "updated_at", "accessed_at", "valid_from", "valid_until",
    "origin_tool", "origin_session", "origin_user", "observed_at", "provenance", "tags", "namespace",
    "protection", "dna", "sensitivity", "confidence", "embedding", "embedding_model", "content_hash",
    "extensions", "deleted",
)
# document-level things (the ledger counts them per item)
DOCUMENT_FIELDS = ("subject", "producer", "graph", "other_objects")

# the canonical type vocabulary: every format's own names (MemoryAI's ten, AMPS's kinds, OMP's three,
# EMP's suggested values, MemoRizz's 13 stores); any other string is a free type and passes as itself
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

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def has(self, name: str) -> bool:
        return self.values.get(name) is not None

    def key(self, fmt: str) -> str:
        return self.ids.get(fmt, "")


@dataclass
class Document:
    """What one exported document says: its records and the document-level objects."""

    source: str  # the format it was read from
    records: list[Record] = field(default_factory=list)
    subject: dict[str, Any] | None = None
    producer: str | None = None
    exported_at: str | None = None
    graph: list[dict[str, Any]] = field(default_factory=list)  # edges, entities, links (each item tagged with its kind)
    other_objects: list[dict[str, Any]] = field(default_factory=list)

    def live(self) -> list[Record]:
        return [r for r in self.records if not r.get("deleted")]


def instant(value: Any) -> str | None:
    """A date-time in the canonical spelling (UTC, milliseconds, Z), or None when it names no instant."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def from_millis(ms: Any) -> str | None:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms != ms or abs(ms) > 2**53:
        return None
    try:
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=int(ms))
    except OverflowError:
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def to_millis(iso: str) -> int:
    when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int((when - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)).total_seconds() * 1000)


def seconds_form(iso: str) -> str:
    """A canonical instant as ISO 8601 UTC with milliseconds only when they are not zero."""
    return iso.replace(".000Z", "Z")


def digest(*parts: Any) -> bytes:
    """A stable hash of values: the seed of every id a translation invents (same input, same id)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).digest()


def primary_id(record: Record) -> str:
    """The id the record was read under (its source format's id), used to name it in ledgers."""
    return record.ids.get("_source", "") or next(iter(record.ids.values()), "")


def now_canonical() -> str:
    return instant(dt.datetime.now(dt.UTC).isoformat()) or ""
