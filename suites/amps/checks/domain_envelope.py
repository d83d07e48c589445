"""The classes of the domain table the scalar check does not draw: the envelope (export_version,
exported_at, source_provider, subject, atoms, artifacts), the ids (subject, atom, artifact), the
provenance object and its derivation, and the link arrays (an atom's artifact_ids, an artifact's
atom_ids); then the optional atom fields pairwise in one atom (the table's combination
`atom_optional_fields`). Every answer is judged by the model (suites/amps/model.py): the reply must
be one the model accepts, and an accepted export must come back as the model's state says.

Ids are made unique to the run by a prefix, which keeps what makes the class a class (a case pair
still differs only in case, a prefix pair is still a prefix pair); the two values of a pair class
travel together (two subjects, two atoms, two artifacts), so a target that folds them together fails.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure
from memconform.kit import domain, domain_plan
from memconform.suites.amps import model, readings
from memconform.suites.amps.client import (
    export,
    import_export,
    import_semantics,
    make_artifact,
    make_atom,
    make_export,
    sourced,
)
from memconform.suites.amps.domain_fields import table
from memconform.suites.amps.domain_support import (
    OPEN_PACKED,
    judge,
    judge_class,
    open_in_turn,
    open_packed,
    plan_group,
    refused_in_turn,
    same,
)
from memconform.suites.amps.format import atoms as amps_atoms
from memconform.suites.amps.suite import SUITE
from memconform.suites.amps.table import observe

ENVELOPE = ("export.export_version", "export.exported_at", "export.source_provider", "export.subject",
            "export.atoms", "export.artifacts")
IDS = {"export.subject.subject_id": "subject", "export.atoms[].atom_id": "atom", "export.artifacts[].artifact_id": "artifact"}
LINKS = {"export.atoms[].provenance.artifact_ids": "artifact", "export.artifacts[].atom_ids": "atom"}
PROVENANCE = ("export.atoms[].provenance", "export.atoms[].provenance.derivation")
PAIRS = "atom_optional_fields"
PAIR_PLACES = {"export.atoms[].provenance.extractor": ("provenance", "extractor"),
               "export.atoms[].provenance.human_reviewed": ("provenance", "human_reviewed")}


def put(holder: dict[str, Any], name: str, value: Any) -> None:
    if value is domain.ABSENT:
        holder.pop(name, None)
    else:
        holder[name] = copy.deepcopy(value)


def label_of(vc: domain.ValueClass, values: list[Any]) -> str:
    shown = ["<absent>" if v is domain.ABSENT else repr(v)[:40] for v in values]
    return f"{vc.key} = {' and '.join(shown)}"


def unique_ids(ctx: CheckContext, values: list[Any]) -> list[Any]:
    """The drawn ids of one class made unique to the run by one shared prefix, so a pair stays a pair (an
    empty or non-string id is sent as drawn)."""
    prefix = ctx.unique("id")
    return [f"{prefix}-{v}" if isinstance(v, str) and v else v for v in values]


# ---- one export per class ----------------------------------------------------------------------

def envelope_doc(ctx: CheckContext, field_id: str, value: Any) -> dict[str, Any]:
    atom, art = sourced(ctx, "env", "observed")
    doc = make_export(ctx.unique("subject-env"), [atom], [art])
    name = field_id.removeprefix("export.")
    if name == "atoms" and value == []:
        art["atom_ids"] = []
    if name == "artifacts" and value == []:
        doc["atoms"] = [make_atom(ctx, "env-stated", "stated")]
    put(doc, name, value)
    return doc


def ids_doc(ctx: CheckContext, kind: str, values: list[Any]) -> dict[str, Any]:
    """An export carrying each drawn id (subjects: the first value; the second in a doc of its own)."""
    if kind == "subject":
        atom, art = sourced(ctx, "sid", "observed")
        doc = make_export(ctx.unique("subject"), [atom], [art])
        put(doc["subject"], "subject_id", values[0])
        return doc
    art = make_artifact(ctx, "ids", [])
    atoms = [make_atom(ctx, "ids", "observed", [art["artifact_id"]])]
    arts = [art]
    if kind == "atom":
        atoms = [make_atom(ctx, f"ids-{i}", "observed", [art["artifact_id"]]) for i in range(len(values))]
        for atom, value in zip(atoms, values, strict=True):
            put(atom, "atom_id", value)
        art["atom_ids"] = [a["atom_id"] for a in atoms if "atom_id" in a]
    else:
        arts = [make_artifact(ctx, f"ids-{i}", [atoms[0]["atom_id"]]) for i in range(len(values))]
        for art_i, value in zip(arts, values, strict=True):
            put(art_i, "artifact_id", value)
        atoms[0]["provenance"]["artifact_ids"] = [a["artifact_id"] for a in arts if "artifact_id" in a]
    return make_export(ctx.unique("subject-ids"), atoms, arts)


def links_doc(ctx: CheckContext, kind: str, value: Any) -> dict[str, Any]:
    """A stated atom's artifact_ids, or an artifact's atom_ids, as drawn; each id it names exists."""
    named = list(dict.fromkeys(v for v in value if isinstance(v, str))) if isinstance(value, list) else []
    if kind == "artifact":
        atom = make_atom(ctx, "links", "stated")
        arts = [make_artifact(ctx, "links", [atom["atom_id"]], artifact_id=a) for a in named]
        put(atom["provenance"], "artifact_ids", value)
        return make_export(ctx.unique("subject-links"), [atom], arts)
    art = make_artifact(ctx, "links", [])
    atoms = [make_atom(ctx, "links", "stated", atom_id=a) for a in named]
    put(art, "atom_ids", value)
    return make_export(ctx.unique("subject-links"), atoms, [art])


def provenance_doc(ctx: CheckContext, field_id: str, value: Any) -> dict[str, Any]:
    atom, art = sourced(ctx, "prov", "inferred")  # an extractor named, so every derivation is complete
    holder = atom if field_id.endswith("provenance") else atom["provenance"]
    put(holder, field_id.rsplit(".", 1)[1], value)
    return make_export(ctx.unique("subject-prov"), [atom], [art])


def docs_for(ctx: CheckContext, field_id: str, vc: domain.ValueClass) -> list[dict[str, Any]]:
    values = vc.values()
    if field_id in IDS:
        values = unique_ids(ctx, values)
        if IDS[field_id] == "subject":
            return [ids_doc(ctx, "subject", [v]) for v in values]
        return [ids_doc(ctx, IDS[field_id], values)]
    if field_id in LINKS:
        return [links_doc(ctx, LINKS[field_id], v) for v in values]
    if field_id in PROVENANCE:
        return [provenance_doc(ctx, field_id, v) for v in values]
    return [envelope_doc(ctx, field_id, v) for v in values]


def drawn_here() -> list[domain.Field]:
    wanted = set(ENVELOPE) | set(IDS) | set(LINKS) | set(PROVENANCE)
    return [f for f in table().fields if f.id in wanted]


@dataclass(frozen=True)
class EnvelopeItem:
    """One export carrying a class (a pair class of subject ids: one export a value)."""

    field_id: str
    vc: domain.ValueClass
    doc: dict[str, Any]
    label: str


# the classes whose export is theirs alone under every profile: the subject's own, and the record arrays'
# allowed values (an export with no atoms holds nothing of another class)
ALONE = frozenset({"export.subject", "export.subject.subject_id"})
NOT_MERGED = frozenset({"export.atoms", "export.artifacts"})


def group_of(item: EnvelopeItem) -> str | None:
    """Under ci: forbidden values in turn into one subject, open ones the published schema accepts merged into
    one export, the other open ones in turn into one subject, allowed ones merged into one export
    (harness/kit/domain_plan.py); None: alone."""
    if item.field_id in ALONE or (item.vc.expect == "valid" and item.field_id in NOT_MERGED):
        return None
    return plan_group(item.vc, item.doc)


def slot_of(item: EnvelopeItem) -> str | None:
    """What a row holds once: an envelope field's value (one an export), and one class of the link arrays
    (their drawn ids, 'abc0' and the like, are not unique to a class)."""
    if item.vc.expect == "invalid":
        return None
    if item.field_id in LINKS:
        return "links"
    return item.field_id if item.field_id in ENVELOPE else None


def merged(ctx: CheckContext, row: list[EnvelopeItem], subject: str | None = None) -> dict[str, Any]:
    """One export of a subject of its own (or `subject`) holding each item's atoms and artifacts and its
    envelope value (slot_of: at most one an envelope field)."""
    doc = make_export(subject or ctx.unique("subject-env-row"), [], [])
    for item in row:
        doc["atoms"] += item.doc["atoms"]
        doc["artifacts"] += item.doc["artifacts"]
        if item.field_id in ENVELOPE:
            name = item.field_id.removeprefix("export.")
            put(doc, name, item.doc.get(name, domain.ABSENT))
    return doc


def envelope_row(ctx: CheckContext, row: list[EnvelopeItem]) -> list[Failure] | None:
    if len(row) == 1:
        [item] = row
        failure = judge_class(ctx, item.vc, item.doc, item.label).failure
        ctx.state(domain.DomainLedger).judge([item.vc.key])
        return [] if failure is None else [failure]
    if row[0].vc.expect == "invalid":
        return refused_in_turn(ctx, row)
    if group_of(row[0]) == OPEN_PACKED:
        return open_packed(ctx, row, merged(ctx, row))
    if row[0].vc.expect == "open":
        return open_in_turn(ctx, row)
    keys = [item.vc.key for item in row]
    judged = judge(ctx, merged(ctx, row), f"{len(row)} allowed classes in one export ({', '.join(keys[:4])} ...)", "")
    ctx.state(domain.DomainLedger).judge(keys)
    return [] if judged.failure is None else [judged.failure]


def allowed_rows_in_turn(ctx: CheckContext, rows: list[list[EnvelopeItem]]) -> bool:
    """Under ci, once a second import was seen to merge (A12): the allowed rows' exports in turn into one
    subject, each accepted as the model says, and the subject read back once, holding every row's records as
    the model says (True: every class of the rows judged). Anything else (a refusal, an export the merged
    state does not explain) is False, and each row is judged on a subject of its own as before, so a failure
    is only ever one a row alone makes; under replace a read after them all would show the last row only."""
    subject = ctx.unique("subject-env-rows")
    pinned = replace(model.Readings.from_options(ctx.option), import_semantics="merge")
    state = model.EMPTY
    for row in rows:
        doc = merged(ctx, row, subject)
        accepted = model.fitting(model.import_answers(state, doc, pinned), True)
        if not accepted or not import_export(ctx, doc).ok:
            return False
        state = accepted[0].state
    if model.export_differs(export(ctx, subject), subject, state[subject], pinned):
        return False
    ctx.state(domain.DomainLedger).judge(item.vc.key for row in rows for item in row)
    return True


def in_turn_first(ctx: CheckContext, rows: list[list[EnvelopeItem]]) -> list[list[EnvelopeItem]]:
    """The rows left to judge one by one: under ci and the merge reading seen (A12), the allowed rows go in
    turn into one subject first (allowed_rows_in_turn) and are left only when that does not judge them."""
    allowed = [row for row in rows if group_of(row[0]) == "valid"]
    if not domain_plan.packs(ctx.profile.name) or len(allowed) < 2 or import_semantics(ctx) != "merge":
        return rows
    if allowed_rows_in_turn(ctx, allowed):
        return [row for row in rows if group_of(row[0]) != "valid"]
    return rows


@SUITE.check(sweep=True, level="consumer", section="Schema", keyword="MUST", sentence='"required": ["export_version", "exported_at", "subject", "atoms", "artifacts"],')
def imports_every_envelope_and_id_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of the envelope, the ids, the provenance object and the link arrays in an export of its
    own: the model says which answers are acceptable (open classes: either, the one seen recorded under
    A57), and an accepted export must come back as imported (the ids exactly as sent). Under ci the
    allowed classes share one export (as few as one an envelope value allows; once a second import was seen
    to merge, those exports go in turn into one subject read back once, each alone again if that fails), the forbidden ones go in turn into one subject read back once, the
    open ones the published schema accepts share one export (accepted: each seen accepted), the other open
    ones in turn into one subject; the subject's own classes always alone (harness/kit/domain_plan.py;
    a row not answered as expected is split until each failure names its class)."""
    control, art = sourced(ctx, "envelope-control", "observed")
    if not import_export(ctx, make_export(ctx.unique("subject-envelope"), [control], [art])).ok:
        raise ControlRefused("an export of the same shape with every field as usual was refused")
    items = [EnvelopeItem(field.id, vc, doc, label_of(vc, vc.values()))
             for field in drawn_here() for vc in field.classes for doc in docs_for(ctx, field.id, vc)]
    rows = in_turn_first(ctx, domain_plan.rows_for(items, ctx.profile.name, group=group_of, slot=slot_of))
    yield from domain_plan.judge_rows(rows, lambda row: envelope_row(ctx, row))


# ---- the optional atom fields pairwise ---------------------------------------------------------

def place_of(field_id: str) -> tuple[str, str]:
    return PAIR_PLACES.get(field_id, ("atom", field_id.removeprefix("export.atoms[].")))


def row_doc(ctx: CheckContext, row: domain.Row) -> tuple[dict[str, Any], dict[str, Any]]:
    """An export of one observed atom (citing one artifact) carrying the row's value of every field."""
    atom, art = sourced(ctx, "pairs", "observed")
    for field_id, vc in row.items():
        place, name = place_of(field_id)
        put(atom if place == "atom" else atom["provenance"], name, vc.value())
    return make_export(ctx.unique("subject-pairs"), [atom], [art]), atom


def read_back_differs(sent: dict[str, Any], stored: dict[str, Any], row: domain.Row) -> str | None:
    """The first field of the row not exported back as written (numbers as doubles), or None."""
    got_atom: dict[str, Any] = next((a for _, a in amps_atoms(stored) if a.get("atom_id") == sent["atom_id"]), {})
    for field_id in row:
        place, name = place_of(field_id)
        want = (sent if place == "atom" else sent["provenance"]).get(name, domain.ABSENT)
        got = (got_atom if place == "atom" else got_atom.get("provenance") or {}).get(name, domain.ABSENT)
        if want is not domain.ABSENT and not same(want, got):
            return f"{field_id}: {got!r} exported back for {want!r}"
    return None


def inverted_seen(ctx: CheckContext, accepted: bool) -> None:
    """An atom that expires before it is valid, accepted or refused: recorded from the table's A56 rows."""
    observe(ctx, "A56", Asked(readings.INVERTED), accepted)


@dataclass(frozen=True)
class PairsRow:
    """One row of the covering array in an export of its own: one observed atom citing one artifact."""

    row: domain.Row
    doc: dict[str, Any]
    atom: dict[str, Any]

    @property
    def label(self) -> str:
        return ", ".join(vc.key.removeprefix("export.atoms[].") for vc in self.row.values())


def pairs_row(ctx: CheckContext, rows: list[PairsRow]) -> list[Failure] | None:
    """Rows imported in one export (one row: its own export, as every profile but ci sends it): the model's
    answer, and every field of every row exported back as written. A packed export refused, or answered
    otherwise than the model says, is judged again in halves (None): an atom that expires before it is
    valid may be refused (A56), and only alone does a refusal say which."""
    readings_now = model.Readings.from_options(ctx.option)
    doc = rows[0].doc if len(rows) == 1 else make_export(
        ctx.unique("subject-pairs-row"), [r.doc["atoms"][0] for r in rows], [r.doc["artifacts"][0] for r in rows])
    answers = model.import_answers(model.EMPTY, doc, readings_now)
    reply = import_export(ctx, doc)
    if len(rows) > 1 and not (reply.ok and model.fitting(answers, True)):
        return None
    if not model.fitting(answers, reply.ok):
        return [Failure(f"{rows[0].label}: refused, although every value is allowed", f"{reply.status} {reply.raw[:160]!r}", "imported")]
    for r in rows:  # each row's own answers: an atom that expires before it is valid is either way (A56)
        if len(model.import_answers(model.EMPTY, r.doc, readings_now)) > 1:
            inverted_seen(ctx, reply.ok)
    found = []
    if reply.ok:
        sid, accepted = doc["subject"]["subject_id"], model.fitting(answers, True)
        stored = export(ctx, sid)
        held = {a.get("atom_id") for _, a in amps_atoms(stored)}
        for r in rows:
            if r.atom["atom_id"] in held or not accepted:
                problem = read_back_differs(r.atom, stored, r.row)
            else:  # left out: the model says whether it may be (errata A9, withheld by its label) or was lost
                problem = model.export_differs(stored, sid, accepted[0].state[sid], readings_now)
            if problem:
                found.append(Failure(f"{r.label}: not exported back as written", problem, "every value as imported"))
    for r in rows:
        ctx.state(domain.DomainLedger).judge_row(PAIRS, r.row)
    return found


@SUITE.check(level="consumer", section="Schema", keyword="MUST", sentence='"required": ["atom_id", "kind", "text", "created_at", "provenance"],')
def imports_optional_fields_pairwise(ctx: CheckContext) -> Iterator[Failure]:
    """The optional fields of one atom together, a covering array of their allowed classes (ci: each class
    once; default: every pair): the model's answer (accepted; an atom that expires before it is valid
    either way, A56) and every field exported back as written. Under ci the rows' atoms share one export
    (harness/kit/domain_plan.py; one not answered as the model says is split until each row is alone)."""
    rows = [PairsRow(row, *row_doc(ctx, row)) for row in domain.plan(table(), PAIRS, ctx.profile.name)]
    yield from domain_plan.judge_rows(domain_plan.rows_for(rows, ctx.profile.name, group=lambda _: PAIRS),
                                      lambda packed: pairs_row(ctx, packed))
