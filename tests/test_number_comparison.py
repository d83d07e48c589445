"""Numbers read back are compared as the spec types them (issue 35 item 1): a field typed a float or a
JSON number with no integer rule as IEEE-754 doubles (both sides rounded the same way), an integer field
exactly. The walk below covers every numeric field of the five domain tables; the MemoryAI record sweep is
run against a consumer that stores weights as doubles (passes) and two that corrupt a number (fail)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.kit import domain
from memconform.kit.shared_rules import is_int
from memconform.run.session import execute_run
from memconform.suites.memoryai.reference.brain import ReferenceBrain

ABOVE_2_53 = 2**53 + 1
AS_DOUBLE = float(ABOVE_2_53)  # 9007199254740992.0: no double holds 2^53 + 1

# every field the five tables type as a number, and how its value read back is compared
COMPARISONS = {
    "omp": {"list.limit": "exact", "list.offset": "exact"},
    "memoryai": {"bundle.version": "exact", "manifest.embedding_dim": "exact", "chunk.importance": "double", "chunk.id": "exact",
                 "chunk.decay_score": "double", "edge.chunk_a": "exact", "edge.chunk_b": "exact", "edge.weight": "double",
                 "edge.co_activation_count": "exact", "entity.frequency": "exact"},
    "memorizz": {"archive.version": "exact", "record.data.number": "double", "manifest.record_count": "exact",
                 "archive.record_count": "exact", "record.data.number_more": "double"},
    "amps": {"export.atoms[].confidence": "double"},
    "emp": {"entry.ts": "double", "query.start": "double", "query.end": "double", "contention.apps": "exact"},
}


@pytest.mark.parametrize("suite", sorted(COMPARISONS))
def test_every_numeric_field_of_the_tables_has_its_comparison(suite: str) -> None:
    table = domain.load(suite)
    assert table is not None
    seen = {f.id: f.number_comparison for f in table.fields if f.number_comparison is not None}
    assert seen == COMPARISONS[suite]
    # a field whose classes are numbers is typed as one: no number escapes the walk under another type
    untyped = [f.id for f in table.fields if f.number_comparison is None and any(c.gen in ("number", "millis") for c in f.classes)]
    assert untyped == []


def test_a_float_field_typed_in_the_spec_text_compares_as_doubles() -> None:
    """The type follows the spec's own words: `<float>`, `"type": "number"`, TypeScript `number`."""
    for suite, fid, words in (("memoryai", "edge.weight", "<float>"), ("amps", "export.atoms[].confidence", '"type": "number"'),
                              ("emp", "entry.ts", "ts: number")):
        table = domain.load(suite)
        assert table is not None
        assert words in table.field(fid).sentence and table.field(fid).number_comparison == "double"
    table = domain.load("memoryai")
    assert table is not None
    assert "<int>" in table.field("entity.frequency").sentence and table.field("entity.frequency").number_comparison == "exact"


@pytest.mark.parametrize(("got", "sent", "double", "exact"), [
    (AS_DOUBLE, ABOVE_2_53, True, False),          # a double store's 2^53 + 1
    (2**53, ABOVE_2_53, True, False),               # the same, written back without ".0"
    (2**53 + 2, ABOVE_2_53, False, False),          # ties to even: 2^53 + 1 rounds to 2^53, not to the double 2^53 + 2
    (5.0, 5, True, True), (-0.0, 0, True, True), (0.1, 0.1, True, True),
    (math.nextafter(0.5, 1), 0.5, False, False),    # one ulp off is a corrupted number under both
    (ABOVE_2_53 + 1, ABOVE_2_53 - 1, False, False),
    (True, 1, False, False), (1, True, False, False), ("1", 1, False, False), (None, 0, False, False),
    (math.inf, 10**400, True, False),               # beyond the largest double: an infinity, as a parser gives
])
def test_same_number_rounds_both_sides_to_doubles_or_compares_exactly(got: Any, sent: Any, double: bool, exact: bool) -> None:
    assert domain.same_number(got, sent, "double") is double
    assert domain.same_number(got, sent, "exact") is exact


def test_an_unknown_comparison_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown number comparison"):
        domain.same_number(1, 1, "close")


def test_the_checks_compare_as_their_tables_say() -> None:
    """The comparators the read-back checks use, on the one pair that tells the two apart."""
    from memconform.suites.amps.domain_support import same as amps_same
    from memconform.suites.emp.readings import same_number_or_value
    from memconform.suites.memoryai.checks.domain_records import same_number as memoryai_same

    for fid in ("edge.weight", "edge.co_activation_count", "entity.frequency"):
        assert memoryai_same(fid, AS_DOUBLE, ABOVE_2_53) is (COMPARISONS["memoryai"][fid] == "double")
    assert amps_same(ABOVE_2_53, AS_DOUBLE) is True
    assert same_number_or_value(ABOVE_2_53, AS_DOUBLE) is True
    assert same_number_or_value(0.5, math.nextafter(0.5, 1)) is False


# ---- the MemoryAI record sweep against consumers storing numbers their own way ------------------------------

class WeightsAsDoubles(ReferenceBrain):
    """Stores an edge's weight in a REAL column: 2^53 + 1 is exported as 9007199254740992.0."""

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        super()._import_edges(_edges_with(bundle, "weight", lambda w: float(w) if isinstance(w, int) and not isinstance(w, bool) else w),
                              idmap, report)


class WeightsOneUlpOff(ReferenceBrain):
    """Corrupts a weight by one unit in the last place: no double rounding explains that."""

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        super()._import_edges(_edges_with(bundle, "weight", lambda w: math.nextafter(float(w), math.inf)
                                          if isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) else w),
                              idmap, report)


class FrequencyThroughDouble(ReferenceBrain):
    """Stores an entity's <int> frequency through a double: 2^53 + 1 comes back 2^53."""

    def _import_entities(self, bundle: dict[str, Any], report: dict[str, Any]) -> None:
        entities = bundle.get("entities")
        if isinstance(entities, list):
            bundle = {**bundle, "entities": [dict(e, frequency=int(float(e["frequency"])))
                                             if isinstance(e, dict) and is_int(e.get("frequency")) else e for e in entities]}
        super()._import_entities(bundle, report)


def _edges_with(bundle: dict[str, Any], key: str, change: Any) -> dict[str, Any]:
    edges = bundle.get("memory_edges")
    if not isinstance(edges, list):
        return bundle
    return {**bundle, "memory_edges": [dict(e, **{key: change(e[key])}) if isinstance(e, dict) and key in e else e for e in edges]}


def run_record_sweep(brain: ReferenceBrain) -> Any:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.http_app import make_app

    url, stop = serve_in_thread(make_app(brain))
    try:
        outcome = execute_run(["memoryai"], url, Profile.named("ci"), report_dir=None,
                              check_ids=["memoryai.domain_import_every_record_class"])
    finally:
        stop()
    (result,) = outcome.results
    return result


@pytest.mark.slow
def test_a_consumer_storing_weights_as_doubles_passes_the_record_sweep() -> None:
    result = run_record_sweep(WeightsAsDoubles())
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason


@pytest.mark.slow
@pytest.mark.parametrize(("brain", "changed"), [(WeightsOneUlpOff, "the edge's weight changed"),
                                                (FrequencyThroughDouble, "the entity's frequency changed")])
def test_a_consumer_corrupting_a_number_still_fails(brain: type[ReferenceBrain], changed: str) -> None:
    result = run_record_sweep(brain())
    assert result.outcome.value == "failed", result.outcome.value
    titles = [f.title for f in result.failures]
    assert any(changed in t for t in titles), titles
    if brain is FrequencyThroughDouble:  # only the integer beyond 2^53 is corrupted: the other classes pass
        assert all("above_2_53" in t for t in titles), titles


@pytest.mark.xfail(strict=True, reason="memorizz's record check keeps integers exact (errata M-domain: '2^53 + 1 stays 2^53 + 1', "
                   "mutant NumbersAsDoubles) while its table types record.data.number a JSON number and the spec says 'use strings "
                   "for exact integers beyond JavaScript's safe integer range': left to the suite's owner")
def test_memorizz_record_numbers_compare_as_their_table_says() -> None:
    from memconform.suites.memorizz.checks.domain_imports import same_number as memorizz_same

    assert COMPARISONS["memorizz"]["record.data.number"] == "double"
    assert memorizz_same(ABOVE_2_53, AS_DOUBLE) is True
