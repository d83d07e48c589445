"""OMP exports (GET /v1/export) to and from the canonical record."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from memconform.portability.canonical import (
    HATCH_KEY,
    OUTSIDE,
    Document,
    Reading,
    Record,
    digest,
    instant,
    jcopy,
    now_canonical,
    seconds_form,
    written_records,
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
from memconform.portability.streamed import records
from memconform.portability.tables import table
from memconform.suites.omp import format as omp

from .textlimits import fits, pieces

FORMAT = "omp"
ENVELOPE = ("omp_version", "exported_at", "server", "memories")
MEMORY = ("id", "content", "type", "source", "tags", "namespace", "created_at", "updated_at", "expires_at", "metadata",
          "embedding")
PART = "part"  # in a part's block: {"of": first part's id, "index": i, "count": n}


def _begin(doc: dict[str, Any]) -> tuple[Document, dict[str, Any]]:
    out = Document(FORMAT, producer=doc.get("server"), exported_at=instant(doc.get("exported_at")),
                   exported_spelled=doc.get("exported_at") if isinstance(doc.get("exported_at"), str) else None)
    out.envelope = {k: v for k, v in doc.items() if k not in ENVELOPE and v not in (None, [], {})}
    # a split memory's later parts, by the id of its first (their texts are joined to it); `joined`: the parts are
    # known already (a pass after the first, sourced.py), so each record is made whole as it is made
    return out, {"parts": {}, "joined": False}


def _records(state: dict[str, Any], section: str, memories: Iterable[Any]) -> Iterator[Record]:
    t, parts, joined = table(FORMAT), state["parts"], state["joined"]
    for mem in memories:
        if not isinstance(mem, dict):
            continue
        found, _ = split(mem.get("metadata"))
        part = found.get(PART) if found else None
        index = part_index(part)
        if index and isinstance(part, dict):
            if not joined:
                parts.setdefault(str(part.get("of")), []).append((index, str(mem.get("content", ""))))
            continue
        r = _record(t, mem)
        if joined:
            _join(r, parts)
        yield r


def part_index(part: Any) -> int | None:
    """The place of a later part in its split text: a part block's `index`, a whole number from 1 (0 is the first
    part, the memory itself). Anything else (a string, a fraction, a boolean, a list) is no part block memconform
    wrote: that memory is read as a memory of its own."""
    index = part.get("index") if isinstance(part, dict) else None
    return index if type(index) is int and index > 0 else None


def _finish(out: Document, state: dict[str, Any]) -> None:
    for r in out.records:
        _join(r, state["parts"])


def _joined(state: dict[str, Any]) -> dict[str, Any]:
    """The state of a pass after the first: the parts that pass found, joined to each record as it is made."""
    return {"parts": state["parts"], "joined": True}


def _join(r: Record, parts: dict[str, list[tuple[int, str]]]) -> None:
    rest = sorted(parts.get(r.ids.get(FORMAT, ""), []))
    if rest and isinstance(r.get("text"), str):
        r.values["text"] = r.values["text"] + "".join(text for _, text in rest)


READING = Reading(("memories",), _begin, _records, _finish, again=_joined)
read = READING.read


def _record(t: Any, mem: dict[str, Any]) -> Record:
    found, rest = split(mem.get("metadata"))
    r = Record(ids={FORMAT: str(mem.get("id"))})
    v = r.values
    v["text"] = mem.get("content")
    if isinstance(mem.get("type"), str):
        v["type"] = t.type_to_canonical(mem["type"])
        r.spelled["type"] = mem["type"]
    source: dict[str, Any] = mem["source"] if isinstance(mem.get("source"), dict) else {}
    for native, name in (("tool", "origin_tool"), ("session_id", "origin_session"), ("user_id", "origin_user")):
        if source.get(native) is not None:
            v[name] = source[native]
    if source.get("timestamp") is not None:
        r.time("observed_at", source["timestamp"])
    for native, name in (("created_at", "created_at"), ("updated_at", "updated_at"), ("expires_at", "valid_until")):
        if mem.get(native) is not None:
            r.time(name, mem[native])
    if isinstance(mem.get("tags"), list):
        v["tags"] = list(mem["tags"])
    if mem.get("namespace") is not None:
        v["namespace"] = mem["namespace"]
    if isinstance(mem.get("embedding"), list):
        v["embedding"] = list(mem["embedding"])
    outside = {k: jcopy(x) for k, x in mem.items() if k not in MEMORY}
    if rest or outside:
        v["extensions"] = {"format": FORMAT, "value": rest or {}, **({OUTSIDE: outside} if outside else {})}
    if found and isinstance(found.get(PART), dict):
        found = {k: x for k, x in found.items() if k != PART}
    apply(r, found, FORMAT, t)
    return r


def _mem_id(r: Record, source: str, used: set[str]) -> tuple[str, bool]:
    for candidate in (r.ids.get(FORMAT), r.key(source)):
        if isinstance(candidate, str) and omp.ID_RE.match(candidate) and candidate not in used:
            return candidate, True
    salt = 0
    while True:
        made = "mem_" + digest(FORMAT, sorted(r.ids.items()), salt).hex()[:16]
        if made not in used:
            return made, False
        salt += 1


def write(doc: Document, ledger: Ledger) -> dict[str, Any]:
    """The OMP export; inside streaming() its memories are made as they are written (streamed.py)."""
    t = table(FORMAT)
    exported = doc.exported_at or now_canonical()
    used: set[str] = set()

    def memories() -> Iterator[dict[str, Any]]:
        for r, rid in written_records(doc, ledger):
            yield from _memories(t, doc, r, rid, used, exported, ledger)

    # the envelope depends on no memory: it and its ledger lines come first
    for name in ("subject", "graph", "other_objects"):
        count = (1 if doc.subject else 0) if name == "subject" else len(getattr(doc, name))
        note_document(ledger, t, name, count)
    out: dict[str, Any] = {"omp_version": omp.VERSION, "exported_at": seconds_form(exported, keep_leap=True),
           "server": str(doc.producer) if doc.producer is not None else "memconform-port"}
    place_export_time(ledger, doc, out["exported_at"])
    place_producer(ledger, doc, out["server"])
    note_envelope(ledger, doc)
    out["memories"] = records("memories", memories())
    return out


def _memories(t: Any, doc: Document, r: Record, rid: str, used: set[str], exported: str, ledger: Ledger) -> list[dict[str, Any]]:
    p = Placement(t, r, ledger, rid)
    mem_id, kept = _mem_id(r, doc.source, used)
    used.add(mem_id)
    p.place_id(doc.source, mem_id, "memories[].id") if kept else p.new_id("memories[].id")
    limit = int(t.limit("text", "max_chars"))
    texts = pieces(p.text("memories[].content"), limit)
    if "text" not in p.handled:
        p.keep("text", f"split into {len(texts)} memories of at most {limit} characters" if len(texts) > 1 else "")
    mem: dict[str, Any] = {"id": mem_id, "content": texts[0]}
    _type(p, mem)
    _source(p, mem, exported)
    _times(p, mem, exported)
    _organisation(p, mem)
    if isinstance(r.get("embedding"), list):
        mem["embedding"] = list(r.get("embedding"))
        p.keep("embedding")
    max_keys = int(t.limit("extensions", "max_keys"))
    mem["metadata"] = p.hatch(mem, MEMORY, {FORMAT: mem_id}, accepts=lambda value: len(value) <= max_keys,
                              unfit="more keys than the nine metadata keys left")
    out = [mem]
    for i, text in enumerate(texts[1:], start=1):
        part_id, _ = _mem_id(Record(ids={"part": f"{mem_id}#{i}"}), FORMAT, used)
        used.add(part_id)
        out.append({**{k: jcopy(x) for k, x in mem.items() if k not in ("id", "content", "metadata", "embedding")},
                    "id": part_id, "content": text,
                    "metadata": {HATCH_KEY: {"v": 1, PART: {"of": mem_id, "index": i, "count": len(texts)}}}})
    ledger.map_id(rid, mem_id)
    return out


def _type(p: Placement, mem: dict[str, Any]) -> None:
    mem["type"] = p.write_type("semantic", "memories[].type")


def _source(p: Placement, mem: dict[str, Any], exported: str) -> None:
    source: dict[str, Any] = {}
    tool = p.value("origin_tool")
    if isinstance(tool, str) and tool:
        source["tool"] = tool
        p.keep("origin_tool")
    else:
        source["tool"] = "memconform-port"
        p.invent("origin_tool", "memories[].source.tool")
    for name, native in (("origin_session", "session_id"), ("origin_user", "user_id")):
        if isinstance(p.value(name), str):
            source[native] = p.value(name)
            p.keep(name)
    observed = p.value("observed_at")
    if isinstance(observed, str) and instant(observed):
        source["timestamp"] = seconds_form(instant(observed) or observed, keep_leap=True)
        p.time("observed_at", source["timestamp"])
    else:
        source["timestamp"] = seconds_form(_first_time(p, "created_at", "updated_at") or exported, keep_leap=True)
        p.invent("observed_at", "memories[].source.timestamp")
    mem["source"] = source


def _first_time(p: Placement, *names: str) -> str | None:
    for name in names:
        value = p.value(name)
        if isinstance(value, str) and instant(value):
            return instant(value)
    return None


def _times(p: Placement, mem: dict[str, Any], exported: str) -> None:
    created = _first_time(p, "created_at")
    updated = _first_time(p, "updated_at")
    mem["created_at"] = seconds_form(created or updated or exported, keep_leap=True)
    mem["updated_at"] = seconds_form(updated or created or exported, keep_leap=True)
    if created:
        p.time("created_at", mem["created_at"])
    else:
        p.invent("created_at", "memories[].created_at, updated_at")
    if updated:
        p.time("updated_at", mem["updated_at"])
    else:
        p.invent("updated_at", "memories[].created_at, updated_at")
    until = _first_time(p, "valid_until")
    mem["expires_at"] = seconds_form(until, keep_leap=True) if until else None
    if until:
        p.time("valid_until", mem["expires_at"])


def _organisation(p: Placement, mem: dict[str, Any]) -> None:
    t = p.table
    tags = p.value("tags")
    if isinstance(tags, list) and all(isinstance(x, str) for x in tags):
        fitting = [x for x in tags if fits(x, int(t.limit("tags", "max_item_chars")))][: int(t.limit("tags", "max_items"))]
        mem["tags"] = fitting
        p.keep("tags") if fitting == tags else p.carry("tags", "over 20 tags or 50 characters")
    else:
        mem["tags"] = []
        if tags is not None:
            p.carry("tags", "not a list of strings")
        p.invent("tags", "memories[].tags")
    namespace = p.value("namespace")
    if isinstance(namespace, str):
        if fits(namespace, int(t.limit("namespace", "max_chars"))):
            mem["namespace"] = namespace
            p.keep("namespace")
        else:
            p.carry("namespace", "longer than 100 characters")
    elif namespace is not None:
        p.carry("namespace", "not a string")
