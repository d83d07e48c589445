"""AMPS v0.1: the rule table of the prose rules and the one-pass scanner that checks every rule in it.

The schema is its own table (the published JSON Schema, checked whole by `schema_errors`). The rules
the schema cannot say live in RULES, once: the key is the check id (`amps.<key>`), the sentence the
spec's words. `scan` walks the atoms and artifacts once, reports problems by rule key, and counts
what each rule could observe; it refuses a key that is not in the table, and the suite registers
exactly one check per key and verifies that at import.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memconform.core import rules
from memconform.suites.amps.format.string_formats import instant, plain_date_times

TEXT_MAX = 500


@dataclass(frozen=True)
class Rule(rules.Rule):
    observes: str  # what an export must hold for the rule to be observed
    gate: tuple[str, str, bool] | None = None  # (option, value, runs when equal): otherwise not applicable


LABELS = "Every atom carries valid_from and optional valid_to."
_RULES = (
    Rule("inferred_has_sources", "Provenance rules", "MUST",
         "inferred — a model concluded this from one or more artifacts. artifact_ids and extractor are required.",
         "inferred atom"),
    Rule("observed_has_sources", "Provenance rules", "MUST",
         "observed — captured passively from behavior (e.g. calendar patterns, voice cadence). artifact_ids "
         "required; must be revocable.", "observed atom"),
    Rule("atom_labels", "Design principles", "SHOULD", LABELS, "atom"),
    Rule("atom_labels_required", "Design principles", "MUST", LABELS, "atom", gate=("atom_labels", "required", True)),
    Rule("valid_to_not_before_valid_from", "Design principles", "MUST",
         "Time-aware. Every atom carries valid_from and optional valid_to. Old facts don't get quietly replaced; "
         "they expire.", "atom with both valid_from and valid_to"),
    Rule("text_at_most_500", "Schema", "MUST", '"text": { "type": "string", "maxLength": 500 }', "atom text"),
    Rule("references_resolve", "Design principles", "SHOULD",
         "Source-linked. Every atom points back to the artifacts it was extracted from.", "reference",
         gate=("dangling_refs", "ignore", False)),
)
RULES: dict[str, Rule] = {r.key: r for r in _RULES}


@dataclass
class Problem:
    rule: str
    title: str
    received: Any
    expected: Any
    path: str
    readings: tuple[str, ...] = ()  # the readings (errata points) under which this is a problem; () = all


@dataclass
class Scan:
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    observed: dict[str, int] = field(default_factory=dict)  # rule key -> how many things it looked at
    zero_length: int = 0  # intervals with valid_to == valid_from (reading A7)

    def add(self, rule: str, title: str, received: Any, expected: Any, path: str,
            readings: tuple[str, ...] = ()) -> None:
        if rule not in RULES:  # the registration check's other half: the scanner speaks only table keys
            raise KeyError(f"scanner rule {rule!r} is not in the amps rule table")
        self.problems.setdefault(rule, []).append(Problem(rule, title, received, expected, path, readings))

    def saw(self, *rules: str) -> None:
        for rule in rules:
            self.observed[rule] = self.observed.get(rule, 0) + 1


def _object(value: Any) -> dict[str, Any]:
    """A JSON object as it is, anything else as an empty one (absent or malformed: nothing to check)."""
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    """A JSON array as it is, anything else as an empty one."""
    return value if isinstance(value, list) else []


def _items(doc: Any, key: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, a) for i, a in enumerate(_array(_object(doc).get(key))) if isinstance(a, dict)]


def scan(doc: Any) -> Scan:
    """Every prose rule of RULES over one export. Rule by rule, each over all atoms at once (a list of
    the values it reads, then only the atoms that need a closer look), so each rule's problems come in
    atom order as before; what each rule observed is counted, not noted one call per thing seen."""
    out = Scan()
    atoms, artifacts = _items(doc, "atoms"), _items(doc, "artifacts")
    provenances = [_object(atom.get("provenance")) for _, atom in atoms]
    _sources(out, atoms, provenances)
    out.observed["atom_labels"] = out.observed["atom_labels_required"] = len(atoms)
    for i, atom in atoms:
        if "sensitivity" not in atom or "valid_from" not in atom:
            for name in ("sensitivity", "valid_from"):
                if name not in atom:
                    for rule in ("atom_labels", "atom_labels_required"):
                        out.add(rule, f"atom carries no {name}", "<absent>", name, f"$.atoms[{i}].{name}")
    _intervals(out, [(i, atom) for i, atom in atoms if atom.get("valid_to") is not None])
    texts = [(i, text) for i, atom in atoms if isinstance(text := atom.get("text"), str)]
    out.observed["text_at_most_500"] = len(texts)
    for i, text in texts:
        if len(text) > TEXT_MAX:
            out.add("text_at_most_500", "atom text is longer than 500 characters", len(text), f"<= {TEXT_MAX}",
                    f"$.atoms[{i}].text")
    _references(out, atoms, provenances, artifacts)
    out.observed = {rule: count for rule, count in out.observed.items() if count}
    return out


def _sources(out: Scan, atoms: list[tuple[int, dict[str, Any]]], provenances: list[dict[str, Any]]) -> None:
    """inferred and observed atoms cite artifacts; an inferred one also names its extractor."""
    for (i, _), prov in zip(atoms, provenances, strict=True):
        derivation = prov.get("derivation")
        if derivation != "inferred" and derivation != "observed":
            continue
        rule = f"{derivation}_has_sources"
        out.observed[rule] = out.observed.get(rule, 0) + 1
        if not _array(prov.get("artifact_ids")):
            out.add(rule, f"{derivation} atom cites no artifact", prov.get("artifact_ids", "<absent>"),
                    "one or more artifact_ids", f"$.atoms[{i}].provenance.artifact_ids")
        if derivation == "inferred" and not (isinstance(prov.get("extractor"), str) and prov["extractor"]):
            out.add(rule, "inferred atom names no extractor", prov.get("extractor", "<absent>"), "extractor string",
                    f"$.atoms[{i}].provenance.extractor")


# a UTC date-time of one fixed width ("2024-01-01T00:00:00Z"): for these, text order is time order
_UTC_SECONDS = re.compile(r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\n)*"
                          r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)


def _intervals(out: Scan, bounded: list[tuple[int, dict[str, Any]]]) -> None:
    """valid_to not before valid_from, for atoms with both (absent or null valid_to: open-ended)."""
    pairs = [(i, atom.get("valid_from"), atom["valid_to"]) for i, atom in bounded]
    if pairs and _all_utc_seconds([p[1] for p in pairs] + [p[2] for p in pairs]):
        # every one a real date-time (the common shape, checked) compared as text: the same order
        out.observed["valid_to_not_before_valid_from"] = len(pairs)
        suspects = [(i, start, end) for i, start, end in pairs if end <= start]
        instants = [(i, instant(start), instant(end)) for i, start, end in suspects]
    else:
        instants = [(i, instant(start), instant(end)) for i, start, end in pairs]
        instants = [(i, start, end) for i, start, end in instants if start is not None and end is not None]
        out.observed["valid_to_not_before_valid_from"] = len(instants)
    by_index = dict(bounded)
    for i, start, end in instants:
        atom = by_index[i]
        if end < start:
            out.add("valid_to_not_before_valid_from", "atom expires before it becomes valid", atom["valid_to"],
                    f"not before {atom['valid_from']}", f"$.atoms[{i}].valid_to")
        elif end == start:
            out.zero_length += 1
            out.add("valid_to_not_before_valid_from", "atom expires the instant it becomes valid",
                    atom["valid_to"], f"after {atom['valid_from']}", f"$.atoms[{i}].valid_to",
                    readings=("A7:strictly-after",))


def _all_utc_seconds(values: list[Any]) -> bool:
    """Is every value a date-time string like 2024-01-01T00:00:00Z that names a real instant?"""
    if not all(type(v) is str for v in values):
        return False
    distinct = set(values)
    joined = "\n".join(distinct)
    return (joined.count("\n") == len(distinct) - 1 and _UTC_SECONDS.fullmatch(joined) is not None
            and plain_date_times(distinct))


def _references(out: Scan, atoms: list[tuple[int, dict[str, Any]]], provenances: list[dict[str, Any]],
                artifacts: list[tuple[int, dict[str, Any]]]) -> None:
    """Every artifact an atom cites and every atom an artifact lists is in the export: looked up all at
    once, one by one only when something is missing."""
    cited = [(i, _array(prov.get("artifact_ids"))) for (i, _), prov in zip(atoms, provenances, strict=True)]
    listed = [(i, _array(art.get("atom_ids"))) for i, art in artifacts]
    out.observed["references_resolve"] = sum(map(len, (refs for _, refs in cited))) + sum(
        map(len, (refs for _, refs in listed)))
    for refs_of, holders, key, where in ((cited, artifacts, "artifact_id", "$.atoms[{}].provenance.artifact_ids[{}]"),
                                         (listed, atoms, "atom_id", "$.artifacts[{}].atom_ids[{}]")):
        if not any(refs for _, refs in refs_of):
            continue  # nothing cited: the ids need not be gathered
        ids = {holder.get(key) for _, holder in holders}
        if _all_in(itertools.chain.from_iterable(refs for _, refs in refs_of), ids):
            continue
        for i, refs in refs_of:
            for j, ref in enumerate(refs):
                if ref not in ids:
                    out.add("references_resolve", "reference resolves to nothing in the same export (dangling)",
                            ref, "an id present in this export", where.format(i, j))


def _all_in(refs: Iterable[Any], ids: set[Any]) -> bool:
    """Does every reference resolve? A reference that cannot be a member (a list, an object) does not."""
    try:
        return ids.issuperset(refs)
    except TypeError:  # an unhashable reference: `in` would raise too; each is judged one by one
        return False
