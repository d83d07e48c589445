"""One source of readings for AMPS (issue 34 item 1, issue 35 item 2): every open point a check observes is a row
of suites/amps/table.py, and every check meeting it, the model among them, asks that table.

The walk (tests/table_walk.py): every row has a request meeting the point, an answer fitting the reading and,
unless every answer fits some reading (EVERY_ANSWER_FITS), an answer no reading allows; every check the row
names is asked through its own judgement and must accept the first (recording the reading) and refuse the
second. `model` is the model's export comparison (suites/amps/model.py export_differs), which model_sequences
and the domain sweeps judge every export by: a private artifact withheld from an export (A9) was blamed there
while private_stays_private accepted it, and so was an atom of a label withheld (A9: every atom of a label other
than public left out, a filter on the tag) while sensitivity_travels recorded it; now both ask the table, which
reads a label's atoms together, so one of them lost beside another that came back fails everywhere. The
self-test breaks each row and each check both ways.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.readings import Asked, Reading
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.kit import batch_failures
from memconform.suites.amps import client, domain_support, model, readings, table
from memconform.suites.amps.checks import document, domain_envelope, privacy
from table_walk import Judge, Verdict, Walk, broken_checks, broken_tables, recorded, unless_failed, walk

EVERY_ANSWER_FITS = {"A12", "A56"}  # merge or replace, accepted or refused: no other answer exists
SUBJECT = "subject-walk"


def amps_ctx(**options: str) -> Context:
    return Context(suite=get_suite("amps"), target=NoTarget(), profile=Profile.named("ci", options={
        f"amps.{k}": v for k, v in options.items()}))


def export_of(atoms: list[dict[str, Any]], artifacts: list[dict[str, Any]]) -> dict[str, Any]:
    return client.make_export(SUBJECT, atoms, artifacts)


ATOM = {"atom_id": "a-1", "kind": "fact", "text": "t", "created_at": "2026-01-01T00:00:00Z",
        "provenance": {"derivation": "observed", "artifact_ids": ["art-1"]}}
ART = {"artifact_id": "art-1", "kind": "chat", "title": "t", "body": "b", "captured_at": "2026-01-01T00:00:00Z",
       "source": "manual", "atom_ids": ["a-1"], "private": True}


SECOND = dict(ATOM, atom_id="a-2", provenance={"derivation": "observed", "artifact_ids": ["art-2"]})
ART_2 = dict(ART, artifact_id="art-2", atom_ids=["a-2"], private=False)
INVERTED = dict(ATOM, valid_from="2026-02-01T00:00:00Z", valid_to="2026-01-01T00:00:00Z")


def by_the_model(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    """The model's answers to the situation allow this one: an import's outcome (A12: the first atom kept or
    not after a second import; A56: an inverted interval accepted or not), or the subject's export holding the
    answer (A5, A9) with no difference from the state the model holds."""
    pins = model.Readings.from_options(ctx.option)
    if request.situation == readings.SECOND_IMPORT:
        state = model.fitting(model.import_answers(model.EMPTY, export_of([ATOM], [dict(ART, private=False)]), pins), True)[0].state
        outcomes = model.fitting(model.import_answers(state, export_of([SECOND], [ART_2]), pins), True)
        return any(("a-1" in o.state[SUBJECT].atoms) is answer for o in outcomes)
    if request.situation == readings.INVERTED:
        return bool(model.fitting(model.import_answers(model.EMPTY, export_of([INVERTED], [dict(ART, private=False)]), pins),
                                  answer))
    if request.situation == readings.LABELLED:  # atoms of one label (beside a public one), as one export holds them
        return model.export_differs(*labelled_export(request.given, answer), pins) is None
    if request.situation == readings.UNSOURCED:  # the atom's only artifact was deleted
        held = model.Subject(atoms={}, artifacts={}, unsourced=frozenset({"a-1"}))
        doc = export_of([] if answer is None else [answer], [])
    else:  # a private artifact imported
        held = model.Subject(atoms={"a-1": ATOM}, artifacts={"art-1": ART})
        doc = export_of([ATOM], [] if answer is None else [dict(ART, private=answer)])
    return model.export_differs(doc, SUBJECT, held, pins) is None


def labelled_export(label: str, exported: tuple[Any, ...]) -> tuple[dict[str, Any], str, model.Subject]:
    """The subject holding one atom per entry of `exported`, each imported with `label`, and a public atom beside
    them; its export holding each as `exported` says (None: left out, "<absent>": without a label)."""
    sent = {f"a-{n}": dict(ATOM, atom_id=f"a-{n}", sensitivity=label) for n in range(len(exported))}
    public = dict(ATOM, atom_id="a-public", sensitivity="public")
    back = [{k: v for k, v in dict(sent[i], sensitivity=got).items() if v != "<absent>"}
            for i, got in zip(sent, exported, strict=True) if got is not None]
    held = model.Subject(atoms={**sent, "a-public": public}, artifacts={"art-1": dict(ART, private=False)})
    return export_of([*back, public], [dict(ART, private=False)]), SUBJECT, held


def by_the_delete_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, privacy.unsourced_verdict(ctx, answer, "a-1"))


def by_the_label_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, privacy.label_verdict(ctx, request.given, answer, "the label"))


def by_the_private_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, privacy.private_verdict(ctx, answer, "the flag"))


def by_the_semantics_probe(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    client.second_import_seen(ctx, answer)
    return recorded(ctx, row.point)


def by_the_pairwise_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    domain_envelope.inverted_seen(ctx, answer)
    return recorded(ctx, row.point)


def by_the_rule_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    document.unpinned_seen(ctx, answer)
    return recorded(ctx, row.point)


def by_the_batch_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    """import_batch_middle_item judges an open class's batch with the kit's judge (harness/kit/batch_failures.py),
    whose readings the table's A36 rows predict with."""
    return unless_failed(ctx, row.point, list(batch_failures.judge(ctx, "A36", "the batch", "open", answer, batch_failures.WHOLE)))


def by_the_domain_sweep(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    domain_support.observe_open(ctx, SimpleNamespace(key=request.given), answer)  # type: ignore[arg-type]
    return recorded(ctx, row.point)


JUDGES: dict[str, Judge] = {
    "model": by_the_model, "delete_cascades": by_the_delete_check, "sensitivity_travels": by_the_label_check,
    "private_stays_private": by_the_private_check, "import_semantics": by_the_semantics_probe,
    "imports_optional_fields_pairwise": by_the_pairwise_check, "valid_to_not_before_valid_from": by_the_rule_check,
    "import_batch_middle_item": by_the_batch_check, "imports_every_envelope_and_id_class": by_the_domain_sweep,
    "imports_every_schema_class": by_the_domain_sweep,
}
HOW = Walk(judge_of=lambda row, check: JUDGES[check], context=amps_ctx, pins=model.DEFAULT.option,
           every_answer_fits=frozenset(EVERY_ANSWER_FITS))
ROWS = list(table.TABLE)


def test_every_point_of_the_table_is_an_errata_entry_and_every_check_a_registered_one_or_a_named_helper() -> None:
    import memconform.suites.amps as amps_suite

    errata = (Path(amps_suite.__file__).parent / "errata.md").read_text()
    assert all(f"## {point}. " in errata for point in table.TABLE.points()), table.TABLE.points()
    registered = {check_id.split(".", 1)[1] for check_id in get_suite("amps").registered()}
    named = {check for row in ROWS for check in row.checks}
    assert named <= registered | set(table.STANDS_FOR), sorted(named - registered - set(table.STANDS_FOR))
    assert named <= set(JUDGES), sorted(named - set(JUDGES))


def test_every_point_a_check_observes_is_in_the_table() -> None:
    """No check keeps a prediction of its own: every point named beside an observation in suites/amps is a row
    (A36 through the kit's batch judge, whose readings the table's rows predict with)."""
    import re

    import memconform.suites.amps as amps_suite

    found: set[str] = set()
    for path in Path(amps_suite.__file__).parent.rglob("*.py"):
        if {"mutants", "reference"} & set(path.parts):
            continue
        text = path.read_text("utf-8")
        assert not re.findall(r"ctx\.observe\(", text), f"{path.name} observes a point without the table"
        found |= {point for line in text.splitlines() if re.search(r"observe\(ctx, |batch_failures\.judge\(|OPEN_POINT = ", line)
                  for point in re.findall(r'"(A\d+)"', line)}
    assert found == set(table.TABLE.points()), sorted(found ^ set(table.TABLE.points()))


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_every_check_that_can_meet_a_reading_accepts_its_answer_and_refuses_the_control(row: Reading) -> None:
    assert walk(row, table.TABLE, HOW) == []


def test_a_private_artifact_withheld_is_not_blamed_by_the_model_but_one_losing_its_flag_is() -> None:
    """The false blame fixed: model_sequences compared every artifact, so an export withholding a private one (A9,
    which private_stays_private records) failed it; one keeping the artifact without its flag still fails."""
    held = model.Subject(atoms={"a-1": ATOM}, artifacts={"art-1": ART})
    assert model.export_differs(export_of([ATOM], []), SUBJECT, held) is None
    assert "lost private" in str(model.export_differs(export_of([ATOM], [dict(ART, private=False)]), SUBJECT, held))
    public = model.Subject(atoms={"a-1": ATOM}, artifacts={"art-1": dict(ART, private=False)})
    assert "lacks ['art-1']" in str(model.export_differs(export_of([ATOM], []), SUBJECT, public))  # only private ones


WITHHELD_MEDICAL = readings.withheld_label("medical")


@pytest.mark.parametrize(("label", "exported", "reading"), [
    ("medical", (None, None), WITHHELD_MEDICAL),
    ("private", (None, None, None), readings.withheld_label("private")),
    ("medical", ("medical", "medical"), readings.KEPT_LABEL),
    ("public", ("public", "public"), readings.KEPT_LABEL),
    ("medical", ("medical", None), None),  # one of two medical atoms lost
    ("medical", (None, "medical", None), None),
    ("public", ("public", None), None),  # a public atom lost
    ("public", (None,), None),  # every public atom lost: public is no filter
    ("medical", (None, "public"), None),  # one left out, the other relabelled
    ("medical", ("<absent>", "<absent>"), None),  # labels dropped
    ("medical", ("private", "private"), None),  # relabelled (FlattensSensitivity)
])
def test_atoms_withheld_by_label_pass_everywhere_and_atoms_lost_fail_everywhere(
        label: str, exported: tuple[Any, ...], reading: str | None) -> None:
    """A9 withheld by label, the lead's reading of "users can filter on it before sharing": sensitivity_travels
    and the model (model_sequences, the domain sweeps) give one verdict for each answer, record the reading
    where one fits, and fail a public atom missing or some atoms of a label missing beside others of it."""
    ctx = amps_ctx()
    failure = privacy.label_verdict(ctx, label, exported, "the labels")
    by_model = model.export_differs(*labelled_export(label, exported))
    if reading is None:
        assert failure is not None and by_model is not None, (failure, by_model)
        assert "A9" in str(failure.expected) and recorded(ctx, "A9") == set()
    else:
        assert failure is None and by_model is None, (failure, by_model)
        assert recorded(ctx, "A9") == {reading}


def test_withheld_atoms_none_pins_every_atom_back() -> None:
    """amps.withheld_atoms=none: the medical atoms withheld are blamed by sensitivity_travels (the failure names the
    pin) and the model alike; the same export passes under the default, and kept atoms pass under both."""
    ctx = amps_ctx(withheld_atoms="none")
    failure = privacy.label_verdict(ctx, "medical", (None, None), "the labels")
    assert failure is not None and failure.readings == ("A9:none-withheld",)
    assert recorded(ctx, "A9") == {WITHHELD_MEDICAL}  # seen, though not accepted
    pinned = model.Readings.from_options(ctx.option)
    assert pinned.withheld_atoms == "none"
    assert "lacks ['a-0', 'a-1']" in str(model.export_differs(*labelled_export("medical", (None, None)), pinned))
    assert model.export_differs(*labelled_export("medical", (None, None))) is None
    assert privacy.label_verdict(ctx, "medical", ("medical", "medical"), "the labels") is None
    assert model.export_differs(*labelled_export("medical", ("medical", "medical")), pinned) is None


def test_atoms_a_deletion_may_drop_are_not_counted_in_their_label() -> None:
    """An atom whose only cited artifact was deleted (droppable) may be gone whatever its label: its absence
    neither makes a label's other atoms a partial loss nor its presence their withholding one."""
    export, sid, held = labelled_export("medical", (None, None))
    droppable = dict(ATOM, atom_id="a-dropped", sensitivity="medical")
    kept = model.Subject(atoms={**held.atoms, "a-dropped": droppable}, artifacts=held.artifacts,
                         droppable=frozenset({"a-dropped"}))
    assert model.export_differs(export, sid, kept) is None
    export["atoms"].append(droppable)
    assert model.export_differs(export, sid, kept) is None


def test_a_reading_pinned_away_is_blamed_again() -> None:
    """unsourced_after_delete=delete: a flagged atom is blamed by delete_cascades and the model alike."""
    flagged = table.TABLE.named("A5", readings.FLAGGED)
    request, atom = flagged.example  # type: ignore[misc]
    ctx = amps_ctx(unsourced_after_delete="delete")
    failure = privacy.unsourced_verdict(ctx, atom, "a-1")
    assert failure is not None and failure.readings == ("A5:delete",)
    assert not by_the_model(ctx, flagged, request, atom)
    assert by_the_model(amps_ctx(), flagged, request, atom)


# ---- the self-test: a broken row or a broken check is noticed, both ways round ----------------------------

@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_a_row_broken_either_way_is_noticed(row: Reading, monkeypatch: pytest.MonkeyPatch) -> None:
    for broken, mutated, rows in broken_tables(row, ROWS):
        monkeypatch.setattr(table, "TABLE", rows)
        assert walk(mutated, rows, HOW), f"{broken}: {row.point} {row.name!r} not noticed"


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_a_check_broken_either_way_is_noticed(row: Reading) -> None:
    for broken, judges in broken_checks(row, HOW):
        assert walk(row, table.TABLE, HOW, judges), f"{broken}: not noticed"
