"""AMPS v0.1: the rule table of the prose rules and the one-pass scanner that checks every rule in it.

The schema is its own table (the published JSON Schema, checked whole by `schema_errors`). The rules
the schema cannot say live in RULES, once: the key is the check id (`amps.<key>`), the sentence the
spec's words. `scan` walks the atoms and artifacts once, reports problems by rule key, and counts
what each rule could observe; it refuses a key that is not in the table, and the suite registers
exactly one check per key and verifies that at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memconform.core import rules
from memconform.suites.amps.format.string_formats import parse_date_time

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
    """Every prose rule of RULES over one export, in one walk of its atoms and artifacts."""
    out = Scan()
    atoms, artifacts = _items(doc, "atoms"), _items(doc, "artifacts")
    atom_ids = {a.get("atom_id") for _, a in atoms}
    artifact_ids = {a.get("artifact_id") for _, a in artifacts}
    for i, atom in atoms:
        prov = _object(atom.get("provenance"))
        refs = _array(prov.get("artifact_ids"))
        derivation = prov.get("derivation")
        if derivation in ("inferred", "observed"):
            rule = f"{derivation}_has_sources"
            out.saw(rule)
            if not refs:
                out.add(rule, f"{derivation} atom cites no artifact", prov.get("artifact_ids", "<absent>"),
                        "one or more artifact_ids", f"$.atoms[{i}].provenance.artifact_ids")
            if derivation == "inferred" and not (isinstance(prov.get("extractor"), str) and prov["extractor"]):
                out.add(rule, "inferred atom names no extractor", prov.get("extractor", "<absent>"), "extractor string",
                        f"$.atoms[{i}].provenance.extractor")
        out.saw("atom_labels", "atom_labels_required")
        for name in ("sensitivity", "valid_from"):
            if name not in atom:
                for rule in ("atom_labels", "atom_labels_required"):
                    out.add(rule, f"atom carries no {name}", "<absent>", name, f"$.atoms[{i}].{name}")
        start, end = parse_date_time(atom.get("valid_from")), parse_date_time(atom.get("valid_to"))
        if start is not None and end is not None:  # absent, null (open-ended) or not a date-time: not here
            out.saw("valid_to_not_before_valid_from")
            if end < start:
                out.add("valid_to_not_before_valid_from", "atom expires before it becomes valid", atom["valid_to"],
                        f"not before {atom['valid_from']}", f"$.atoms[{i}].valid_to")
            elif end == start:
                out.zero_length += 1
                out.add("valid_to_not_before_valid_from", "atom expires the instant it becomes valid",
                        atom["valid_to"], f"after {atom['valid_from']}", f"$.atoms[{i}].valid_to",
                        readings=("A7:strictly-after",))
        text = atom.get("text")
        if isinstance(text, str):
            out.saw("text_at_most_500")
            if len(text) > TEXT_MAX:
                out.add("text_at_most_500", "atom text is longer than 500 characters", len(text), f"<= {TEXT_MAX}",
                        f"$.atoms[{i}].text")
        for j, ref in enumerate(refs):
            out.saw("references_resolve")
            if ref not in artifact_ids:
                out.add("references_resolve", "reference resolves to nothing in the same export (dangling)", ref,
                        "an id present in this export", f"$.atoms[{i}].provenance.artifact_ids[{j}]")
    for i, art in artifacts:
        for j, ref in enumerate(_array(art.get("atom_ids"))):
            out.saw("references_resolve")
            if ref not in atom_ids:
                out.add("references_resolve", "reference resolves to nothing in the same export (dangling)", ref,
                        "an id present in this export", f"$.artifacts[{i}].atom_ids[{j}]")
    return out
