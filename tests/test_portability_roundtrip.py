"""Round trips A -> B -> A as hypothesis properties, from MemoryAI, OMP and MemoRizz documents drawn from the
suites' strategies (the other two sources: tests/test_portability_roundtrip_more.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from memconform.portability.formats import formats
from memconform.portability.roundtrip import roundtrip_violations
from memconform.portability.strategies import documents
from memconform.portability.validation import problems

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

SOURCES = ("memoryai", "omp", "memorizz")
PAIRS = [(a, b) for a in SOURCES for b in formats() if a != b]


def check_pair(a: str, b: str) -> None:
    @settings(max_examples=25, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(documents(a))
    def prop(doc):
        # the suites' strategies can draw a document their own checks refuse (a MemoryAI metadata key named like a
        # credential): a translation must refuse to write such a document, so only valid sources are round-tripped
        assume(not problems(a, doc))
        assert roundtrip_violations(doc, a, b) == []
    prop()


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_round_trip(a, b):
    check_pair(a, b)
