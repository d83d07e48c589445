"""The AMPS oracle: for a request in a state, every answer the spec (with the errata's readings) accepts.

Pure: no I/O, no target. A state is what the consumer holds per subject: its atoms as imported (their
provenance kept current by deletions), its artifacts, and the atoms a deletion left without a source
(deleted or re-flagged unsourced, errata A5). Requests: an import of an export document; a deletion of
one artifact of a subject; an export of a subject (`export_differs` says what in a target's export no
acceptable state explains). Each answer is a tuple of acceptable outcomes; a caller finds the one the
target gave and takes its state as the next one, or fails naming them all.

Readings (the defaults accept every plausible one; `Readings` pins them, from the suite's options):
A12 `import_semantics` (merge: a second import adds to the subject | replace: it is the subject's whole
snapshot), A4 `unsourced_inferred` (reject-export | drop-atom), A5 `unsourced_after_delete`
(delete-or-flag | delete), and an import carrying a value the spec is silent on (a class of the domain
table marked open, or an atom that expires before it is valid, errata A56) is either accepted or refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.core import oracle
from memconform.suites.amps import format as amps
from memconform.suites.amps.format.string_formats import parse_date_time

SOURCED = ("inferred", "observed")  # the derivations that need one or more artifacts (errata A3)


@dataclass(frozen=True)
class Readings:
    import_semantics: str = "either"  # A12: "merge", "replace" or "either"
    unsourced_inferred: str = "reject-export"  # A4: "reject-export" or "drop-atom" (which also allows refusal)
    unsourced_after_delete: str = "delete-or-flag"  # A5: "delete-or-flag" or "delete"
    withheld_atoms: str = "either"  # A9: "either" (every atom of a non-public label may be left out) or "none"

    @classmethod
    def from_options(cls, option: Callable[[str], Any]) -> Readings:
        return cls(str(option("import_semantics") or "either"), str(option("unsourced_inferred") or "reject-export"),
                   str(option("unsourced_after_delete") or "delete-or-flag"), str(option("withheld_atoms") or "either"))

    def option(self, name: str) -> Any:
        """These readings as the table's pins: an option's value by its name."""
        return getattr(self, name, None)

    def semantics(self) -> tuple[str, ...]:
        """The readings of a second import these pins accept (A12, the table's rows: merge, replace)."""
        from memconform.suites.amps.table import TABLE

        return tuple(row.name for row in TABLE.of("A12") if row.accepted(self.option))


DEFAULT = Readings()


@dataclass(frozen=True)
class Subject:
    atoms: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # atom id -> the atom, sources current
    artifacts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # artifact id -> the artifact
    unsourced: frozenset[str] = frozenset()  # sourced atoms whose last artifact was deleted: deleted or flagged
    droppable: frozenset[str] = frozenset()  # stated atoms whose only cited artifact was deleted: kept or dropped
    profile: Mapping[str, Any] | None = None  # the subject object of the last accepted import


State = Mapping[str, Subject]  # subject id -> what is held for it
EMPTY: State = {}


Answer = oracle.Answer[State]


# ---- imports -----------------------------------------------------------------------------------

def import_problems(doc: Any) -> list[str]:
    """Why the spec's importer refuses the export: the published schema, then provenance (errata A3)."""
    out = [f"{path}: {message}" for path, message, _ in amps.schema_errors(doc)]
    if out:
        return out
    for i, atom in amps.atoms(doc):
        derivation = amps.provenance(atom).get("derivation")
        if derivation in SOURCED and not amps.has_sources(atom):
            out.append(f"$.atoms[{i}]: {derivation} atom cites no artifact_ids")
        if derivation == "inferred" and not amps.provenance(atom).get("extractor"):
            out.append(f"$.atoms[{i}]: inferred atom names no extractor")
    return out


def inverted_intervals(doc: Any) -> list[int]:
    """Atoms whose valid_to precedes valid_from: the schema allows them, an importer may refuse them (A56)."""
    out = []
    for i, atom in amps.atoms(doc):
        start, end = parse_date_time(atom.get("valid_from")), parse_date_time(atom.get("valid_to"))
        if start is not None and end is not None and end < start:
            out.append(i)
    return out


def _subject_id(doc: Any) -> Any:
    subject = doc.get("subject") if isinstance(doc, Mapping) else None
    return subject.get("subject_id") if isinstance(subject, Mapping) else None


def _imported(held: Subject | None, doc: Mapping[str, Any], semantics: str, skip: frozenset[int] = frozenset()) -> Subject:
    # an import the model accepts names every record by its id (a record without one is refused before)
    atoms: dict[str, Mapping[str, Any]] = {a["atom_id"]: a for i, a in amps.atoms(doc) if i not in skip}
    arts: dict[str, Mapping[str, Any]] = {a["artifact_id"]: a for _, a in amps.artifacts(doc)}
    if semantics == "replace" or held is None:
        return Subject(atoms, arts, profile=doc["subject"])
    return Subject({**held.atoms, **atoms}, {**held.artifacts, **arts}, held.unsourced - set(atoms),
                   held.droppable - set(atoms), doc["subject"])


def import_answers(state: State, doc: Any, readings: Readings = DEFAULT, open_point: str = "") -> tuple[Answer, ...]:
    """Every acceptable outcome of importing `doc`. A refused import changes nothing (A12: under both
    readings). `open_point`: the errata point of a value the spec is silent on (accepted or refused)."""
    refused = Answer(False, state, why="; ".join(import_problems(doc))[:300])
    problems = import_problems(doc)
    sid = _subject_id(doc)
    if problems and not open_point:
        unsourced = set(amps.unsourced_inferred(doc))
        only_unsourced = unsourced and len(problems) == len(unsourced)
        if only_unsourced and readings.unsourced_inferred == "drop-atom":
            return (refused, *_accepted(state, sid, doc, readings, "A4:drop-atom", frozenset(unsourced)))
        return (refused,)
    if problems:  # open: the schema refuses it, yet the spec's prose leaves it to the importer
        kept = _accepted(state, sid, doc, readings, f"{open_point}:accepted")
        return (refused, *(kept or (Answer(True, state, f"{open_point}:accepted", "stored under no subject id"),)))
    accepted = _accepted(state, sid, doc, readings, f"{open_point}:accepted" if open_point else "")
    if open_point:
        return (*accepted, replace(refused, reading=f"{open_point}:refused"))
    if inverted_intervals(doc):  # accepted or refused as the table's A56 rows allow
        from memconform.suites.amps.table import INVERTED_READING, fits

        return (*(accepted if fits("A56", INVERTED_READING, True, readings.option) else ()),
                *((replace(refused, reading="A56:refused"),) if fits("A56", INVERTED_READING, False, readings.option) else ()))
    return accepted


def _accepted(state: State, sid: Any, doc: Any, readings: Readings, reading: str,
              skip: frozenset[int] = frozenset()) -> tuple[Answer, ...]:
    if not isinstance(sid, str) or not amps.detect(doc):
        return ()  # nothing a subject could be stored under: the only answer left is a refusal
    held = state.get(sid)
    out: list[Answer] = []
    for semantics in readings.semantics():
        after = {**state, sid: _imported(held, doc, semantics, skip)}
        label = ", ".join(r for r in (reading, f"A12:{semantics}" if held is not None else "") if r)
        if all(after != o.state for o in out):
            out.append(Answer(True, after, label))
    return tuple(out)


# ---- deletions ---------------------------------------------------------------------------------

def delete_answers(state: State, subject_id: str, artifact_id: str) -> tuple[Answer, ...]:
    """Deleting an artifact (errata A5): it is gone, no atom cites it any more; a sourced atom left without
    a source is deleted or re-flagged unsourced, a stated one kept (citing nothing) or dropped."""
    held = state.get(subject_id, Subject())
    atoms: dict[str, Mapping[str, Any]] = {}
    unsourced, droppable = set(held.unsourced), set(held.droppable)
    for atom_id, atom in held.atoms.items():
        refs = amps.artifact_ids_of(dict(atom))
        if artifact_id not in refs:
            atoms[atom_id] = atom
            continue
        kept = [r for r in refs if r != artifact_id]
        if not kept and amps.provenance(dict(atom)).get("derivation") in SOURCED:
            unsourced.add(atom_id)
            continue
        if not kept:
            droppable.add(atom_id)
        atoms[atom_id] = {**atom, "provenance": {**amps.provenance(dict(atom)), "artifact_ids": kept}}
    arts = {k: v for k, v in held.artifacts.items() if k != artifact_id}
    after = replace(held, atoms=atoms, artifacts=arts, unsourced=frozenset(unsourced), droppable=frozenset(droppable))
    return (Answer(True, {**state, subject_id: after}, "A5"),)


# ---- exports -----------------------------------------------------------------------------------

def export_differs(doc: Any, subject_id: str, held: Subject, readings: Readings = DEFAULT) -> str | None:
    """What in the subject's export the state does not explain (None: nothing): the user's subject_id,
    every atom as imported (text, sensitivity, sources), every artifact (private stays private), no atom or
    artifact it should not hold; an atom left unsourced by a deletion deleted or flagged (A5)."""
    if not isinstance(doc, dict):
        return f"the export is {type(doc).__name__}, not an object"
    subject = doc.get("subject")
    if not isinstance(subject, dict) or subject.get("subject_id") != subject_id:
        return f"the export's subject_id is {subject.get('subject_id') if isinstance(subject, dict) else None!r}, not {subject_id!r}"
    atoms = {a.get("atom_id"): a for _, a in amps.atoms(doc)}
    arts = {a.get("artifact_id"): a for _, a in amps.artifacts(doc)}
    maybe = held.unsourced | held.droppable
    extra = set(atoms) - set(held.atoms) - maybe
    missing = set(held.atoms) - set(atoms) - held.droppable - withheld_atoms(atoms, held, readings)
    if extra or missing:
        return f"the export holds atoms {sorted(map(str, extra))} it should not and lacks {sorted(map(str, missing))}"
    for atom_id, atom in atoms.items():
        problem = _atom_differs(atom_id, atom, held, readings)
        if problem:
            return problem
    from memconform.suites.amps.table import PRIVATE_READING, fits

    # a private artifact may be withheld from an export (errata A9, the table's reading): only others must be there
    lacking = {i for i, art in held.artifacts.items() if i not in arts
               and not (art.get("private") is True and fits("A9", PRIVATE_READING, None, readings.option))}
    if set(arts) - set(held.artifacts) or lacking:
        return (f"the export holds artifacts {sorted(map(str, set(arts) - set(held.artifacts)))} it should "
                f"not and lacks {sorted(map(str, lacking))}")
    for artifact_id, art in held.artifacts.items():
        if art.get("private") is True and artifact_id in arts \
                and not fits("A9", PRIVATE_READING, arts[artifact_id].get("private", "<absent>"), readings.option):
            return f"artifact {artifact_id} lost private: true"
    return None


def withheld_atoms(exported: Mapping[Any, Any], held: Subject, readings: Readings = DEFAULT) -> set[Any]:
    """The held atoms an export may leave out by their label (errata A9, the table's rows): each label's atoms
    (those a deletion may have dropped aside) are judged together, so every one of a label other than public
    left out is a filter on the tag, while one left out beside another of its label that came back is lost."""
    from memconform.suites.amps.table import fits, labelled

    by_label: dict[Any, list[Any]] = {}
    for atom_id, atom in held.atoms.items():
        if atom_id not in held.droppable:
            by_label.setdefault(atom.get("sensitivity"), []).append(atom_id)
    out: set[Any] = set()
    for label, ids in by_label.items():
        answer = tuple(None if i not in exported else exported[i].get("sensitivity", "<absent>") for i in ids)
        if isinstance(label, str) and fits("A9", labelled(label), answer, readings.option) and None in answer:
            out |= set(ids)
    return out


def _atom_differs(atom_id: Any, atom: dict[str, Any], held: Subject, readings: Readings) -> str | None:
    if atom_id in held.unsourced and atom_id not in held.atoms:
        from memconform.suites.amps.table import UNSOURCED_READING, fits

        if fits("A5", UNSOURCED_READING, atom, readings.option):  # kept flagged (absent is the other reading: not here)
            return None
        if readings.unsourced_after_delete == "delete":
            return f"atom {atom_id} lost its last source but was kept (unsourced_after_delete=delete)"
        return f"atom {atom_id} lost its last source but is neither deleted nor flagged unsourced"
    sent = held.atoms[atom_id]
    for key in ("text", "sensitivity"):
        if atom.get(key) != sent.get(key):
            return f"atom {atom_id} has {key} {atom.get(key)!r}, not {sent.get(key)!r}"
    # as a set: an id named twice (open, A57) may come back once
    want = sorted(set(map(str, amps.artifact_ids_of(dict(sent)))))
    if sorted(set(map(str, amps.artifact_ids_of(atom)))) != want:
        return f"atom {atom_id} cites {amps.artifact_ids_of(atom)}, not {want}"
    return None


def fitting(outcomes: tuple[Answer, ...], accepted: bool) -> tuple[Answer, ...]:
    """The outcomes a target's reply (accepted or refused) fits."""
    return tuple(o for o in outcomes if o.accepted == accepted)


def held_by_every(outcomes: tuple[Answer, ...], subject_id: str, atom_id: str) -> bool:
    """Does every outcome hold the atom for the subject (so an answer without it lost it)?"""
    return bool(outcomes) and all(atom_id in o.state.get(subject_id, Subject()).atoms for o in outcomes)


def held_by_none(outcomes: tuple[Answer, ...], subject_id: str, atom_id: str) -> bool:
    """Does no outcome hold the atom for the subject (so an answer with it stored what it should not)?"""
    return not any(atom_id in o.state.get(subject_id, Subject()).atoms for o in outcomes)
