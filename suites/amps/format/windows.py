"""AMPS in windows: the schema and every prose rule judged a slice of atoms or artifacts at a time,
with the findings the whole-document path reports (tests/test_windowed_validate.py holds them equal).

Per window: the section's subschema (schema errors, re-indexed; the formats in their plain shapes
judged by jsonschema-rs as patterns, `section_schema_errors`), and the rule scan of the atoms in it
(`scan_columns`, skipping the type checks the schema settled when it found no error in the window;
references counted not looked up, else `walk` on the window with references resolved against stand-ins)
so the window reports none; what references need is kept small: every atom and
artifact id, and the distinct ids cited or listed while the section they point into is still to come (once
it was read whole, a window's references are looked up as they come and nothing of them is kept). Only when
a reference resolves nowhere (or cannot be an id) are the windows read again, to report each one where and
in the order the whole-document walk does."""

from __future__ import annotations

import re
from itertools import chain, repeat
from typing import Any

from memconform.kit.windows import NotWindowable
from memconform.kit.windows.plan import PlanContext, Rereader, WindowPlan
from memconform.suites.amps.format.rules import (
    Scan,
    _all_objects,
    _column,
    _nonempty_lists,
    _resolves,
    scan_columns,
    walk,
)

REFERENCES = "references_resolve"
_INDEX = re.compile(r"^\$\.(atoms|artifacts)\[(\d+)\]")


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _shifted(path: str, first: int) -> str:
    return _INDEX.sub(lambda m: f"$.{m[1]}[{int(m[2]) + first}]", path, count=1) if first else path


class AmpsWindows(WindowPlan):
    sections = ("atoms", "artifacts")

    def __init__(self, context: PlanContext) -> None:
        super().__init__(context)
        from memconform.suites.amps.format import RULES, SchemaError

        known = {"schema_valid", *RULES}  # the checks that ask schema_errors and scan, which this plan answers
        unknown = {c.id.split(".", 1)[1] for c in context.checks} - known
        if unknown:  # a check added since may walk the records: only the whole document is known to serve it
            raise NotWindowable(f"checks this plan does not know: {sorted(unknown)}")

        self.errors: list[SchemaError] = []
        self.scan = Scan()
        self.atom_ids: set[Any] = set()
        self.artifact_ids: set[Any] = set()
        self.cited: set[Any] = set()  # distinct ids atoms cite, kept while the artifacts are still to come
        self.listed: set[Any] = set()  # distinct ids artifacts list, kept while the atoms are still to come
        self.unhashable = {"atoms": False, "artifacts": False}  # a reference that cannot be an id
        self.unresolved = {"atoms": False, "artifacts": False}  # a reference looked up as it came, not found
        self.section = ""  # the section of the last window
        self.read_whole: set[str] = set()  # sections whose every window came (a later section's came since)

    def window(self, section: str, first: int, items: list[Any]) -> None:
        from memconform.suites.amps.format import columns_settled, section_schema_errors

        if section != self.section:  # a section's windows come together (the reader refuses one twice)
            if self.section:
                self.read_whole.add(self.section)
            self.section = section
        errors = section_schema_errors(section, items, first)
        self.errors.extend(errors)
        # atoms the schema finds no error in have the types it settles: the rule columns skip checking them
        held = section == "atoms" and not errors and columns_settled()
        records = items if held or _all_objects(items) else [item for item in items if isinstance(item, dict)]
        try:
            if section == "atoms":
                self._atoms(first, items, records, held)
            else:
                self._artifacts(records)
        except TypeError:  # an id that cannot be a member: the whole-document walk meets it as it does
            raise NotWindowable("an atom or artifact id that is no JSON scalar") from None

    def _atoms(self, first: int, items: list[Any], records: list[dict[str, Any]], held: bool) -> None:
        # a window's ids as a set first, then set to set (their hashes kept): 0.23 s against 0.29 s for each
        # into the big set, in validate of 1M atoms (alternated in one process, load ~6)
        self.atom_ids |= set(map(dict.get, records, repeat("atom_id")))
        # references are resolved at the end (`_dangling`), or here when every artifact was read before:
        # the columns count them without looking them up, and hand over the lists of them
        cited: list[list[Any]] = []
        part = scan_columns({"atoms": items, "artifacts": []}, references_judged_elsewhere=True, cited=cited,
                            schema_held=held)
        if part is None:  # a problem: walk says what and where (below); the references as walk reads them
            provenances = map(dict.get, records, repeat("provenance"))
            cited = [refs for p in provenances if type(p) is dict and type(refs := p.get("artifact_ids")) is list]
        ids_only = self._references("atoms", cited, self.artifact_ids, self.cited, "artifacts")
        if part is None or not ids_only:
            # every hashable reference resolving to a stand-in, so the window reports no reference
            distinct = {ref for refs in cited for ref in refs if _hashable(ref)}
            doc = {"atoms": items, "artifacts": [{"artifact_id": ref} for ref in distinct]}
            part = walk(doc) if ids_only else scan_columns(doc) or walk(doc)
        self._merge(part, first, keep=lambda problem: problem.rule != REFERENCES)

    def _artifacts(self, records: list[dict[str, Any]]) -> None:
        self.artifact_ids |= set(map(dict.get, records, repeat("artifact_id")))
        listed = _nonempty_lists(_column(records, "atom_ids"))
        total = sum(map(len, listed))
        self._references("artifacts", listed, self.atom_ids, self.listed, "atoms")
        if total:
            self.scan.observed[REFERENCES] = self.scan.observed.get(REFERENCES, 0) + total

    def _references(self, section: str, refs: list[list[Any]], ids: set[Any], kept: set[Any], target: str) -> bool:
        """One window's references (lists of ids) into `target`: looked up now when every window of
        `target` came before (so `ids` is whole), else their distinct ids kept for the end. False when
        one cannot be an id (a list, an object): the end judges them (`_dangling`), the hashable ones kept."""
        try:
            # a small set first, then set to set (their hashes kept): measured in validate of 1M atoms, 0.46 s
            # against 0.54 s for each reference straight into the big set or its lookup
            distinct = set(chain.from_iterable(refs))
        except TypeError:  # a reference that cannot be an id
            self.unhashable[section] = True
            kept.update(ref for group in refs for ref in group if _hashable(ref))
            return False
        if target not in self.read_whole:
            kept |= distinct
        elif not distinct <= ids:
            self.unresolved[section] = True  # read again at the end, where walk reports each
        return True

    def _merge(self, part: Scan, first: int, keep: Any) -> None:
        for rule, count in part.observed.items():
            self.scan.observed[rule] = self.scan.observed.get(rule, 0) + count
        self.scan.zero_length += part.zero_length
        for rule, problems in part.problems.items():
            for problem in problems:
                if keep(problem):
                    problem.path = _shifted(problem.path, first)
                    self.scan.problems.setdefault(rule, []).append(problem)

    def finish(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader,
               late: list[Any]) -> dict[str, Any]:
        from memconform.suites.amps.format import error_order, json_path, schema_error_entries

        plain = {key: [] if key in counts else value for key, value in envelope.items()}
        envelope_errors = schema_error_entries(plain)
        if any(not parts for parts, _, _ in envelope_errors):
            # an error of the export itself shows the whole export as the value it refused: read whole
            raise NotWindowable("a schema error at the root")
        errors = [e for e in envelope_errors if e[0][0] not in counts] + self.errors
        errors.sort(key=error_order)
        self._dangling(again)
        # the order walk keeps: rules as it first meets them are irrelevant (looked up by key); the
        # problems of one rule in document order, references last (atoms', then artifacts')
        return {"schema_errors": [(json_path(parts), message, value) for parts, message, value in errors],
                "scan": self.scan}

    def _dangling(self, again: Rereader) -> None:
        """The references that resolve nowhere, read again where there are any, in walk's order."""
        for section, refs, ids in (("atoms", self.cited, self.artifact_ids), ("artifacts", self.listed, self.atom_ids)):
            if not self.unhashable[section] and not self.unresolved[section] and refs <= ids:
                continue
            for first, items in again(section):
                doc = {"atoms": items, "artifacts": []} if section == "atoms" else {"atoms": [], "artifacts": items}
                part = walk(doc)  # every reference of the window is reported: those resolving elsewhere dropped
                self._merge(Scan(problems={REFERENCES: part.problems.get(REFERENCES, [])}), first,
                            keep=lambda problem, ids=ids: not _resolves(problem.received, ids))


WINDOW_PLAN = AmpsWindows
