"""AMPS v0.1: the rule table of the prose rules and the one-pass scanner that checks every rule in it.

The schema is its own table (the published JSON Schema, checked whole by `schema_errors`). The rules
the schema cannot say live in RULES, once: the key is the check id (`amps.<key>`), the sentence the
spec's words. `scan` judges every rule a column at a time (one key of every atom) and, when any may
find a problem, walks the atoms and artifacts once, reporting problems by rule key; both count
what each rule could observe; it refuses a key that is not in the table, and the suite registers
exactly one check per key and verifies that at import.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memconform.core import rules
from memconform.kit.windows import computed
from memconform.suites.amps.format.string_formats import PLAIN_DAY, instant

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
    """Every prose rule of RULES over one export. An export the column checks (scan_columns) prove free
    of problems gets their counts; any other is walked atom by atom (walk), which reports each problem.
    A file read in windows was scanned as it was read (windows.py)."""
    windowed = computed(doc, "scan")
    if windowed is not None:
        return windowed  # type: ignore[no-any-return]
    clean = scan_columns(doc)
    return clean if clean is not None else walk(doc)


def walk(doc: Any) -> Scan:
    """Every prose rule of RULES over one export, in one walk of its atoms and artifacts. What each rule
    observed is counted as it goes (sums, not one call per thing seen); references are looked up in
    bulk first, one by one only where one resolves nowhere."""
    out = Scan()
    atoms, artifacts = _items(doc, "atoms"), _items(doc, "artifacts")
    atom_ids = {a.get("atom_id") for _, a in atoms}
    artifact_ids = {a.get("artifact_id") for _, a in artifacts}
    cited: list[tuple[int, list[Any]]] = []
    seen = dict.fromkeys(("inferred_has_sources", "observed_has_sources", "valid_to_not_before_valid_from",
                          "text_at_most_500", "references_resolve"), 0)
    for i, atom in atoms:
        prov = _object(atom.get("provenance"))
        refs = _array(prov.get("artifact_ids"))
        derivation = prov.get("derivation")
        if derivation == "inferred" or derivation == "observed":
            rule = f"{derivation}_has_sources"
            seen[rule] += 1
            if not refs:
                out.add(rule, f"{derivation} atom cites no artifact", prov.get("artifact_ids", "<absent>"),
                        "one or more artifact_ids", f"$.atoms[{i}].provenance.artifact_ids")
            if derivation == "inferred" and not (isinstance(prov.get("extractor"), str) and prov["extractor"]):
                out.add(rule, "inferred atom names no extractor", prov.get("extractor", "<absent>"), "extractor string",
                        f"$.atoms[{i}].provenance.extractor")
        if "sensitivity" not in atom or "valid_from" not in atom:
            for name in ("sensitivity", "valid_from"):
                if name not in atom:
                    for rule in ("atom_labels", "atom_labels_required"):
                        out.add(rule, f"atom carries no {name}", "<absent>", name, f"$.atoms[{i}].{name}")
        ends = atom.get("valid_to")
        if ends is not None:  # absent or null (open-ended): no interval
            start, end = instant(atom.get("valid_from")), instant(ends)
            if start is not None and end is not None:  # not a date-time: not here
                seen["valid_to_not_before_valid_from"] += 1
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
            seen["text_at_most_500"] += 1
            if len(text) > TEXT_MAX:
                out.add("text_at_most_500", "atom text is longer than 500 characters", len(text), f"<= {TEXT_MAX}",
                        f"$.atoms[{i}].text")
        if refs:
            cited.append((i, refs))
    listed = [(i, refs) for i, art in artifacts if (refs := _array(art.get("atom_ids")))]
    # references: counted, then looked up all at once; one by one only when something is missing
    for refs_of, ids, where in ((cited, artifact_ids, "$.atoms[{}].provenance.artifact_ids[{}]"),
                                (listed, atom_ids, "$.artifacts[{}].atom_ids[{}]")):
        seen["references_resolve"] += sum(map(len, (refs for _, refs in refs_of)))
        if not refs_of or _all_in(itertools.chain.from_iterable(refs for _, refs in refs_of), ids):
            continue
        for i, refs in refs_of:
            for j, ref in enumerate(refs):
                if not _resolves(ref, ids):
                    out.add("references_resolve", "reference resolves to nothing in the same export (dangling)", ref,
                            "an id present in this export", where.format(i, j))
    seen["atom_labels"] = seen["atom_labels_required"] = len(atoms)
    out.observed = {rule: count for rule, count in seen.items() if count}
    return out


def _resolves(ref: Any, ids: set[Any]) -> bool:
    """Is this one reference an id of the export? A list or an object is no id (and cannot be looked up)."""
    try:
        return ref in ids
    except TypeError:
        return False


def _all_in(refs: Iterable[Any], ids: set[Any]) -> bool:
    """Does every reference resolve? A reference that cannot be a member (a list, an object) does not."""
    try:
        return ids.issuperset(refs)
    except TypeError:  # an unhashable reference: `in` would raise too; each is judged one by one
        return False


# A date-time in UTC to the second, "Z" in capitals, a day every year has: for strings of this one shape
# (a subset of what instant reads) the order of the strings is the order of the instants.
_UTC_SECONDS = rf"{PLAIN_DAY}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z"
_UTC_SECONDS_LINES = re.compile(rf"(?:{_UTC_SECONDS}\n)*{_UTC_SECONDS}", re.ASCII)
_SOURCED = ("inferred", "observed")


def scan_columns(doc: Any, references_judged_elsewhere: bool = False,
                 cited: list[list[Any]] | None = None, schema_held: bool = False) -> Scan | None:
    """The counts of `walk` for an export in which no rule finds a problem, judged a column at a time
    (one key of every atom, in C where it can be: `map` over `dict.get`, `compress` for a selection);
    None when a rule may find one, or the export has a shape the columns do not cover (an atom that is
    not an object, a provenance that is not an object, an id that cannot be looked up): `walk` then says
    what and where. `references_judged_elsewhere`: the caller resolves the references itself (a window,
    whose atoms cite artifacts of other windows): they are counted here, not looked up, and `cited`
    (when given) is handed every atom's non-empty list of artifact_ids. `schema_held`: the caller found
    the atoms valid under a schema that settles the types these columns check (schema.settles_columns):
    those checks are skipped, with the same answer (tests/test_amps_scan_columns.py)."""
    top = _object(doc)
    atoms, artifacts = _array(top.get("atoms")), _array(top.get("artifacts"))
    if not ((schema_held or _all_objects(atoms)) and _all_objects(artifacts)):
        return None
    provs = _column(atoms, "provenance")
    if not (schema_held or _all_objects(provs)):
        return None
    derivations = _column(provs, "derivation")
    refs = _column(provs, "artifact_ids")
    seen = {"inferred_has_sources": derivations.count("inferred"), "observed_has_sources": derivations.count("observed")}
    # held: every derivation is one of the three (a selection by one comparison each, not two)
    cites = (map(operator.ne, derivations, itertools.repeat("stated")) if schema_held
             else map(_SOURCED.__contains__, derivations))
    sourced = list(itertools.compress(refs, cites))
    # an inferred or observed atom citing nothing (absent, empty, not an array: arrays or absent when held)
    if not ((schema_held or _all_of_type(sourced, list)) and all(sourced)):
        return None
    inferred = itertools.compress(provs, map(operator.eq, derivations, itertools.repeat("inferred")))
    extractors = list(map(dict.get, inferred, itertools.repeat("extractor")))
    # an inferred atom naming no extractor (absent, empty, not a string: strings or absent when held)
    if not (all(extractors) if schema_held else _all_of_type(extractors, str) and "" not in extractors):
        return None
    if not (all(map(operator.contains, atoms, itertools.repeat("sensitivity")))
            and all(map(operator.contains, atoms, itertools.repeat("valid_from")))):
        return None
    intervals = _intervals_in_order(atoms, strings=schema_held)
    if intervals is None:
        return None
    seen["valid_to_not_before_valid_from"] = intervals
    if schema_held:  # every atom holds a text of at most TEXT_MAX characters
        seen["text_at_most_500"] = len(atoms)
    else:
        texts = _column(atoms, "text")
        if not _all_of_type(texts, str):
            texts = [t for t in texts if type(t) is str]
        if texts and max(map(len, texts)) > TEXT_MAX:
            return None
        seen["text_at_most_500"] = len(texts)
    references = (_references_counted(artifacts, refs, cited, schema_held) if references_judged_elsewhere
                  else _references_resolve(atoms, artifacts, refs, schema_held))
    if references is None:
        return None
    seen["references_resolve"] = references
    seen["atom_labels"] = seen["atom_labels_required"] = len(atoms)
    out = Scan()
    out.observed = {rule: count for rule, count in seen.items() if count}
    return out


def _column(objects: list[dict[str, Any]], key: str) -> list[Any]:
    """One key of every object, None where absent (as `get` reads it)."""
    return list(map(dict.get, objects, itertools.repeat(key)))


def _all_of_type(values: Iterable[Any], kind: type) -> bool:
    return set(map(type, values)) <= {kind}


def _all_objects(values: list[Any]) -> bool:
    return _all_of_type(values, dict)


def _intervals_in_order(atoms: list[dict[str, Any]], strings: bool = False) -> int | None:
    """How many atoms carry an interval (valid_to not null, both ends date-times), or None when one
    ends before or as it begins (or may: then `walk` reads each). Ends of the one UTC shape compare as
    strings, all at once; any others are read as instants, as `walk` reads them. `strings`: every
    valid_from is known to be a string and every valid_to a string or null (schema_held)."""
    ends = _column(atoms, "valid_to")
    starts: list[Any]
    if None in ends:  # absent or null: open-ended, no interval (the starts of the others alone are read)
        bounded = list(map(operator.is_not, ends, itertools.repeat(None)))
        starts = list(map(dict.get, itertools.compress(atoms, bounded), itertools.repeat("valid_from")))
        ends = list(itertools.compress(ends, bounded))
    else:
        starts = _column(atoms, "valid_from")
    if (strings or _all_of_type(starts, str) and _all_of_type(ends, str)) and _utc_seconds({*starts, *ends}):
        return None if any(map(operator.le, ends, starts)) else len(ends)
    count = 0
    for start, end in zip(starts, ends, strict=True):  # a value that is no string (a list too) is no instant
        begins, expires = instant(start), instant(end)
        if begins is not None and expires is not None:
            if expires <= begins:
                return None
            count += 1
    return count


def _utc_seconds(values: set[str]) -> bool:
    """Is every string a date-time of the one UTC shape? One match over all, joined by newlines (no
    string holds one: else the count of newlines differs)."""
    if not values:
        return True
    joined = "\n".join(values)
    return joined.count("\n") == len(values) - 1 and _UTC_SECONDS_LINES.fullmatch(joined) is not None


def _references_counted(artifacts: list[dict[str, Any]], refs: list[Any], cited: list[list[Any]] | None = None,
                        lists: bool = False) -> int:
    """How many references there are (as `_references_resolve` counts them), none looked up; `cited`
    (when given) is handed the atoms' non-empty lists of them. `lists`: every one of `refs` is known to be
    a list or None (schema_held)."""
    citing = _nonempty_lists(refs, lists)
    if cited is not None:
        cited.extend(citing)
    return sum(map(len, citing)) + sum(map(len, _nonempty_lists(_column(artifacts, "atom_ids"))))


def _nonempty_lists(values: list[Any], lists: bool = False) -> list[list[Any]]:
    """The values that are non-empty lists (absent, null or anything else holds no reference). `lists`:
    every value is known to be a list or None."""
    if lists or set(map(type, values)) <= {list, type(None)}:
        return list(filter(None, values))  # in C: drops null and []
    return [v for v in values if type(v) is list and v]


def _references_resolve(atoms: list[dict[str, Any]], artifacts: list[dict[str, Any]], refs: list[Any],
                        lists: bool = False) -> int | None:
    """How many references there are, when every one resolves; else None. `lists`: as _references_counted."""
    cited, listed = _nonempty_lists(refs, lists), _nonempty_lists(_column(artifacts, "atom_ids"))
    try:
        atom_ids, artifact_ids = set(_column(atoms, "atom_id")), set(_column(artifacts, "artifact_id"))
        if not (_all_in(itertools.chain.from_iterable(cited), artifact_ids)
                and _all_in(itertools.chain.from_iterable(listed), atom_ids)):
            return None
    except TypeError:  # an id that cannot be a member: `walk` meets it as it does
        return None
    return sum(map(len, cited)) + sum(map(len, listed))
