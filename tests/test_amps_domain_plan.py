"""AMPS's domain sweeps planned by harness/kit/domain_plan.py: under ci the allowed classes share an export,
the forbidden ones go in turn into one subject read back once, the open ones in turn into one subject; the
same classes are judged with the same outcome as one class an export (default), in fewer calls; and a row a
target answers wrongly is split until each failure names its class, as the class alone would have."""

from __future__ import annotations

import copy
import functools
from typing import Any

import domain_plan_kit
import pytest
from domain_plan_kit import judged, open_answers
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.amps.reference import ReferenceAmpsStore

SWEEPS = ["amps.imports_every_schema_class", "amps.imports_every_envelope_and_id_class"]


def atoms_of(doc: Any) -> list[dict[str, Any]]:
    atoms = doc.get("atoms") if isinstance(doc, dict) else None
    return [a for a in atoms if isinstance(a, dict)] if isinstance(atoms, list) else []


class WrongOnSixClasses(ReferenceAmpsStore):
    """Right on every class but six, each in the middle of a ci row: it refuses two allowed values (an
    atom of kind 'belief', a source_provider of combining marks), imports two forbidden ones (a
    confidence written as a string, export_version 9.9.9), and before refusing an export with an atom of
    an unlisted sensitivity or an empty derivation it empties the subject named (so only reading the
    subject back shows it)."""

    def problems(self, doc: Any) -> list[str]:
        found = super().problems(doc)
        found = [p for p in found if not (p.startswith("$.atoms[") and ".confidence:" in p and "'1'" in p)]
        if isinstance(doc, dict) and doc.get("export_version") == "9.9.9":
            found = [p for p in found if not p.startswith("$.export_version:")]
        if any(a.get("kind") == "belief" for a in atoms_of(doc)):
            found.append("belief: refused")
        if isinstance(doc, dict) and doc.get("source_provider") == "e\u0301 a\u0308 n\u0303":
            found.append("source_provider: combining marks refused")
        return found

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        emptying = any(a.get("sensitivity") == "not-a-listed-value"
                       or (a.get("provenance") or {}).get("derivation") == "" for a in atoms_of(doc))
        if emptying and isinstance(doc.get("subject"), dict):
            sid = doc["subject"].get("subject_id")
            with self.db:
                self.db.execute("DELETE FROM atoms WHERE subject_id = ?", (sid,))
        return super().import_export(doc, **params)


sweep = functools.partial(domain_plan_kit.sweep, "amps")  # (check, profile, target=None)


def test_ci_judges_the_same_classes_as_default_in_fewer_calls() -> None:
    domain_plan_kit.ci_judges_as_default("amps", SWEEPS[0], fewer_than=0.5, answers=True)


def test_the_envelope_sweep_judges_the_same_classes_as_default_in_fewer_calls() -> None:
    """As the scalar sweep; under ci it also asks the run's A12 probe (its allowed rows go in turn into one subject
    only where a second import merges), so A12 is the one reading default does not record."""
    domain_plan_kit.ci_judges_as_default("amps", SWEEPS[1], fewer_than=0.5)
    ci, _ = sweep(SWEEPS[1], "ci")
    default, _ = sweep(SWEEPS[1], "default")
    ci_seen, default_seen = open_answers(ci), open_answers(default)
    assert ci_seen.pop("A12") == ["merge"] and "A12" not in default_seen
    assert ci_seen == default_seen and ci_seen["A57"]


class ReplacesOnSecondImport(ReferenceAmpsStore):
    """A second import for a subject replaces what it held (A12 replace): right on every class."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        subject = doc.get("subject") if isinstance(doc, dict) else None
        if isinstance(subject, dict) and isinstance(subject.get("subject_id"), str) and not self.problems(doc):
            self.remove_subjects([subject["subject_id"]])
        return super().import_export(doc, **params)


class MergesButLosesAnAtomWhenFull(ReferenceAmpsStore):
    """Merges, but drops an export's last atom when the subject already holds ten or more: only rows sent in
    turn into one subject meet that (every class alone, or a row on a subject of its own, starts empty)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        held = 0
        subject = doc.get("subject") if isinstance(doc, dict) else None
        if isinstance(subject, dict):
            held = len(self._rows("atoms", str(subject.get("subject_id"))))
        if held >= 10 and isinstance(doc, dict) and not self.problems(doc):
            doc = copy.deepcopy(doc)
            doc["atoms"] = doc["atoms"][:-1]
        return super().import_export(doc, **params)


@pytest.mark.parametrize("store, in_turn", [(ReferenceAmpsStore, True), (ReplacesOnSecondImport, False)])
def test_allowed_envelope_rows_go_in_turn_into_one_subject_only_under_merge(store: type, in_turn: bool) -> None:
    """Under merge the allowed rows are imported in turn into one subject and read back once; under replace
    (a read after them all would show the last row only) each row keeps a subject of its own. Both pass with
    the classes default judges."""
    ci, ci_calls = sweep(SWEEPS[1], "ci", f"python:{__name__}:{store.__name__}")
    default, _ = sweep(SWEEPS[1], "default", f"python:{__name__}:{store.__name__}")
    assert [r.outcome.value for r in ci.results] == [r.outcome.value for r in default.results] == ["passed"]
    assert judged(ci) == judged(default)
    subjects = [line for r in ci.results for line in r.transcript if line.startswith("export subject_id=") and "-subject-env-rows-" in line]
    assert len(subjects) == (1 if in_turn else 0)


def test_a_failure_only_rows_in_turn_meet_is_not_reported() -> None:
    """A target that loses an atom only when the subject already holds some fails the rows sent in turn; each row
    is then judged on a subject of its own, as default judges it, and passes: no failure is one a row alone
    would not make."""
    target = f"python:{__name__}:MergesButLosesAnAtomWhenFull"
    ci, ci_calls = sweep(SWEEPS[1], "ci", target)
    default, _ = sweep(SWEEPS[1], "default", target)
    reference, reference_calls = sweep(SWEEPS[1], "ci")
    assert [r.outcome.value for r in ci.results] == [r.outcome.value for r in default.results] == ["passed"]
    assert ci_calls > reference_calls  # the rows in turn failed, then each was judged alone
    assert sorted(f.title for r in ci.results for f in r.failures) == sorted(f.title for r in default.results for f in r.failures)
    assert judged(ci) == judged(default)


@pytest.mark.parametrize("check, classes", [
    ("amps.imports_every_schema_class", ["export.atoms[].kind:is_belief", "export.atoms[].confidence:as_string",
                                         "export.atoms[].sensitivity:unknown"]),
    ("amps.imports_every_envelope_and_id_class", ["export.source_provider:combining", "export.export_version:other",
                                                  "export.atoms[].provenance.derivation:empty"]),
])
def test_a_row_answered_wrongly_is_split_until_each_failure_names_its_class(check: str, classes: list[str]) -> None:
    target = f"python:{__name__}:WrongOnSixClasses"
    ci, alone, titles = domain_plan_kit.packed_as_alone("amps", check, target)
    for key in classes:  # each wrong class named by a failure of its own
        assert [t for t in titles if t.startswith(key + " ")], (key, titles)
    assert len(titles) == len(classes)
    assert not [t for t in titles if "in one export" in t]  # never a whole row's
    assert judged(ci) == judged(alone)


def test_the_planted_store_is_right_on_the_classes_it_does_not_break() -> None:
    """The positive control of the planted store: on the checks that meet none of its six classes it
    passes, so the failures above are the six classes' and not the store's."""
    outcome = execute_run(["amps"], f"python:{__name__}:WrongOnSixClasses", Profile.named("ci"), None,
                          check_ids=["amps.accepts_valid_export", "amps.imports_optional_fields_pairwise"])
    assert [r.outcome.value for r in outcome.results] == ["passed", "passed"]



class WrongOnTwoPairsClasses(ReferenceAmpsStore):
    """Refuses an atom with an ascii extractor that is valid for ever (valid_to null; allowed) and stores an
    astral extractor as '?' (exported back otherwise than written): two rows in the middle of ci's
    covering array, neither an atom that expires before it is valid (either way, A56); right on the others."""

    def problems(self, doc: Any) -> list[str]:
        found = super().problems(doc)
        return found + ["ascii extractor refused" for a in atoms_of(doc) if "valid_to" in a and a["valid_to"] is None
                        and (a.get("provenance") or {}).get("extractor") == "plain ascii text"]

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = copy.deepcopy(doc)  # the check's own objects stay as sent
        for atom in atoms_of(doc):
            prov = atom.get("provenance")
            if isinstance(prov, dict) and "\U0001f680" in str(prov.get("extractor")):
                prov["extractor"] = "?"
        return super().import_export(doc, **params)


def test_pairwise_rows_share_an_export_and_a_wrong_row_is_named_alone() -> None:
    check, target = "amps.imports_optional_fields_pairwise", f"python:{__name__}:WrongOnTwoPairsClasses"
    ci, ci_calls = sweep(check, "ci", target)
    [result] = ci.results
    titles = sorted(f.title for f in result.failures)
    assert len(titles) == 2, titles
    assert [t for t in titles if "provenance.extractor:ascii" in t and "valid_to:null" in t
            and t.endswith("refused, although every value is allowed")], titles
    assert [t for t in titles if "provenance.extractor:astral" in t and t.endswith("not exported back as written")], titles
    reference, reference_calls = sweep(check, "ci")
    assert [r.outcome.value for r in reference.results] == ["passed"]  # the positive control, in one export
    assert reference_calls < ci_calls  # split only where a row is wrong


def test_malformed_exports_go_in_turn_and_a_wrong_answer_is_named_by_its_export() -> None:
    """amps.rejects_malformed_export under ci: the malformed exports in turn to one subject read back once;
    the planted store imports two of them (export_version 9.9.9, confidence as a string) and empties the
    subject for a third (an unlisted sensitivity), each in the middle of the row, and each is named as
    alone. Alone (default) every later export also meets the emptied subject; under ci only the one that
    emptied it is named, as the others are judged on a subject of their own."""
    check, target = "amps.rejects_malformed_export", f"python:{__name__}:WrongOnSixClasses"
    ci, _ = sweep(check, "ci", target)
    alone, _ = sweep(check, "default", target)
    [packed], [single] = ci.results, alone.results
    assert packed.outcome.value == single.outcome.value == "failed"
    titles = sorted(f.title for f in packed.failures)
    assert titles == sorted([
        "an export with export_version (export.export_version:other) was accepted",
        "an export with confidence as a string (export.atoms[].confidence:as_string) was accepted",
        "importing an export with a sensitivity outside the enum (export.atoms[].sensitivity:unknown) lost the subject's "
        "earlier atom"]), titles
    assert set(titles) <= {f.title for f in single.failures}
    reference, reference_calls = sweep(check, "ci")
    default_reference, default_calls = sweep(check, "default")
    assert [r.outcome.value for r in reference.results] == [r.outcome.value for r in default_reference.results] == ["passed"]
    assert judged(reference) == judged(default_reference) > 0 and reference_calls < default_calls


def test_batch_classes_share_a_subject_under_ci_and_a_failure_stays_its_classs() -> None:
    """amps.import_batch_middle_item under ci: the seven classes in turn to one subject holding the earlier
    atom; the planted store empties the subject for the fifth (an unlisted sensitivity), which is named, and
    the two after it, on a subject of their own again, are not: the same failures as a subject a class."""
    check, target = "amps.import_batch_middle_item", f"python:{__name__}:WrongOnSixClasses"
    ci, ci_calls = sweep(check, "ci", target)
    alone, alone_calls = sweep(check, "default", target)
    titles = sorted(f.title for r in ci.results for f in r.failures)
    assert titles and titles == sorted(f.title for r in alone.results for f in r.failures)
    assert all("export.atoms[].sensitivity:unknown" in t for t in titles), titles
    assert ci_calls < alone_calls


class RefusesTwoOpenValues(ReferenceAmpsStore):
    """Refuses two values the spec is silent on (A57) that the published schema accepts and the reference
    takes, each in the middle of ci's packed export of such values: an empty provenance extractor (11th of
    16 in the scalar sweep) and an empty atom_id (3rd of 5 in the envelope sweep); right on the others."""

    def problems(self, doc: Any) -> list[str]:
        found = super().problems(doc)
        for atom in atoms_of(doc):
            if (atom.get("provenance") or {}).get("extractor") == "":
                found.append("an empty extractor refused")
            if atom.get("atom_id") == "":
                found.append("an empty atom_id refused")
        return found


@pytest.mark.parametrize("check, refused", [
    ("amps.imports_every_schema_class", "export.atoms[].provenance.extractor:empty"),
    ("amps.imports_every_envelope_and_id_class", "export.atoms[].atom_id:empty"),
])
def test_open_values_share_an_export_and_a_refusal_mid_pack_is_recorded_as_its_values_alone(check: str, refused: str) -> None:
    """Under ci the open values the schema accepts go in one export; the planted refusal in the middle of it is
    split down to that value alone: it is recorded refused (A57) and every other value of the pack accepted,
    exactly as one export a value (default) records them, in fewer calls. The reference (positive control)
    accepts the pack whole, in fewer calls still."""
    target = f"python:{__name__}:RefusesTwoOpenValues"
    ci, ci_calls = sweep(check, "ci", target)
    alone, alone_calls = sweep(check, "default", target)
    assert [r.outcome.value for r in ci.results] == [r.outcome.value for r in alone.results] == ["passed"]
    seen = open_answers(ci)["A57"]
    assert seen == open_answers(alone)["A57"]
    assert f"{refused} refused" in seen
    packed = [key for key in seen if key.endswith(":empty accepted") or key.endswith(":non_utc accepted")]
    assert len(packed) >= 4, seen  # the rest of the pack, each recorded accepted
    assert ci_calls < alone_calls
    reference, reference_calls = sweep(check, "ci")
    assert f"{refused} accepted" in open_answers(reference)["A57"]
    assert reference_calls < ci_calls  # the pack split only where the target refused it
