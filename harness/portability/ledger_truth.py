"""Every line of a translation's ledger checked against the documents themselves.

The readers here are written from the five spec texts, apart from the translators (`fmt_*.py`), which
they must not import: a ledger line is judged by what a reader of the target format sees in the output
and what a reader of the source format sees in the source, not by what the translator believed.

A line is true when:
- `kept`: the output holds the source's value in the target's own field, equal in value and meaning
  (a date-time: the same instant to the microsecond and the same UTC offset; a type: the same string);
- `respelled`: the output's own field holds the same meaning spelled otherwise (a date-time in another
  offset, a MemoryAI `x_` type, a MemoRizz id with its store), and the line names the rule;
- `carried`: the translation's escape-hatch block holds the source's value (or its own field holds it
  and the block says nothing else is needed);
- `lost`: the output holds the source's value neither in its own field nor in the block;
- `invented`: the source had no value and the output has one.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any

HATCH = "memconform_port"
STATUSES = ("kept", "respelled", "carried", "lost", "invented")

# what each format calls a record's fields: canonical name -> native path (a tuple walks objects)
NATIVE: dict[str, dict[str, tuple[str, ...]]] = {
    "memoryai": {"text": ("content",), "type": ("memory_type",), "created_at": ("created_at",),
                 "accessed_at": ("accessed_at",), "valid_until": ("valid_until",), "tags": ("tags",),
                 "embedding_model": ("embedding_model",), "content_hash": ("content_hash",)},
    "omp": {"text": ("content",), "type": ("type",), "created_at": ("created_at",), "updated_at": ("updated_at",),
            "valid_until": ("expires_at",), "origin_tool": ("source", "tool"), "origin_session": ("source", "session_id"),
            "origin_user": ("source", "user_id"), "observed_at": ("source", "timestamp"), "tags": ("tags",),
            "namespace": ("namespace",), "embedding": ("embedding",)},
    "memorizz": {"text": ("data", "content"), "namespace": ("data", "memory_id"), "origin_user": ("data", "user_id"),
                 "embedding": ("data", "embedding")},
    "amps": {"text": ("text",), "type": ("kind",), "created_at": ("created_at",), "valid_from": ("valid_from",),
             "valid_until": ("valid_to",), "sensitivity": ("sensitivity",), "confidence": ("confidence",),
             "provenance": ("provenance",)},
    "emp": {"text": ("content",), "type": ("type",), "origin_tool": ("src",), "tags": ("tags",), "embedding": ("emb",)},
}
TIMES = {"created_at", "updated_at", "accessed_at", "valid_from", "valid_until", "observed_at"}
MEMORIZZ_STORES = ("personas", "entity_memory", "knowledge_base", "toolbox", "workflow_memory", "skillbox",
                   "conversation_memory", "summaries", "tool_log", "short_term_memory", "semantic_cache",
                   "shared_memory", "agents")
AMPS_ATOM = {"atom_id", "text", "kind", "created_at", "valid_from", "valid_to", "sensitivity", "confidence",
             "provenance", "x-provider"}
EMP_LINE = {"v", "id", "ts", "src", "content", "type", "tags", "emb", "meta"}
MEMORYAI_CHUNK = {"id", "content", "memory_type", "created_at", "accessed_at", "valid_until", "tags", "embedding",
                  "embedding_model", "content_hash", "metadata", "zone", "importance", "is_pinned", "decay_score", "tier"}
OMP_MEMORY = {"id", "content", "type", "source", "tags", "namespace", "created_at", "updated_at", "expires_at",
              "metadata", "embedding"}


@dataclass
class Seen:
    """One record as a reader of its format sees it: its native id, its fields, its translation block."""

    native_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    block: dict[str, Any] = field(default_factory=dict)


def _walk(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj


def _split_hatch(hatch: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    if not isinstance(hatch, dict):
        return {}, None
    found = hatch.get(HATCH)
    block: dict[str, Any] = found if isinstance(found, dict) else {}
    rest = {k: v for k, v in hatch.items() if k != HATCH}
    return block, (rest or None)


def _seen(fmt: str, native_id: str, rec: dict[str, Any], hatch: Any) -> Seen:
    s = Seen(native_id)
    for name, path in NATIVE[fmt].items():
        value = _walk(rec, path)
        if value is not None:
            s.fields[name] = value
    s.block, rest = _split_hatch(hatch)
    if rest:
        s.fields["extensions"] = rest
    return s


def records(fmt: str, doc: Any) -> dict[str, Seen]:
    """The records of a document by the key a ledger names them with (a later record repeating an id: that id
    followed by " (#n of that id)", as the ledger names it)."""
    return {"memoryai": _memoryai, "omp": _omp, "memorizz": _memorizz, "amps": _amps, "emp": _emp}[fmt](doc)


class _Named(dict[str, Seen]):
    """Records by key; a key seen before gets its ordinal."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def add(self, key: str, s: Seen) -> None:
        self.seen[key] = self.seen.get(key, 0) + 1
        self[key if self.seen[key] == 1 else f"{key} (#{self.seen[key]} of that id)"] = s


def _memoryai(doc: Any) -> dict[str, Seen]:
    out = _Named()
    model = _walk(doc, ("manifest", "embedding_model"))
    for i, chunk in enumerate(doc.get("chunks") or []):
        key = str(chunk["id"]) if "id" in chunk else f"#{i + 1}"
        s = _seen("memoryai", key, chunk, chunk.get("metadata"))
        if isinstance(chunk.get("embedding"), str):
            raw = base64.b64decode(chunk["embedding"])
            s.fields["embedding"] = list(struct.unpack(f"<{len(raw) // 4}f", raw[: len(raw) // 4 * 4]))
            if "embedding_model" not in s.fields and model is not None:
                s.fields["embedding_model"] = model
        protection = {k: chunk[k] for k in ("zone", "importance", "is_pinned", "decay_score", "tier") if k in chunk}
        if protection:
            s.fields["protection"] = protection
        _outside(s, chunk, MEMORYAI_CHUNK)
        out.add(key, s)
    return out


def _omp(doc: Any) -> dict[str, Seen]:
    out = _Named()
    parts: dict[str, list[tuple[int, str]]] = {}
    for mem in doc.get("memories") or []:
        block, _ = _split_hatch(mem.get("metadata"))
        part = block.get("part")
        if isinstance(part, dict) and part.get("index", 0) > 0:
            parts.setdefault(str(part["of"]), []).append((part["index"], mem.get("content", "")))
            continue
        s = _seen("omp", str(mem.get("id")), mem, mem.get("metadata"))
        _outside(s, mem, OMP_MEMORY)
        out.add(s.native_id, s)
    for key, rest in parts.items():  # a text split over parts is read whole (the part blocks say so)
        if key in out:
            out[key].fields["text"] = out[key].fields.get("text", "") + "".join(t for _, t in sorted(rest))
    return out


def _memorizz(doc: Any) -> dict[str, Seen]:
    out = _Named()
    for store in MEMORIZZ_STORES:
        for rec in (doc.get("stores") or {}).get(store) or []:
            data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
            key = f"{store}/{rec.get('id')}"
            s = _seen("memorizz", str(rec.get("id")), rec, None)
            if not isinstance(s.fields.get("text"), str):
                s.fields.pop("text", None)
            s.fields["type"] = store
            s.block, _ = _split_hatch(data)
            rest = {k: v for k, v in data.items() if k not in ("memory_id", "user_id", "embedding", HATCH)
                    and not (k == "content" and isinstance(v, str))}
            if not isinstance(data.get("user_id"), str):
                s.fields.pop("origin_user", None)
                if "user_id" in data:
                    rest["user_id"] = data["user_id"]
            if rest:
                s.fields["extensions"] = rest
            out.add(key, s)
    return out


def _amps(doc: Any) -> dict[str, Seen]:
    out = _Named()
    for atom in doc.get("atoms") or []:
        s = _seen("amps", str(atom.get("atom_id")), atom, atom.get("x-provider"))
        _outside(s, atom, AMPS_ATOM)
        out.add(s.native_id, s)
    return out


def _outside(s: Seen, rec: dict[str, Any], named: set[str]) -> None:
    """A record's own fields its spec does not name (AMPS x- fields, an EMP field of a newer minor version):
    they belong to the record's extensions as much as its extension object does."""
    others = {k: v for k, v in rec.items() if k not in named}
    if others:
        s.fields["extensions"] = {**(s.fields.get("extensions") or {}), **{"(outside)": others}}


def _emp(doc: Any) -> dict[str, Seen]:
    newest: dict[str, tuple[Any, int, dict[str, Any]]] = {}
    for n, line in enumerate(doc.split("\n") if isinstance(doc, str) else []):  # JSON Lines: \n alone ends a line
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or isinstance(entry.get("ts"), bool) \
                or not isinstance(entry.get("ts"), (int, float)):
            continue
        if entry["id"] not in newest or (entry["ts"], n) >= newest[entry["id"]][:2]:
            newest[entry["id"]] = (entry["ts"], n, entry)
    out = {}
    for key, (ts, _, entry) in newest.items():
        s = _seen("emp", key, entry, entry.get("meta"))
        meta = entry.get("meta")
        if entry.get("type") == "tombstone" or isinstance(meta, dict) and meta.get("deleted") is True:
            s.fields = {"deleted": True}
        else:
            s.fields["updated_at"] = ts
        if not s.fields.get("deleted"):
            _outside(s, entry, EMP_LINE)
        out[key] = s
    return out


# ---- comparing values -----------------------------------------------------------------------------

def when(value: Any) -> tuple[dt.datetime, dt.timedelta | None] | None:
    """(the instant in UTC to the microsecond, the UTC offset as written) of a date-time or epoch milliseconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or abs(value) > 2**53:
            return None
        base = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=value)
        return base, dt.timedelta(0)
    if not isinstance(value, str):
        return None
    text = value.strip()
    text = text[:-1] + "+00:00" if text.endswith(("z", "Z")) else text
    text = text.replace(":60", ":59", 1) if ":60" in text[16:20] else text  # a leap second names the second before
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    offset = parsed.utcoffset()
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC), offset


def _norm(name: str, value: Any) -> Any:
    if name == "provenance" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "artifacts"}
    if name == "embedding" and isinstance(value, list):
        return [float(x) for x in value]
    return value


def same(name: str, a: Any, b: Any) -> bool:
    """Equal in value and meaning (a date-time: the same instant, precision and offset)."""
    if name in TIMES:
        wa, wb = when(a), when(b)
        if wa is not None and wb is not None:
            return wa[0] == wb[0] and (wa[1] or dt.timedelta(0)) == (wb[1] or dt.timedelta(0)) \
                and ":60" not in str(a)[16:20] and ":60" not in str(b)[16:20] or a == b
    if name == "id":
        return str(a) == str(b)
    return json.dumps(_norm(name, a), sort_keys=True) == json.dumps(_norm(name, b), sort_keys=True)


def alike(name: str, a: Any, b: Any) -> bool:
    """The same meaning, perhaps spelled otherwise (another offset, a vendor prefix, a store before an id)."""
    if same(name, a, b):
        return True
    if name in TIMES:
        wa, wb = when(a), when(b)
        return wa is not None and wb is not None and wa[0] == wb[0]
    if name == "type" and isinstance(a, str) and isinstance(b, str):
        return a.removeprefix("x_") == b.removeprefix("x_")
    if name == "id":
        return str(a).rsplit("/", 1)[-1] == str(b).rsplit("/", 1)[-1]
    return False


# ---- judging the lines ----------------------------------------------------------------------------

@dataclass
class Verdict:
    checked: int = 0
    false: list[str] = field(default_factory=list)


def judge_ledger(source_fmt: str, source_doc: Any, target_fmt: str, output: Any, ledger: dict[str, Any]) -> Verdict:
    """Each record line of a ledger (its JSON form) against the source and the output."""
    verdict = Verdict()
    if ledger.get("refused") or output is None:
        return verdict
    src, out = records(source_fmt, source_doc), records(target_fmt, output)
    id_map: dict[str, list[str]] = ledger["id_map"]
    for rid, lines in ledger["per_record"].items():
        a = src.get(rid)
        targets = id_map.get(rid) or []
        b = out.get(targets[0]) if targets else None
        for name, status in lines.items():
            if name.startswith("+"):
                continue
            verdict.checked += 1
            problem = _line_problem(name, status, a, b, rid)
            if problem:
                verdict.false.append(f"{source_fmt}->{target_fmt} {rid!r} {name} {status}: {problem}")
    verdict.checked += _document_lines(source_fmt, source_doc, target_fmt, output, ledger, verdict)
    return verdict


def _line_problem(name: str, status: str, a: Seen | None, b: Seen | None, rid: str) -> str:
    if a is None:
        return "the source has no such record"
    if name == "deleted":
        return "" if a.fields.get("deleted") and status in ("lost", "kept") and (
            status == "lost" and b is None or status == "kept" and b is not None and b.fields.get("deleted")) \
            else f"deleted record, output {'absent' if b is None else b.fields}"
    if b is None:
        return "the ledger maps the record to no record of the output"
    if name == "id":
        have, got, carried = rid if "/" in rid else a.native_id, b.native_id, (b.block.get("ids") or {})
        if status == "kept":
            return "" if a.native_id == got else f"{a.native_id!r} written as {got!r}"
        if status == "respelled":
            return "" if a.native_id != got and alike("id", have, got) else f"{a.native_id!r} written as {got!r}"
        if status == "carried":
            return "" if have in {str(v) for v in carried.values()} else f"{have!r} not in the block's ids {carried}"
        return "" if status == "lost" and have not in {str(v) for v in carried.values()} and a.native_id != got else \
            f"{status}: {a.native_id!r} written as {got!r}, block ids {carried}"
    source = a.fields.get(name)
    native = b.fields.get(name)
    hatch = (b.block.get("fields") or {}).get(name) if isinstance(b.block.get("fields"), dict) else None
    invented = name in (b.block.get("invented") or [])
    if status == "invented":
        return "" if source is None and (native is not None or name == "dna") else f"source {source!r:.60}, output {native!r:.60}"
    if source is None and name not in ("dna", "extensions"):
        return f"{status} but the source has no {name}"
    if name == "dna":  # a protection read from several native fields: compared by the block and the type
        return ""
    if name == "extensions":
        return _extensions_problem(status, source, b, native, hatch)
    if status == "kept":
        return "" if native is not None and not invented and same(name, source, native) else \
            f"source {source!r:.80} output {native!r:.80}"
    if status == "respelled":
        return "" if native is not None and not same(name, source, native) and alike(name, source, native) else \
            f"source {source!r:.80} output {native!r:.80}"
    if status == "carried":
        return "" if hatch is not None and alike(name, source, hatch) or (hatch is None and native is not None and same(name, source, native)) \
            else f"source {source!r:.80} block {hatch!r:.80}"
    if status == "lost":
        whole = native is not None and not invented and same(name, source, native)
        return f"lost but the output holds it: {native!r:.80}" if whole or (hatch is not None and alike(name, source, hatch)) else ""
    return f"unknown status {status!r}"


def leaves(value: Any, path: str = "") -> set[str]:
    """Every scalar of a JSON value with the key that holds it (where in the object tree is not compared: a
    format may hold an extension object whole, or spread into its own extension place)."""
    if isinstance(value, dict):
        return {leaf for k, v in value.items() for leaf in leaves(v, str(k))} or {f"{path}={{}}"}
    if isinstance(value, list):
        return {leaf for v in value for leaf in leaves(v, path)} or {f"{path}=[]"}
    return {f"{path}={json.dumps(value, sort_keys=True)}"}


def _extensions_problem(status: str, source: Any, b: Seen, native: Any, hatch: Any) -> str:
    wanted = leaves(source) if source is not None else set()
    shown, carried = leaves(native) if native is not None else set(), leaves(hatch) if hatch is not None else set()
    if status == "kept":
        return "" if wanted and wanted <= shown else f"kept, but {sorted(wanted - shown)[:3]} are not in the output's own fields"
    if status == "respelled":
        return "" if wanted and wanted <= shown and _norm("extensions", source) != _norm("extensions", native) else \
            "respelled, but the output's own fields hold them as they were (or not at all)"
    if status == "carried":
        return "" if wanted and wanted <= shown | carried else f"{sorted(wanted - shown - carried)[:3]} are in neither place"
    if status == "lost":
        return "" if wanted - shown - carried else "lost, but every extension field is in the output"
    return "" if status == "invented" and source is None and native is not None else f"{status}: source {source!r:.60}"


# the document envelope: canonical name -> native path per format
ENVELOPE: dict[str, dict[str, tuple[str, ...]]] = {
    "memoryai": {"exported_at": ("exported_at",), "producer": ("generator",)},
    "omp": {"exported_at": ("exported_at",), "producer": ("server",)},
    "memorizz": {"exported_at": ("manifest", "created_at"), "producer": ("manifest", "source_provider")},
    "amps": {"exported_at": ("exported_at",), "producer": ("source_provider",), "subject": ("subject",)},
    "emp": {},
}


# envelope members each format's document lines already speak for (records, export time, producer, subject,
# graph and other objects) or that describe the file itself (version, counts, checksums, integrity)
SPOKEN_FOR: dict[str, set[str]] = {
    "memoryai": {"format", "version", "generator", "exported_at", "manifest", "chunks", "checksum", "counts",
                 "memory_edges", "entities", "l2_sessions", "mood_states", "agents",
                 "manifest.tenant_id", "manifest.tenant_name", "manifest.tenant_plan", "manifest.embedding_model",
                 "manifest.embedding_dim", "manifest.checksum", "manifest.counts", "manifest.scope"},
    "omp": {"omp_version", "exported_at", "server", "memories"},
    "memorizz": {"format", "version", "taxonomy", "manifest", "stores", "integrity", "manifest.created_at",
                 "manifest.source_provider", "manifest.scope", "manifest.counts", "manifest.record_count",
                 "manifest.memorizz_version", "manifest.external_references", "manifest.omitted_fields"},
    "amps": {"export_version", "exported_at", "source_provider", "subject", "atoms", "artifacts"},
    "emp": set(),
}


def envelope_members(fmt: str, doc: Any) -> list[tuple[str, Any]]:
    """(path, value) of every envelope member (top level, and a manifest's members) no document line speaks for."""
    if not isinstance(doc, dict):
        return []
    out = [(k, v) for k, v in doc.items() if k not in SPOKEN_FOR[fmt]]
    manifest = doc.get("manifest")
    if fmt in ("memoryai", "memorizz") and isinstance(manifest, dict):
        out += [(f"manifest.{k}", v) for k, v in manifest.items() if f"manifest.{k}" not in SPOKEN_FOR[fmt]]
    return out


def _document_lines(source_fmt: str, source_doc: Any, target_fmt: str, output: Any, ledger: dict[str, Any],
                    verdict: Verdict) -> int:
    checked = 0
    for row in ledger.get("document") or []:
        name, status = row["field"], row["status"]
        if name not in ("exported_at", "producer"):
            continue
        checked += 1
        a = _walk(source_doc, ENVELOPE[source_fmt][name]) if name in ENVELOPE[source_fmt] else None
        b = _walk(output, ENVELOPE[target_fmt][name]) if name in ENVELOPE[target_fmt] else None
        ok = {"kept": a is not None and b is not None and same(name if name != "exported_at" else "created_at", a, b),
              "respelled": a is not None and b is not None and alike("created_at" if name == "exported_at" else name, a, b),
              "lost": a is not None and (b is None or not alike("created_at" if name == "exported_at" else name, a, b)),
              "invented": a is None and b is not None}.get(status, False)
        if not ok:
            verdict.false.append(f"{source_fmt}->{target_fmt} (document) {name} {status}: source {a!r:.60} output {b!r:.60}")
    named = {row["field"] for row in ledger.get("document") or []}
    for path, value in envelope_members(source_fmt, source_doc):
        checked += 1
        if f"envelope.{path}" not in named and value not in (None, [], {}, False):
            verdict.false.append(f"{source_fmt}->{target_fmt} (document) {path}: an envelope member no ledger line names")
    if source_fmt != "emp":  # every envelope item the source has is accounted for
        named = {row["field"] for row in ledger.get("document") or []}
        for name in ENVELOPE[source_fmt]:
            if name != "subject" and _walk(source_doc, ENVELOPE[source_fmt][name]) is not None and name not in named:
                checked += 1
                verdict.false.append(f"{source_fmt}->{target_fmt} (document) {name}: in the source, no ledger line")
    return checked
