"""AMPS open classes (errata A56, A57): a store taking the other answer to each open class passes the
domain checks, and the reading recorded is the answer it gave, not the branch a check took."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.kit.hostile import parse_or_reject
from memconform.run.session import execute_run
from memconform.suites.amps import format as amps
from memconform.suites.amps import model
from memconform.suites.amps.mutants.domain import PAIR_ONLY
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected

CHECKS = ["amps.imports_every_schema_class", "amps.imports_every_envelope_and_id_class", "amps.imports_optional_fields_pairwise"]


class OtherOpenReadings(ReferenceAmpsStore):
    """Refuses what the reference accepts where the spec is silent (an empty source_provider or id, a link
    named twice, an atom that expires before it is valid) and accepts a null source_provider, which the
    reference refuses (read as absent)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if isinstance(doc, dict) and "source_provider" in doc and doc["source_provider"] is None:
            doc = {k: v for k, v in doc.items() if k != "source_provider"}
        if self.silent_on(doc):
            raise Rejected({"error": "refused"}, "refused")
        return super().import_export(doc, **params)

    @staticmethod
    def silent_on(doc: Any) -> bool:
        if not isinstance(doc, dict):
            return False
        links = [amps.artifact_ids_of(a) for _, a in amps.atoms(doc)] + [a.get("atom_ids") for _, a in amps.artifacts(doc)]
        ids = [a.get("atom_id") for _, a in amps.atoms(doc)] + [a.get("artifact_id") for _, a in amps.artifacts(doc)]
        return (doc.get("source_provider") == "" or "" in ids or bool(model.inverted_intervals(doc))
                or any(isinstance(x, list) and len(set(map(str, x))) < len(x) for x in links))


def _seen(target: str) -> tuple[dict[str, str], set[tuple[str, str]]]:
    outcome = execute_run(["amps"], target, Profile.named("default", seed=1), report_dir=None, check_ids=CHECKS)
    return ({r.check_id: r.outcome.value for r in outcome.results},
            {(r["point"], s) for r in outcome.readings for s in r["seen"]})


def test_the_other_answer_to_each_open_class_passes_and_is_recorded() -> None:
    verdicts, seen = _seen("python:test_amps_domain_readings:OtherOpenReadings")
    assert verdicts == dict.fromkeys(CHECKS, "passed")
    for reading in ("export.source_provider:empty refused", "export.source_provider:null accepted",
                    "export.atoms[].atom_id:empty refused", "export.artifacts[].atom_ids:duplicates refused"):
        assert ("A57", reading) in seen
    assert ("A56", "an atom that expires before it is valid refused") in seen


def test_the_reference_answers_are_recorded_as_seen() -> None:
    verdicts, seen = _seen("reference:amps")
    assert verdicts == dict.fromkeys(CHECKS, "passed")
    for reading in ("export.source_provider:empty accepted", "export.source_provider:null refused",
                    "export.atoms[].atom_id:empty accepted", "export.artifacts[].atom_ids:duplicates accepted"):
        assert ("A57", reading) in seen
    assert ("A56", "an atom that expires before it is valid accepted") in seen


@pytest.mark.mutants
@pytest.mark.parametrize("name", sorted(PAIR_ONLY))
def test_a_pair_only_bug_needs_the_default_profile(name: str) -> None:
    """The bug shows only on one pair of optional fields: ci's covering subset passes it, default's every
    pair catches it."""
    _, check, words = PAIR_ONLY[name]
    target = f"python:memconform.suites.amps.mutants.domain:{name}"
    ci = execute_run(["amps"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    assert [r.outcome.value for r in ci.results] == ["passed"]
    full = execute_run(["amps"], target, Profile.named("default", seed=1), report_dir=None, check_ids=[check])
    assert [r.outcome.value for r in full.results] == ["failed"]
    assert any(words in f.title for f in full.results[0].failures)
