"""`memconform port`: a memory moved between two live implementations and back, every loss compared with
the ledger. A loss the ledger does not predict is a finding named by where it appeared:

- A: the seed document imported into A does not come back from A's export as it went in;
- translation: the translation A -> B (read back) or its offline way back breaks a round-trip property;
- B: what B exports is not what it was given (a kept or carried field changed or a record missing);
- back: the final translation B -> A does not return what the ledger kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.core.profile import Profile
from memconform.core.results import HarnessError

from .canonical import Document, Record
from .endpoints import export, import_, open_endpoint
from .formats import Endpoint, portable
from .matrix import sample_files
from .roundtrip import hop_violations, roundtrip_violations
from .translate import Translation, Writer, read, translate

KEPT = ("kept", "respelled", "carried")  # what must come back: a respelled value reads back as the same value
# what a consumer may drop on import by its own spec (a Portable's `sanctioned`, with the sentence that allows it)
# is reported as a note, not a finding; what it may rewrite (`not_compared`, e.g. ids a consumer assigns) is not
# compared


@dataclass
class Finding:
    where: str  # A, B, translation, back
    record: str
    field: str
    expected: Any
    got: Any

    def line(self) -> str:
        return f"[{self.where}] record {self.record!r}: {self.field}: expected {self.expected!r:.100}, got {self.got!r:.100}"


@dataclass
class PortResult:
    source: str
    target: str
    findings: list[Finding] = field(default_factory=list)
    there: Translation | None = None
    back: Translation | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


def format_of(spec: str, named: str | None) -> str:
    if named:
        return named
    if spec.startswith("reference:"):
        return spec.split(":", 1)[1]
    raise HarnessError(f"cannot tell the format of target {spec!r}: name it with --from-format / --to-format")


def match_key(fmt: str, r: Record) -> str:
    """How two exports of one format name the same record: by text where the format's consumers assign their
    own ids (its Portable's `match_by_text`), else by id."""
    return f"text:{r.get('text')}" if portable(fmt).match_by_text else r.key(fmt)


def compare(fmt: str, given: Document, got: Document, where: str, fields: dict[str, set[str]] | None = None) -> list[Finding]:
    """Every record of `given` should be in `got` with the same values (only `fields[key]` when given)."""
    have = {match_key(fmt, r): r for r in got.records if not r.get("deleted")}
    out = []
    for r in given.records:
        if r.get("deleted"):
            continue
        k = match_key(fmt, r)
        other = have.get(k)
        if other is None:
            out.append(Finding(where, r.key(fmt), "(record)", "present", "missing"))
            continue
        names = fields.get(k, set()) if fields is not None else set(r.values)
        for name in sorted(names - portable(fmt).not_compared):
            if r.get(name) is not None and other.get(name) != r.get(name):
                out.append(Finding(where, r.key(fmt), name, r.get(name), other.get(name)))
            elif name in r.shown and other.shown.get(name) != r.shown[name]:
                # equal only because the translation's block holds it: the target's own field lost it
                out.append(Finding(where, r.key(fmt), name, r.shown[name], other.shown.get(name, "only in the memconform_port block")))
    return out


def kept_fields(tr: Translation, fmt: str, doc: Document) -> dict[str, set[str]]:
    """Per record of `doc` (by match key): the fields the ledger of `tr` kept or carried for it."""
    out = {}
    for r in doc.records:
        rid = r.key(fmt)
        out[match_key(fmt, r)] = {n for n, s in tr.ledger.per_record.get(rid, {}).items() if s in KEPT}
    return out


def seed_document(fmt: str, seed: Path | None) -> Any:
    from .translate import load

    path = seed or next((p for p in sample_files(fmt) if p.name == portable(fmt).seed), None)
    if path is None:
        raise HarnessError(f"no seed document for {fmt}: give one with --seed")
    return load(path, fmt)[1]


def port(spec_a: str, spec_b: str, fmt_a: str | None = None, fmt_b: str | None = None, seed: Path | None = None,
         seed_a: bool = True, writers: dict[str, Writer] | None = None, key_a: str | None = None,
         key_b: str | None = None, profile: Profile | None = None) -> PortResult:
    """A -> B -> A through two live targets, each called with its own API key (None: none sent); `writers`
    replaces translators (the planted-bug controls)."""
    a_fmt, b_fmt = format_of(spec_a, fmt_a), format_of(spec_b, fmt_b)
    result = PortResult(a_fmt, b_fmt)
    a = open_endpoint(spec_a, a_fmt, key_a, profile)
    try:
        b = open_endpoint(spec_b, b_fmt, key_b, profile)
        try:
            _run(a, b, a_fmt, b_fmt, seed, seed_a, result, writers)
        finally:
            b.close()
    finally:
        a.close()
    return result


def _run(a: Endpoint, b: Endpoint, a_fmt: str, b_fmt: str, seed: Path | None, seed_a: bool, result: PortResult,
         writers: dict[str, Writer] | None) -> None:
    if seed_a:
        given = seed_document(a_fmt, seed)
        import_(a, given)
        exported_a = export(a)
        _add(result, compare(a_fmt, read(a_fmt, given), read(a_fmt, exported_a), "A"), a_fmt)
    else:
        exported_a = export(a)
    there = translate(exported_a, a_fmt, b_fmt, writers=writers)
    result.there = there
    if there.output is None:
        result.findings.append(Finding("translation", "(document)", "(refused)", "a translation", there.refused))
        return
    result.findings += [Finding("translation", "", "(property)", "holds", v) for v in hop_violations(there)]
    result.findings += [Finding("translation", "", "(round trip offline)", "holds", v)
                        for v in roundtrip_violations(exported_a, a_fmt, b_fmt, writers=writers)]
    import_(b, there.output)
    exported_b = export(b)
    written_b, read_b = read(b_fmt, there.output), read(b_fmt, exported_b)
    _add(result, compare(b_fmt, written_b, read_b, "B"), b_fmt)
    mine = {match_key(b_fmt, r) for r in written_b.records}
    theirs = Document(b_fmt, [r for r in read_b.records if match_key(b_fmt, r) in mine], read_b.subject, read_b.producer,
                      read_b.exported_at)
    back = translate(_document_of(b_fmt, exported_b, theirs), b_fmt, a_fmt, writers=writers)
    result.back = back
    if back.output is None:
        result.findings.append(Finding("back", "(document)", "(refused)", "a translation", back.refused))
        return
    source = read(a_fmt, exported_a)
    wanted = {match_key(a_fmt, r): {n for n, s in there.ledger.per_record.get(r.key(a_fmt), {}).items() if s in KEPT}
              for r in source.records}
    _add(result, compare(a_fmt, source, read(a_fmt, back.output), "back", wanted), b_fmt)


def _add(result: PortResult, findings: list[Finding], consumer: str) -> None:
    """Findings, except differences the consumer's spec allows (those become notes naming the sentence)."""
    for f in findings:
        why = portable(consumer).sanctioned.get(f.field)
        if why:
            result.notes.append(f"{f.line()} (allowed to {consumer}: \"{why}\")")
        else:
            result.findings.append(f)


def _document_of(fmt: str, exported: Any, keep: Document) -> Any:
    """B's export narrowed to the records this port wrote (a live target may hold others)."""
    wanted = {match_key(fmt, r) for r in keep.records}
    full = read(fmt, exported)
    if len(full.records) == len(keep.records):
        return exported
    drop = {r.key(fmt) for r in full.records if match_key(fmt, r) not in wanted}
    narrow = portable(fmt).narrow
    if narrow is not None:
        return narrow(exported, drop)
    raise HarnessError(f"the {fmt} target holds {len(full.records) - len(keep.records)} records this port did not write; "
                       "port from an instance that holds only what it was given")
