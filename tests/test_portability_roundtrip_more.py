"""Round trips A -> B -> A as hypothesis properties, from AMPS exports and EMP files drawn from the
suites' strategies (the other three sources: tests/test_portability_roundtrip.py)."""

from __future__ import annotations

import pytest
from memconform.portability.formats import formats
from test_portability_roundtrip import check_pair  # one property for every source format

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

SOURCES = ("amps", "emp")
PAIRS = [(a, b) for a in SOURCES for b in formats() if a != b]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_round_trip(a, b):
    check_pair(a, b)
