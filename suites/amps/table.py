"""AMPS's one table of readings: every open point a check observes, one row per reading (suites/amps/readings.py
says what the requests and answers are). The checks and the model ask it; tests/test_amps_one_table.py walks
every row and asks each check the row names, through that check's own judgement, for the row's example answer
(accepted, the reading recorded) and its control (refused).

`checks` names registered checks, `model` (every check that judges an export against suites/amps/model.py:
model_sequences, the domain sweeps, delete_cascades's rest) and `import_semantics` (the run's one probe of A12,
suites/amps/client.py, which every check that imports twice for a subject reads)."""

from __future__ import annotations

from typing import Any

from memconform.core.readings import Asked, Observation, Reading, ReadingTable, at
from memconform.kit import batch_failures, domain
from memconform.suites.amps import format as amps
from memconform.suites.amps import readings

STANDS_FOR = {
    "model": "every check that judges a subject's export against the model (suites/amps/model.py export_differs: "
             "model_sequences, the domain import sweeps, import_batch_middle_item's read-back, "
             "imports_optional_fields_pairwise's atom left out)",
    "import_semantics": "the run's one probe of a second import (suites/amps/client.py import_semantics), which "
                        "every check importing twice for one subject reads",
}
FLAGGED_ATOM = {"atom_id": "a-1", "kind": "fact", "text": "t", "created_at": "2026-01-01T00:00:00Z",
                "provenance": {"derivation": "observed", "artifact_ids": []}, "x-unsourced": True}
OPEN_KEYS = tuple(vc.key for field in domain.required("amps").fields for vc in field.classes
                  if vc.expect == "open")


def open_value(key: str) -> list[Reading]:
    """A57: one class the schema is silent on, accepted or refused (the domain sweeps record which)."""
    checks = ("imports_every_envelope_and_id_class", "imports_every_schema_class")
    return [Reading("A57", f"{key} {name}", meets=at(readings.OPEN_VALUE, key),
                    predicts=lambda q, accepted, want=want: accepted is want,  # type: ignore[misc]
                    checks=checks, example=(Asked(readings.OPEN_VALUE, key), want), wrong="neither")
            for name, want in (("accepted", True), ("refused", False))]


def middle(name: str, stored: tuple[bool, ...], accepted: bool, reported: bool = False) -> Reading:
    """A36: an open class in the middle of a batch (the whole of it written, or none)."""
    outcome = batch_failures.BatchResult(accepted=accepted, reported=reported, stored=stored)
    midway = batch_failures.BatchResult(accepted=True, reported=False, stored=(True, True, False, False, False))
    return Reading("A36", name, meets=at(readings.MIDDLE), predicts=readings.batch_reading(name),
                   accepted=lambda pins: name in batch_failures.accepted_readings("open", batch_failures.WHOLE),
                   checks=("import_batch_middle_item",), example=(Asked(readings.MIDDLE), outcome), wrong=midway)


TABLE = ReadingTable([
    # A5: an atom whose last source was deleted (answer: the atom as exported, None when absent)
    Reading("A5", readings.DELETED, meets=at(readings.UNSOURCED), predicts=lambda q, atom: atom is None,
            checks=("delete_cascades", "model"), example=(Asked(readings.UNSOURCED), None),
            wrong=dict(FLAGGED_ATOM, **{"x-unsourced": False})),
    Reading("A5", readings.FLAGGED, meets=at(readings.UNSOURCED), predicts=lambda q, atom: readings.flagged(atom),
            accepted=readings.flag_allowed, checks=("delete_cascades", "model"),
            example=(Asked(readings.UNSOURCED), FLAGGED_ATOM),
            wrong=dict(FLAGGED_ATOM, provenance={"derivation": "observed", "artifact_ids": ["gone"]})),
    # A9: sensitivity travels (given: the label imported; answer: the label each atom of it imported for the subject
    # has in one export, None for one left out). Withheld by label: a filter on the tag ("users can filter on it
    # before sharing") leaves out every atom of a label other than public, or none; a public atom missing, or one
    # atom of a label missing beside another of it that came back, is an atom lost. Controls: half the atoms of
    # the label missing; a public atom missing (KEPT_LABEL's second case)
    *(Reading("A9", readings.withheld_label(label), meets=at(readings.LABELLED, label),
              predicts=readings.every_one_withheld, accepted=readings.withholding_allowed,
              checks=("sensitivity_travels", "model"), example=(Asked(readings.LABELLED, label), (None, None)),
              wrong=(label, None))
      for label in readings.WITHHOLDABLE),
    Reading("A9", readings.KEPT_LABEL, meets=at(readings.LABELLED), predicts=readings.every_one_kept,
            checks=("sensitivity_travels", "model"),
            example=(Asked(readings.LABELLED, "medical"), ("medical", "medical")), wrong=("medical", "public"),
            more=((Asked(readings.LABELLED, "public"), ("public", "public"), ("public", None)),)),
    # A9: private is private (answer: the private flag exported, None when the artifact is withheld)
    Reading("A9", readings.PRIVATE_WITHHELD, meets=at(readings.PRIVATE), predicts=lambda q, got: got is None,
            checks=("private_stays_private", "model"), example=(Asked(readings.PRIVATE), None), wrong=False),
    Reading("A9", readings.PRIVATE_KEPT, meets=at(readings.PRIVATE), predicts=lambda q, got: got is True,
            checks=("private_stays_private", "model"), example=(Asked(readings.PRIVATE), True), wrong="<absent>"),
    # A12: a second import (answer: the first atom still in the subject's export; every answer fits one)
    Reading("A12", readings.MERGE, meets=at(readings.SECOND_IMPORT), predicts=lambda q, kept: kept is True,
            accepted=lambda option: option("import_semantics") != "replace", checks=("import_semantics", "model"),
            example=(Asked(readings.SECOND_IMPORT), True)),
    Reading("A12", readings.REPLACE, meets=at(readings.SECOND_IMPORT), predicts=lambda q, kept: kept is False,
            accepted=lambda option: option("import_semantics") != "merge", checks=("import_semantics", "model"),
            example=(Asked(readings.SECOND_IMPORT), False)),
    # A56: an atom that expires before it is valid (answer: the import accepted; every answer fits one)
    Reading("A56", readings.INVERTED_ACCEPTED, meets=at(readings.INVERTED), predicts=lambda q, ok: ok is True,
            checks=("imports_optional_fields_pairwise", "model"), example=(Asked(readings.INVERTED), True)),
    Reading("A56", readings.INVERTED_REFUSED, meets=at(readings.INVERTED), predicts=lambda q, ok: ok is False,
            checks=("imports_optional_fields_pairwise", "model"), example=(Asked(readings.INVERTED), False)),
    # A7: a zero-length interval, a problem only under the strict reading (answer: the problem found)
    Reading("A7", readings.ZERO_LENGTH, meets=at(readings.UNPINNED),
            predicts=lambda q, problem: "A7:strictly-after" in problem.readings, checks=("valid_to_not_before_valid_from",),
            example=(Asked(readings.UNPINNED), amps.Problem("valid_to_not_before_valid_from", "zero", "t", "after t", "$",
                                                                 ("A7:strictly-after",))),
            wrong=amps.Problem("atom_labels", "labels", None, "a label", "$", ("A1:required",))),
    # A36: an open class in the middle of an export: all of it, or none
    middle(batch_failures.ALL, (True,) * 5, True), middle(batch_failures.REFUSED, (False,) * 5, False),
    # A57: the classes the schema is silent on
    *(row for key in OPEN_KEYS for row in open_value(key)),
])


UNSOURCED_READING = Asked(readings.UNSOURCED)  # the requests the model asks about (it holds no ctx)
PRIVATE_READING = Asked(readings.PRIVATE)


def labelled(label: Any) -> Asked:
    """The request the model asks about for the atoms it holds with one label (A9)."""
    return Asked(readings.LABELLED, label)
INVERTED_READING = Asked(readings.INVERTED)


def pins(ctx: Any) -> readings.Pins:
    return ctx.option  # type: ignore[no-any-return]


def observe(ctx: Any, point: str, request: Asked, answer: Any, **how: Any) -> Observation:
    """What the target did at an open point, judged and recorded by the table's rows (core ReadingTable.judge)."""
    return TABLE.judge(ctx, point, request, answer, pins(ctx), **how)


def fits(point: str, request: Asked, answer: Any, option: readings.Pins) -> bool:
    """Does the answer fit an accepted reading of the point (the model asks with Readings.option, recording nothing)?"""
    return bool(TABLE.fitting(request, answer, option, (point,)))
