"""amps.rejects_inferred_without_extractor: an importer that repairs the atom (names an extractor itself)
passes, as one that refuses does (the reference); one that stores it as it came, or "repaired" with an
empty name, fails."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.amps import format as amps
from memconform.suites.amps.reference import ReferenceAmpsStore


class NamesTheExtractor(ReferenceAmpsStore):
    """Repairs an inferred atom without an extractor before storing it: "unknown" is named."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        if isinstance(doc, dict):
            for _, atom in amps.atoms(doc):
                prov = amps.provenance(atom)
                if prov.get("derivation") == "inferred" and not prov.get("extractor"):
                    prov["extractor"] = "unknown"
        return super().import_export(doc, **params)


class FillsEmptyExtractor(ReferenceAmpsStore):
    """Stores such an atom with `extractor: ""`: a field, but no name."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "names no extractor" not in p]

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        if isinstance(doc, dict):
            for _, atom in amps.atoms(doc):
                prov = amps.provenance(atom)
                if prov.get("derivation") == "inferred" and not prov.get("extractor"):
                    prov["extractor"] = ""
        return super().import_export(doc, **params)


@pytest.mark.parametrize(("target", "outcome"), [
    ("reference:amps", Outcome.PASSED),
    (f"python:{__name__}:NamesTheExtractor", Outcome.PASSED),
    ("python:memconform.suites.amps.mutants:AcceptsInferredWithoutExtractor", Outcome.FAILED),
    (f"python:{__name__}:FillsEmptyExtractor", Outcome.FAILED),
])
def test_each_answer_to_an_inferred_atom_without_extractor(target: str, outcome: Outcome) -> None:
    result = execute_run(["amps"], target, Profile.named("ci"), report_dir=None,
                         check_ids=["rejects_inferred_without_extractor"]).results[0]
    assert result.outcome is outcome, (result.reason, [f.title for f in result.failures])
