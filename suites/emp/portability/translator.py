"""EMP memory.jsonl files to and from the canonical record: the resolved view (newest ts per id) is the
set of records, a tombstone is a deleted record."""

from __future__ import annotations

import json
import uuid
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from memconform.portability.canonical import (
    OUTSIDE,
    Document,
    LineReading,
    Record,
    digest,
    drain,
    from_millis,
    instant,
    jcopy,
    now_canonical,
    to_millis,
)
from memconform.portability.hatch import apply, split
from memconform.portability.ledger import Ledger
from memconform.portability.placement import (
    Placement,
    note_document,
    note_envelope,
    place_export_time,
    place_producer,
)
from memconform.portability.streamed import Streamed, records
from memconform.portability.tables import table
from memconform.suites.emp import format as emp

FORMAT = "emp"
PORT_SRC = "org.memconform.port"
LINE = ("v", "id", "ts", "src", "content", "type", "tags", "emb", "meta")


def read(doc: Any) -> Document:
    t = table(FORMAT)
    out = Document(FORMAT)
    for entry in drain(emp.resolve(emp.as_lines(doc), keep_tombstones=True)):  # let go once read (consuming)
        out.records.append(_record(t, entry))
    return out


def _parsed(rawb: bytes) -> Any:
    """One line of the file as `read` parses it (None: blank)."""
    found = emp.read_line(0, rawb)
    return None if found is None else found[2]


def _chosen(lines: Iterable[tuple[int, Any]]) -> array[int]:
    """The offsets of the lines `resolve` keeps (the newest ts per id, a later line winning a tie, unreadable lines
    skipped, tombstones kept), in its order, holding per id only its best (ts, offset) so far: offsets grow with
    line numbers, so they break ties as resolve's line numbers do."""
    best: dict[str, tuple[Any, int]] = {}
    for offset, entry in lines:
        if emp.readable(entry):
            key = (entry["ts"], offset)
            held = best.get(entry["id"])
            if held is None or key >= held:
                best[entry["id"]] = key
    order = sorted(best.values())
    best.clear()
    return array("q", [offset for _, offset in order])


# the file read a line at a time by the CLI (harness/portability/sourced.py): the records `read` makes of its text
LINES = LineReading(_parsed, _chosen, lambda entry: _record(table(FORMAT), entry))


def _record(t: Any, entry: dict[str, Any]) -> Record:
    r = Record(ids={FORMAT: str(entry["id"])})
    v = r.values
    # a ts no date-time can hold (1e21) is kept as the number it is: a writer carries it, never drops it
    ts = from_millis(entry.get("ts")) or entry.get("ts")
    if emp.is_tombstone(entry):
        v["deleted"] = True
        v["updated_at"] = ts
        return r
    found, rest = split(entry.get("meta"))
    v["text"] = entry.get("content")
    v["updated_at"] = ts
    if isinstance(entry.get("src"), str):
        v["origin_tool"] = entry["src"]
    if isinstance(entry.get("type"), str):
        v["type"] = t.type_to_canonical(entry["type"])
        r.spelled["type"] = entry["type"]
    if isinstance(entry.get("tags"), list):
        v["tags"] = list(entry["tags"])
    if isinstance(entry.get("emb"), list):
        v["embedding"] = list(entry["emb"])
    outside = {k: jcopy(x) for k, x in entry.items() if k not in LINE}
    if rest or outside:
        v["extensions"] = {"format": FORMAT, "value": rest or {}, **({OUTSIDE: outside} if outside else {})}
    apply(r, found, FORMAT, t)
    return r


def _entry_id(r: Record, source: str, used: set[str]) -> tuple[str, bool]:
    for candidate in (r.ids.get(FORMAT), r.key(source)):
        # an id EMP readers accept (any UUID: errata E10) is kept; a new one is always a v4
        if isinstance(candidate, str) and emp.UUID_RE.match(candidate) and candidate not in used:
            return candidate, True
    salt = 0
    while True:
        made = str(uuid.UUID(bytes=digest(FORMAT, sorted(r.ids.items()), salt)[:16], version=4))
        if made not in used:
            return made, False
        salt += 1


def write(doc: Document, ledger: Ledger) -> str | Streamed:
    """The memory.jsonl text; inside streaming() its lines, each made as it is written (streamed.py)."""
    t = table(FORMAT)
    exported = doc.exported_at or now_canonical()
    used: set[str] = set()
    # the document's lines in the ledger first: none depends on the records (the file has no envelope)
    for name in ("subject", "graph", "other_objects"):
        count = (1 if doc.subject else 0) if name == "subject" else len(getattr(doc, name))
        note_document(ledger, t, name, count)
    place_producer(ledger, doc, None)
    place_export_time(ledger, doc, None)
    note_envelope(ledger, doc)

    def lines() -> Iterator[str]:
        for r in drain(doc.records):  # each record let go once written (consuming)
            rid = r.name(doc.source)
            yield json.dumps(_line(t, doc, r, rid, used, exported, ledger), ensure_ascii=False, allow_nan=False) + "\n"
    made = records("lines", lines())
    return made if isinstance(made, Streamed) else "".join(made)


def _line(t: Any, doc: Document, r: Record, rid: str, used: set[str], exported: str, ledger: Ledger) -> dict[str, Any]:
    p = Placement(t, r, ledger, rid)
    entry_id, kept = _entry_id(r, doc.source, used)
    used.add(entry_id)
    ledger.map_id(rid, entry_id)
    p.place_id(doc.source, entry_id, "id") if kept else p.new_id("id")
    ts = _ts(p, exported)
    src = r.get("origin_tool")
    if r.get("deleted"):
        p.keep("deleted", "a tombstone line")
        p.handled |= {name for name in r.values}  # a tombstone says nothing else
        return emp.tombstone(entry_id, ts, src if isinstance(src, str) and emp.REVDOMAIN_RE.match(src) else PORT_SRC)
    text = p.text("content")
    line: dict[str, Any] = {"v": emp.VERSION, "id": entry_id, "ts": ts, "src": PORT_SRC, "content": text}
    if "text" in p.handled:
        pass
    elif text.startswith("encrypted:") and not emp.ENCRYPTED_RE.match(text):
        p.keep("text", "begins `encrypted:` without being ciphertext: a reader that reserves the prefix takes it for "
                       "ciphertext (errata E12)")
    else:
        p.keep("text")
    if isinstance(src, str) and emp.REVDOMAIN_RE.match(src):
        line["src"] = src
        p.keep("origin_tool")
    else:
        if src is not None:
            p.carry("origin_tool", "not in reverse domain notation")
        p.invented_fields.append("origin_tool")  # the src written is made up: a reader drops it
        p.ledger.invent(rid, "src", t.invented_rule("src"))
    _type(p, line)
    _tags(p, line)
    if isinstance(r.get("embedding"), list):
        line["emb"] = list(r.get("embedding"))
        p.keep("embedding")
    tombstone = "a `deleted` key in meta would make the line a tombstone"
    meta = p.hatch(line, LINE, {FORMAT: entry_id}, accepts=lambda value: "deleted" not in value, unfit=tombstone,
                   not_object=tombstone)
    if meta:
        line["meta"] = meta
    return line


def _ts(p: Placement, exported: str) -> int:
    """EMP's ts: whole milliseconds from 1970, never below 0 (an earlier time is written as 0 and carried)."""
    updated = p.value("updated_at")
    if isinstance(updated, str) and instant(updated):
        ts = max(0, to_millis(instant(updated) or updated))
        p.time("updated_at", ts)
        return ts
    created = p.value("created_at")
    p.invent("updated_at", "ts")
    ts = to_millis(instant(created) or exported) if isinstance(created, str) and instant(created) else to_millis(exported)
    return max(0, ts)


def _type(p: Placement, line: dict[str, Any]) -> None:
    canonical = p.value("type")
    if not isinstance(canonical, str):
        return
    if canonical == "tombstone":
        line["type"] = "note"
        p.carry("type", "a live record typed `tombstone` would read as deleted")
        return
    line["type"] = canonical
    p.place_type(canonical)


def _tags(p: Placement, line: dict[str, Any]) -> None:
    tags = p.value("tags")
    if not isinstance(tags, list) or not all(isinstance(x, str) for x in tags):
        if tags is not None:
            p.carry("tags", "not a list of strings")
        return
    lower = list(dict.fromkeys(x.lower() for x in tags))
    line["tags"] = lower
    p.keep("tags") if lower == tags else p.carry("tags", "written lower-cased")
