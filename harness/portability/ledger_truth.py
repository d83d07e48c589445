"""Every line of a translation's ledger checked against the documents themselves.

The readers (each format's `Witness`, declared by its suite beside its translator: suites/<spec>/portability/
witness.py) are written from the spec texts, apart from the translators, which they must not import: a ledger line is judged by what a reader of the target format sees in the output
and what a reader of the source format sees in the source, not by what the translator believed.

The source record is what its own fields show with its escape-hatch block read in (`with_block`): on a second
hop (A -> B -> C) a value B carried in the block, or named as invented, is the record's value, or none.

A line is true when:
- `kept`: the output holds the source's value in the target's own field, equal in value and meaning
  (a date-time: the same instant to the microsecond and the same UTC offset; a type: the same string);
- `respelled`: the output's own field holds the same meaning spelled otherwise (a date-time in another
  offset, a type with a vendor prefix, an id with the key it is stored under), and the line names the rule;
- `carried`: the translation's escape-hatch block holds the source's value (or its own field holds it
  and the block says nothing else is needed);
- `lost`: the output holds the source's value neither in its own field nor in the block;
- `invented`: the source had no value and the output has one.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from typing import Any

from .formats import portable
from .witness import Seen, walk

STATUSES = ("kept", "respelled", "carried", "lost", "invented")
TIMES = {"created_at", "updated_at", "accessed_at", "valid_from", "valid_until", "observed_at"}


def records(fmt: str, doc: Any) -> dict[str, Seen]:
    """The records of a document by the key a ledger names them with (a later record repeating an id: that id
    followed by " (#n of that id)", as the ledger names it)."""
    return portable(fmt).witness.records(doc)


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


def _leap(value: Any) -> bool:
    """Written as a leap second (when() reads 23:59:60 as the second before, so two instants equal by when()
    are the same only when both or neither are leap seconds)."""
    return isinstance(value, str) and ":60" in value[16:20]


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
                and _leap(a) == _leap(b) or a == b
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
    restored: dict[str, list[str]] = ledger.get("restored") or {}
    for rid, lines in ledger["per_record"].items():
        a = src.get(rid)
        if a is not None:
            a = with_block(a, set(restored.get(rid) or ()))
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


def with_block(s: Seen, restored: set[str]) -> Seen:
    """The source record as its values are: what its own fields show, with what an earlier translation left in
    its escape-hatch block (hatch.py's convention) read in. A native value the block names as invented is no value
    of the record (an empty text the only invention a writer makes of a text: a text that is not empty stays);
    a field the block carries is the record's when its own field shows nothing, or when the ledger says the
    block restored it over what the field shows (the ledger's `restored`: a claim judged like any other, since a
    line about that field is then true only of the block's value)."""
    block = s.block
    invented: list[Any] = block["invented"] if isinstance(block.get("invented"), list) else []
    carried: dict[Any, Any] = block["fields"] if isinstance(block.get("fields"), dict) else {}
    if not (invented or carried):
        return s
    fields = dict(s.fields)
    for name in invented:
        if isinstance(name, str) and name != "id" and not (name == "text" and fields.get("text") not in ("", None)):
            fields.pop(name, None)
    for name, value in carried.items():
        if isinstance(name, str) and name != "id" and value is not None and (name in restored or fields.get(name) is None):
            fields[name] = _extension_fields(value) if name == "extensions" else value
    return Seen(s.native_id, fields, block)


def _extension_fields(value: Any) -> Any:
    """A carried extension object as the fields it holds (its `value`, and the record's fields its format names
    nowhere, `outside`), in the witnesses' shape; which format they came from (`format`) is no field of the record."""
    if not (isinstance(value, dict) and isinstance(value.get("format"), str) and isinstance(value.get("value"), dict)):
        return value
    outside = value.get("outside")
    return {**value["value"], **({"(outside)": outside} if isinstance(outside, dict) and outside else {})}


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


def envelope_members(fmt: str, doc: Any) -> list[tuple[str, Any]]:
    """(path, value) of every envelope member (top level, and a manifest's members) no document line speaks for."""
    if not isinstance(doc, dict):
        return []
    witness = portable(fmt).witness
    out = [(k, v) for k, v in doc.items() if k not in witness.spoken_for]
    manifest = doc.get("manifest")
    if witness.manifest and isinstance(manifest, dict):
        out += [(f"manifest.{k}", v) for k, v in manifest.items() if f"manifest.{k}" not in witness.spoken_for]
    return out


def _document_lines(source_fmt: str, source_doc: Any, target_fmt: str, output: Any, ledger: dict[str, Any],
                    verdict: Verdict) -> int:
    checked = 0
    source_envelope, target_envelope = portable(source_fmt).witness.envelope, portable(target_fmt).witness.envelope
    for row in ledger.get("document") or []:
        name, status = row["field"], row["status"]
        if name not in ("exported_at", "producer"):
            continue
        checked += 1
        a = walk(source_doc, source_envelope[name]) if name in source_envelope else None
        b = walk(output, target_envelope[name]) if name in target_envelope else None
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
    for name in source_envelope:  # every envelope item the source has is accounted for
        if name != "subject" and walk(source_doc, source_envelope[name]) is not None and name not in named:
            checked += 1
            verdict.false.append(f"{source_fmt}->{target_fmt} (document) {name}: in the source, no ledger line")
    return checked
