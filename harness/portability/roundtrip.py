"""The round-trip properties as plain functions returning violations (an empty list: the property holds).

A hop A -> B must keep the invariants: ids map one to one, DNA protection survives unless the ledger says
it cannot, sensitivity travels unchanged unless the ledger says it is lost, what was deleted stays
deleted, and the output is within the target's limits (it passed memconform's checks). A round trip
A -> B -> A must bring back equal every field both hops' ledgers call kept or carried.
"""

from __future__ import annotations

from typing import Any

from .canonical import NO_ID, Document, Record
from .formats import portable
from .translate import Translation, Writer, read, translate

KEPT = ("kept", "respelled", "carried")  # a respelled value reads back as the same canonical value


def _by_id(doc: Document) -> dict[str, Record]:
    return {r.key(doc.source): r for r in doc.records}


def hop_violations(tr: Translation) -> list[str]:
    """The invariants of one translation, judged on its output read back."""
    where = f"{tr.source} -> {tr.target}"
    if tr.output is None:
        return [f"{where}: refused: {tr.refused}"]
    out = read(tr.target, tr.output)
    got = _by_id(out)
    problems = _id_problems(tr, out, got)
    for r in tr.canonical.records:
        rid = r.key(tr.source)
        targets = tr.ledger.id_map.get(rid, [])
        b = got.get(targets[0]) if targets else None
        problems += [f"{where}: record {rid!r}: {p}" for p in _record_problems(tr, r, rid, b)]
    return problems


def _id_problems(tr: Translation, out: Document, got: dict[str, Record]) -> list[str]:
    where = f"{tr.source} -> {tr.target}"
    problems = []
    targets = [t for ts in tr.ledger.id_map.values() for t in ts]
    if len(set(targets)) != len(targets):
        problems.append(f"{where}: two records were given one id: {sorted(t for t in set(targets) if targets.count(t) > 1)[:5]}")
    missing = [t for t in targets if t not in got]
    if missing:
        problems.append(f"{where}: ids the ledger maps to are not in the output: {missing[:5]}")
    if len(out.records) != len(set(targets)):
        problems.append(f"{where}: {len(out.records)} records in the output, the ledger maps {len(set(targets))}")
    live_in = [r for r in tr.canonical.records if not r.get("deleted")]
    unmapped = [r.key(tr.source) for r in live_in if not tr.ledger.id_map.get(r.key(tr.source))]
    if unmapped:
        problems.append(f"{where}: live records with no id in the output: {unmapped[:5]}")
    return problems


def _record_problems(tr: Translation, r: Record, rid: str, b: Record | None) -> list[str]:
    status = tr.ledger.status
    if r.get("deleted"):
        return [] if b is None or b.get("deleted") else ["deleted in the source, live in the output"]
    if b is None:
        return []  # reported by _id_problems
    problems = []
    if b.get("deleted"):
        problems.append("live in the source, deleted in the output")
    if r.get("dna") is True and b.get("dna") is not True and status(rid, "dna") != "lost":
        problems.append(f"DNA in the source, not in the output, and the ledger says {status(rid, 'dna')!r}, not lost")
    if r.has("sensitivity") and b.get("sensitivity") != r.get("sensitivity") and status(rid, "sensitivity") != "lost":
        problems.append(f"sensitivity {r.get('sensitivity')!r} became {b.get('sensitivity')!r}, and the ledger says "
                        f"{status(rid, 'sensitivity')!r}, not lost")
    for name, value in r.values.items():
        if value is not None and status(rid, name) in KEPT and b.get(name) != value:
            problems.append(f"{name}: the ledger says {status(rid, name)} but it reads back as {b.get(name)!r:.80}, "
                            f"not {value!r:.80}")
    return problems


def roundtrip_violations(doc: Any, a: str, b: str, writers: dict[str, Writer] | None = None) -> list[str]:
    """A -> B -> A: both hops' invariants, then every field both ledgers keep or carry comes back equal."""
    there = translate(doc, a, b, writers=writers)
    problems = hop_violations(there)
    if there.output is None:
        return problems
    back = translate(there.output, b, a, writers=writers)
    problems += hop_violations(back)
    if back.output is None:
        return problems
    final = _by_id(read(a, back.output))
    for r in there.canonical.records:
        rid = r.key(a)
        if r.get("deleted"):
            continue
        mid = next(iter(there.ledger.id_map.get(rid, [])), None)
        home = next(iter(back.ledger.id_map.get(mid, [])), None) if mid else None
        came = final.get(home) if home else None
        if came is None:
            problems.append(f"{a} -> {b} -> {a}: record {rid!r} did not come back")
            continue
        if home != rid and not rid.startswith(NO_ID) and there.ledger.status(rid, "id") in KEPT and back.ledger.status(mid or "", "id") in KEPT:
            problems.append(f"{a} -> {b} -> {a}: record {rid!r} came back as {home!r}")
        problems += _fields_back(a, b, r, came, rid, mid or "", there, back)
    return problems


def _fields_back(a: str, b: str, r: Record, came: Record, rid: str, mid: str, there: Translation,
                 back: Translation) -> list[str]:
    problems = []
    for name, value in r.values.items():
        if value is None or name == "deleted":
            continue
        first, second = there.ledger.status(rid, name), back.ledger.status(mid, name)
        if first in KEPT and second != "lost" and came.get(name) != value:
            problems.append(f"{a} -> {b} -> {a}: record {rid!r}: {name} ({first} there, {second} back) came back as "
                            f"{came.get(name)!r:.80}, not {value!r:.80}")
    return problems


PREDICTING = ("respelled", "lost", "invented")  # a ledger line that says a field may not come back as it was


def unpredicted(doc: Any, a: str, b: str, writers: dict[str, Writer] | None = None) -> tuple[list[str], str | None]:
    """A -> B -> A compared with A, record by record and field by field as the independent readers of
    ledger_truth.py see both documents (envelope included): (every difference neither ledger said would
    happen, why the round trip could not be made or None)."""
    from .ledger_truth import alike, leaves, records, same, walk

    there = translate(doc, a, b, writers=writers)
    if there.output is None:
        return [], f"{a} -> {b} refused: {there.refused}"
    back = translate(there.output, b, a, writers=writers)
    if back.output is None:
        return [], f"{b} -> {a} refused: {back.refused}"
    src, final = records(a, doc), records(a, back.output)
    witness = portable(a).witness
    out: list[str] = []
    reached: set[str] = set()
    for rid, seen in src.items():
        mid = next(iter(there.ledger.id_map.get(rid, [])), None)
        home = next(iter(back.ledger.id_map.get(mid, [])), None) if mid else None
        said = _said(there, rid)
        for name, statuses in _said(back, mid or "").items():
            said.setdefault(name, set()).update(statuses)
        carried_back = {n for n, st in _said(back, mid or "").items() if "carried" in st}
        if seen.fields.get("deleted"):
            continue
        came = final.get(home) if home else None
        if came is None:
            if "deleted" not in said:
                out.append(f"{a}->{b}->{a} {rid!r}: did not come back")
            continue
        reached.add(home or "")
        if came.native_id != seen.native_id and not said.get("id", set()) & {"respelled", "lost", "carried"}:
            out.append(f"{a}->{b}->{a} {rid!r}: id {seen.native_id!r} came back as {came.native_id!r}")
        invented_natives = " ".join(n for n in _said(back, mid or "") if n.startswith("+"))
        for name in sorted(set(seen.fields) | set(came.fields)):
            before, after = seen.fields.get(name), came.fields.get(name)
            if before is not None and after is not None and same(name, before, after):
                continue
            if said.get(name, set()) & set(PREDICTING):
                continue
            held = (came.block.get("fields") or {}).get(name) if isinstance(came.block.get("fields"), dict) else None
            if name in carried_back and held is not None and (
                    alike(name, before, held) or name == "extensions" and before is not None and leaves(before) <= leaves(held)):
                continue  # the way back said A's format holds it in the block, and the block holds it
            native = witness.native.get(name, (name,))[-1]
            if before is None and (native in invented_natives or name in invented_natives):
                continue
            out.append(f"{a}->{b}->{a} {rid!r}: {name} {before!r:.60} came back as {after!r:.60} "
                       f"(ledgers: {sorted(said.get(name, set())) or 'nothing'})")
    extra = sorted(set(final) - reached)
    if extra:
        out.append(f"{a}->{b}->{a}: records that were not in A: {extra[:5]}")
    for name, path in witness.envelope.items():
        if name == "subject":
            continue
        before, after = walk(doc, path), walk(back.output, path)
        if before is not None and after is not None and same("created_at" if name == "exported_at" else name, before, after):
            continue
        if before is None and after is None:
            continue
        statuses = {r["status"] for t in (there, back) for r in t.ledger.to_json()["document"] if r["field"] == name}
        if not statuses & set(PREDICTING):
            out.append(f"{a}->{b}->{a} (document) {name}: {before!r:.60} came back as {after!r:.60}")
    return out, None


def _said(tr: Translation, rid: str) -> dict[str, set[str]]:
    """Per field (and per invented native, as `+native`), the statuses a ledger gave a record."""
    out: dict[str, set[str]] = {}
    for name, status in tr.ledger.per_record.get(rid, {}).items():
        out.setdefault(name, set()).add(status)
    return out
