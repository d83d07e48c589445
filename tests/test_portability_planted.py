"""Negative controls: translators with one planted bug (a DNA flag dropped, sensitivity rewritten, ids
collapsed) make the round-trip properties fail, on a fixture and on drawn documents, for every target."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from memconform.portability.planted import PLANTED
from memconform.portability.roundtrip import roundtrip_violations
from memconform.portability.strategies import documents
from memconform.portability.translate import load

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

ROOT = Path(__file__).resolve().parents[1]
CASES = {  # bug -> (source format, a fixture that shows it)
    "dna_dropped": ("memoryai", "fixtures/memoryai/valid/every_dna_kind.json"),
    "sensitivity_rewritten": ("amps", "fixtures/amps/valid/linked-complete.json"),
    "ids_collapsed": ("amps", "fixtures/amps/valid/linked-complete.json"),
}
EXPECTED = {"dna_dropped": "DNA in the source", "sensitivity_rewritten": "sensitivity",
            "ids_collapsed": "live records with no id in the output"}
RUNS = [(bug, b) for bug, (a, _) in CASES.items() for b in ("memoryai", "omp", "memorizz", "amps", "emp") if b != a]


@pytest.mark.parametrize(("bug", "b"), RUNS, ids=[f"{bug}-{b}" for bug, b in RUNS])
def test_planted_bug_breaks_the_property_on_a_fixture(bug, b):
    a, path = CASES[bug]
    _, doc = load(ROOT / path)
    assert roundtrip_violations(doc, a, b) == [], "the control: the real translator keeps the property"
    found = roundtrip_violations(doc, a, b, writers={b: PLANTED[bug](b)})
    assert any(EXPECTED[bug] in v for v in found), found


@pytest.mark.parametrize("bug", sorted(CASES))
def test_planted_bug_is_found_by_the_hypothesis_property(bug):
    a, _ = CASES[bug]
    b = "emp" if bug == "ids_collapsed" else "omp"  # EMP keys by id: a collapsed id is an update, nothing refuses it

    # found is what is asserted: the failing document is not shrunk (nor explained), which cost most of the time
    @settings(max_examples=30, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.reuse, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(documents(a))
    def prop(doc):
        assert roundtrip_violations(doc, a, b, writers={b: PLANTED[bug](b)}) == []

    with pytest.raises(AssertionError):
        prop()
