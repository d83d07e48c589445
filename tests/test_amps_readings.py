"""AMPS: the other plausible readings pass, a target that refuses everything passes nothing, and two runs on
one instance already holding unrelated data give the same verdicts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.kit.hostile import parse_or_reject
from memconform.run.session import execute_run
from memconform.suites.amps import format as amps
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


class OtherReadings(ReferenceAmpsStore):
    """A faithful store taking the readings the reference does not: an import replaces the subject's snapshot
    (A12), an atom left without a source is kept and re-flagged `x-unsourced` (A5), and its exports write
    date-times the way ajv-formats also accepts (a space separator, a +00:00 offset: A13)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if not self.problems(doc):
            with self.db:
                for table in ("atoms", "artifacts"):
                    self.db.execute(f"DELETE FROM {table} WHERE subject_id = ?", (doc["subject"]["subject_id"],))
        return super().import_export(doc, **params)

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid, aid = self._subject_id(body), body.get("artifact_id")
        with self.db:
            self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?", (sid, aid))
            for atom in self._rows("atoms", sid):
                refs = amps.artifact_ids_of(atom)
                if aid in refs:
                    atom["provenance"]["artifact_ids"] = [r for r in refs if r != aid]
                    if not atom["provenance"]["artifact_ids"]:
                        atom["x-unsourced"] = True
                    self.db.execute("UPDATE atoms SET doc = ? WHERE subject_id = ? AND atom_id = ?",
                                    (json.dumps(atom, ensure_ascii=False), sid, atom["atom_id"]))
        return {"deleted": True}

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["exported_at"] = doc["exported_at"].replace("T", " ").replace("Z", "+00:00")
        return doc


class RefusesEverything:
    """Answers every operation with a refusal: no negative check may pass against it."""

    def __getattr__(self, op: str) -> Any:
        if op.startswith("_") or op == "close":
            raise AttributeError(op)

        def refuse(body: Any = None, **params: Any) -> Any:
            raise Rejected({"error": "refused"}, "refused")
        return refuse


class Shared(ReferenceAmpsStore):
    """One instance for two runs (closing it is the test's business)."""

    def close(self) -> None:
        pass


SHARED = Shared()


def _outcomes(target: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    outcome = execute_run(["amps"], target, Profile.named("ci"), report_dir=None)
    return {r.check_id: (r.outcome.value, tuple(sorted(f.title for f in r.failures))) for r in outcome.results}


def test_other_readings_pass_with_no_failure_and_no_warning() -> None:
    outcome = execute_run(["amps"], "python:test_amps_readings:OtherReadings", Profile.named("ci"), report_dir=None)
    bad = {r.check_id: (r.outcome.value, r.reason, [f.title for f in r.failures]) for r in outcome.results
           if r.outcome is not Outcome.PASSED and not r.not_applicable}
    assert bad == {}
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    assert {("A12", "replace"), ("A5", "re-flagged unsourced")} <= seen


def test_refusing_everything_passes_no_check() -> None:
    outcome = execute_run(["amps"], "python:test_amps_readings:RefusesEverything", Profile.named("ci"), report_dir=None)
    assert sorted(r.check_id for r in outcome.results if r.outcome is Outcome.PASSED) == []
    for name in ("amps.rejects_malformed_export", "amps.rejects_unsourced_inferred"):
        result = next(r for r in outcome.results if r.check_id == name)
        assert result.outcome is Outcome.ERRORED and "positive control refused" in result.reason
    assert outcome.exit_code != 0


def test_two_runs_on_one_preloaded_instance_agree() -> None:
    unrelated = json.loads(json.dumps(amps.schema()["$id"]))  # any string: the subject of someone else
    doc = {"export_version": "0.1.0", "exported_at": "2026-07-13T14:22:00Z",
           "subject": {"subject_id": unrelated},
           "atoms": [{"atom_id": f"atom_{i}", "kind": "fact", "text": f"unrelated {i}",
                      "created_at": "2026-01-01T00:00:00Z", "provenance": {"derivation": "stated"}} for i in range(5)],
           "artifacts": []}
    SHARED.import_export(doc)
    first = _outcomes("python:test_amps_readings:SHARED")
    second = _outcomes("python:test_amps_readings:SHARED")
    assert first == second
    assert {k: v for k, v in first.items() if v[0] != "passed" and k != "amps.atom_labels_required"} == {}
    subjects = [s for (s,) in SHARED.db.execute("SELECT DISTINCT subject_id FROM atoms")]
    assert subjects == [unrelated]  # the runs removed what they wrote


class ProducerOnly(ReferenceAmpsStore):
    """Exports the subjects it holds; offers no import."""

    def __init__(self) -> None:
        super().__init__()
        art = {"artifact_id": "art-1", "kind": "chat", "captured_at": "2026-01-01T00:00:00Z", "atom_ids": ["atom-1"]}
        atom = {"atom_id": "atom-1", "kind": "fact", "text": "Likes tea.", "created_at": "2026-01-01T00:00:00Z",
                "sensitivity": "public", "valid_from": "2026-01-01T00:00:00Z",
                "provenance": {"derivation": "inferred", "artifact_ids": ["art-1"], "extractor": "human"}}
        super().import_export({"export_version": "0.1.0", "exported_at": "2026-01-01T00:00:00Z",
                               "subject": {"subject_id": "their-user"}, "atoms": [atom], "artifacts": [art]})

    import_export = None  # type: ignore[assignment]


def test_a_producer_that_cannot_import_is_judged_on_the_subject_the_user_names() -> None:
    profile = Profile.named("ci", options={"amps.export_subject_id": "their-user"})
    outcome = execute_run(["amps"], "python:test_amps_readings:ProducerOnly", profile, report_dir=None)
    by_id = {r.check_id: r for r in outcome.results}
    assert by_id["amps.schema_valid"].outcome is Outcome.PASSED
    assert by_id["amps.inferred_has_sources"].outcome is Outcome.PASSED
    assert by_id["amps.observed_has_sources"].outcome is Outcome.SKIPPED  # no observed atom: inconclusive
    assert by_id["amps.rejects_malformed_export"].not_applicable


def test_every_check_sentence_is_a_verbatim_quote_of_the_spec() -> None:
    from pathlib import Path

    from memconform.core.registry import REGISTRY

    specs = Path(__file__).resolve().parents[1] / "fixtures" / "specs"
    source = json.loads((Path(__file__).resolve().parents[1] / "suites" / "amps" / "requirements.json").read_text())["source"]
    text = " ".join((specs / source).read_text("utf-8").split())
    assert [c.id for c in REGISTRY.for_suite("amps") if " ".join(c.sentence.split()) not in text] == []


class EmptyProducer(ReferenceAmpsStore):
    """Exports an empty subject for any id and imports nothing."""

    import_export = None  # type: ignore[assignment]


def test_an_empty_export_only_producer_is_not_assessed() -> None:
    profile = Profile.named("ci", options={"amps.export_subject_id": "nobody"})
    outcome = execute_run(["amps"], "python:test_amps_readings:EmptyProducer", profile, report_dir=None)
    levels = {v.key: v.status for v in outcome.levels["amps"]}
    assert levels["producer"].startswith("not assessed")
    assert outcome.exit_code == 1


# ---- A5 and A9: each reading the answers show, and answers fitting none -----------------------------

class KeepsUnflagged(ReferenceAmpsStore):
    """A5, fitting no reading: the atom whose only source was deleted is kept, citing nothing, with no flag."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid, aid = self._subject_id(body), body.get("artifact_id")
        with self.db:
            self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?", (sid, aid))
            for atom in self._rows("atoms", sid):
                if aid in amps.artifact_ids_of(atom):
                    atom["provenance"]["artifact_ids"] = [r for r in amps.artifact_ids_of(atom) if r != aid]
                    self.db.execute("UPDATE atoms SET doc = ? WHERE subject_id = ? AND atom_id = ?",
                                    (json.dumps(atom, ensure_ascii=False), sid, atom["atom_id"]))
        return {"deleted": True}


class WithholdsRegulated(ReferenceAmpsStore):
    """A9: medical atoms and private artifacts are left out of every export (users filter before sharing)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["atoms"] = [a for a in doc["atoms"] if a.get("sensitivity") != "medical"]
        doc["artifacts"] = [a for a in doc["artifacts"] if a.get("private") is not True]
        return doc


class LosesOneOfALabel(ReferenceAmpsStore):
    """A9, fitting no reading: the first atom of LABEL in every export is left out, the others of its label kept
    (a loss, not a filter on the tag)."""

    label = "medical"

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        first = next((i for i, a in enumerate(doc["atoms"]) if a.get("sensitivity") == self.label), None)
        if first is not None:
            del doc["atoms"][first]
        return doc


class LosesOnePublic(LosesOneOfALabel):
    label = "public"


class RelabelsAndUnflags(ReferenceAmpsStore):
    """A9, fitting no reading: labels re-derived as public and private flags dropped on export."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if "sensitivity" in atom:
                atom["sensitivity"] = "public"
        for art in doc["artifacts"]:
            art.pop("private", None)
        return doc


def _one(check: str, target: str, options: dict[str, str] | None = None) -> tuple[Any, set[tuple[str, str]]]:
    profile = Profile.named("ci", options={f"amps.{k}": v for k, v in (options or {}).items()})
    outcome = execute_run(["amps"], f"python:test_amps_readings:{target}" if ":" not in target else target, profile,
                          report_dir=None, check_ids=[check])
    (result,) = outcome.results
    return result, {(r["point"], s) for r in outcome.readings for s in r["seen"]}


A_CASES = [
    # (check, target, options, the readings it shows, or None: fits no accepted reading and fails)
    ("delete_cascades", "reference:amps", {}, {("A5", "deleted")}),
    ("delete_cascades", "OtherReadings", {}, {("A5", "re-flagged unsourced")}),
    ("delete_cascades", "KeepsUnflagged", {}, None),
    ("delete_cascades", "OtherReadings", {"unsourced_after_delete": "delete"}, None),
    ("sensitivity_travels", "reference:amps", {}, {("A9", "atoms kept with their label")}),
    ("sensitivity_travels", "WithholdsRegulated", {}, {("A9", "atoms kept with their label"),
                                                       ("A9", "medical atoms withheld from an export")}),
    ("sensitivity_travels", "WithholdsRegulated", {"withheld_atoms": "none"}, None),
    ("sensitivity_travels", "LosesOneOfALabel", {}, None),
    ("sensitivity_travels", "LosesOnePublic", {}, None),
    ("sensitivity_travels", "RelabelsAndUnflags", {}, None),
    ("private_stays_private", "reference:amps", {}, {("A9", "private artifacts kept with private: true")}),
    ("private_stays_private", "RelabelsAndUnflags", {}, None),
]


@pytest.mark.parametrize(("check", "target", "options", "readings"), A_CASES,
                         ids=[f"{c}-{t.rsplit(':', 1)[-1]}-{'pinned' if o else 'default'}" for c, t, o, _ in A_CASES])
def test_a_reading_is_recorded_only_from_the_answer(check: str, target: str, options: dict[str, str],
                                                    readings: set[tuple[str, str]] | None) -> None:
    result, seen = _one(check, target, options)
    point = "A5" if check == "delete_cascades" else "A9"
    if readings is None:
        assert result.outcome is Outcome.FAILED, result.reason
        assert any(point in str(f.expected) for f in result.failures), [f.to_json() for f in result.failures]
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert {s for s in seen if s[0] == point} == readings


@pytest.mark.parametrize("check", ["amps.model_sequences", "amps.imports_every_schema_class",
                                   "amps.imports_optional_fields_pairwise"])
def test_the_model_accepts_what_sensitivity_travels_records_and_blames_a_loss(check: str) -> None:
    """A9, one reading for every check: the store withholding every medical atom (and private artifact) passes the
    checks that judge exports by the model, as it passes sensitivity_travels; pinned to none withheld, it fails."""
    result, _ = _one(check, "WithholdsRegulated")
    assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
    result, _ = _one(check, "WithholdsRegulated", {"withheld_atoms": "none"})
    assert result.outcome is Outcome.FAILED, result.reason


def test_a_private_artifact_withheld_is_recorded_and_none_back_is_inconclusive() -> None:
    result, seen = _one("private_stays_private", "WithholdsRegulated")
    assert result.outcome is Outcome.SKIPPED and ("A9", "private artifacts withheld from an export") in seen


# ---- every open point a check observes: each reading's answer, and one fitting none -----------------

class ZeroLengthInterval(ReferenceAmpsStore):
    """A7: its exports write one atom valid for no time at all (valid_to equal to valid_from)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"][:1]:
            atom["valid_from"] = atom["valid_to"] = "2026-07-13T14:22:00Z"
        return doc


AMPS_MUTANT = "python:memconform.suites.amps.mutants:"

# (point, check, target, options, the readings of that point it shows, or None: fits no accepted reading)
POINT_CASES = [
    ("A12", "import_batch_middle_item", "reference:amps", {}, {"merge"}),
    ("A12", "import_batch_middle_item", "OtherReadings", {}, {"replace"}),
    ("A36", "import_batch_middle_item", "reference:amps", {}, {"the whole batch refused, none of it written"}),
    ("A36", "import_batch_middle_item", AMPS_MUTANT + "ImportStopsAtInvalid", {}, None),
    ("A56", "imports_optional_fields_pairwise", "reference:amps", {}, {"an atom that expires before it is valid accepted"}),
    ("A7", "valid_to_not_before_valid_from", "ZeroLengthInterval", {}, {"zero-length interval"}),
    ("A7", "valid_to_not_before_valid_from", "ZeroLengthInterval", {"validity_order": "strictly-after"}, None),
]

# points where every answer the observation sees fits one reading by construction (accepted or refused;
# merged or replaced): what else an answer does wrong is failed by the check's other comparisons
EVERY_ANSWER_FITS = {
    "A12": "a second import either kept the first atom (merge) or not (replace); losing the second is the check's failure",
    "A56": "an atom that expires before it is valid is accepted or refused; one accepted is then read back like any other",
    "A57": "an open class is accepted or refused; one accepted is read back, one refused must leave nothing stored",
}


@pytest.mark.slow
@pytest.mark.parametrize(("point", "check", "target", "options", "readings"), POINT_CASES,
                         ids=[f"{p}-{c}-{t.rsplit(':', 1)[-1]}-{'pinned' if o else 'default'}" for p, c, t, o, _ in POINT_CASES])
def test_each_open_point_records_what_was_seen_and_none_fails(point: str, check: str, target: str, options: dict[str, str],
                                                               readings: set[str] | None) -> None:
    result, seen = _one(f"amps.{check}", target, options)
    if readings is None:
        assert result.outcome is Outcome.FAILED, result.reason
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert {s for p, s in seen if p == point} == readings


def test_open_classes_are_recorded_as_the_target_took_them() -> None:
    """A57: every open class of the table the reference was sent is recorded as accepted or refused."""
    from memconform.kit import domain

    result, seen = _one("amps.imports_every_schema_class", "reference:amps")
    assert result.outcome is Outcome.PASSED
    keys = {s.rsplit(" ", 1)[0] for p, s in seen if p == "A57"}
    assert {s.rsplit(" ", 1)[1] for p, s in seen if p == "A57"} <= {"accepted", "refused"}
    assert keys and keys <= {c.key for c in domain.load("amps").classes() if c.expect == "open"}


def test_every_observed_amps_point_has_a_readings_test() -> None:
    """A point some AMPS check observes has a case showing a reading (A5, A9 above, the rest here) and one
    answer fitting none, or says why no answer can fit none."""
    from test_emp_readings import observed_points

    points = observed_points("amps")
    assert {"A5", "A9", "A12", "A36"} <= points
    shown = {p for p, *_, readings in POINT_CASES if readings is not None} | {"A57"}
    shown |= {"A5" if c == "delete_cascades" else "A9" for c, _, _, readings in A_CASES if readings is not None}
    none = {p for p, *_, readings in POINT_CASES if readings is None} | set(EVERY_ANSWER_FITS)
    none |= {"A5" if c == "delete_cascades" else "A9" for c, _, _, readings in A_CASES if readings is None}
    assert sorted(points - shown) == [], "observed points no test shows a reading of"
    assert sorted(points - none) == [], "observed points no test feeds an answer fitting no reading"
