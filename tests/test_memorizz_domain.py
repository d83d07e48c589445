"""MemoRizz data drawn from the domain table: the request parameters pairwise (ci a covering subset, default
every pair), every answer judged by the model, and bugs only the table's data reaches."""

from __future__ import annotations

import itertools

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.kit import domain
from memconform.run.session import execute_run
from memconform.suites.memorizz import model as oracle
from memconform.suites.memorizz.mutants import domain as mutants

PARAM_CHECKS = ["memorizz.domain_export_selection", "memorizz.domain_import_modes"]


def _domain_note(outcome: object) -> dict:
    notes = [n["domain"] for n in outcome.notes if n["suite"] == "memorizz" and "domain" in n]  # type: ignore[attr-defined]
    assert len(notes) == 1, outcome.notes  # type: ignore[attr-defined]
    return notes[0]


def test_every_request_parameter_is_in_a_combination_and_every_pair_is_planned_by_default() -> None:
    table = domain.load("memorizz")
    assert table is not None
    combined = {p for c in table.combinations for p in c["parameters"]}
    assert combined == {f.id for f in table.fields if f.where == "body"}
    for combo in table.combinations:
        universe = table.pair_universe(combo["id"])
        assert domain.rows_pairs(domain.plan(table, combo["id"], "default")) >= universe
        assert 0 < len(domain.rows_pairs(domain.plan(table, combo["id"], "ci")) & universe) < len(universe)


def test_ci_judges_a_subset_of_the_pairs_and_default_every_pair() -> None:
    table = domain.load("memorizz")
    assert table is not None
    total = len(set().union(*(table.pair_universe(c["id"]) for c in table.combinations)))
    ci = execute_run(["memorizz"], "reference:memorizz", Profile.named("ci"), report_dir=None, check_ids=PARAM_CHECKS)
    assert [r.outcome for r in ci.results] == [Outcome.PASSED, Outcome.PASSED]
    assert 0 < _domain_note(ci)["pairs_judged"] < total
    full = execute_run(["memorizz"], "reference:memorizz", Profile.named("default", seed=1), report_dir=None,
                       check_ids=PARAM_CHECKS)
    assert [r.outcome for r in full.results] == [Outcome.PASSED, Outcome.PASSED]
    assert _domain_note(full)["pairs_judged"] == total


def test_the_model_answers_an_export_of_a_namespace_with_the_agents_bound_to_it() -> None:
    state = {("agents", "a1"): {"agent_id": "a1", "memory_ids": ["ns"], "delegates": ["a2"]},
             ("agents", "a2"): {"agent_id": "a2", "memory_ids": ["private"], "delegates": []},
             ("knowledge_base", "k1"): {"memory_id": "ns"}, ("knowledge_base", "k2"): {"memory_id": "private"}}
    (both,) = oracle.export_answers(state, oracle.ExportRequest(memory_id="ns"))
    assert both.keys == {("agents", "a1"), ("knowledge_base", "k1")}
    (delegate,) = oracle.export_answers(state, oracle.ExportRequest(agent_id="a1", types=("knowledge_base",)))
    assert delegate.keys == {("knowledge_base", "k1"), ("knowledge_base", "k2")} and delegate.stores == {"knowledge_base"}
    unknown = oracle.export_answers(state, oracle.ExportRequest(agent_id="nobody"))
    assert [(a.refused, a.keys) for a in unknown] == [(True, frozenset()), (False, frozenset())]
    assert {a.reading for a in oracle.export_answers(state, oracle.ExportRequest(types=()))} == {
        "types [] refused", "types [] as every store", "types [] as no store"}


@pytest.mark.parametrize(("mode", "conflict"), list(itertools.product(oracle.MODES, oracle.CONFLICTS)))
def test_the_model_answers_every_mode_and_policy_over_a_held_record(mode: str, conflict: str) -> None:
    held = {("knowledge_base", "k1"): {"content": "old"}}
    request = oracle.ImportRequest((("knowledge_base", "k1", {"content": "new"}), ("knowledge_base", "k2", {"content": "x"})),
                                   mode, conflict)
    found = oracle.answers(held, request)
    if mode == "preview":
        assert all(o.state == held and o.conflicts == {("knowledge_base", "k1")} for o in found.outcomes)
        assert {o.accepted for o in found.outcomes} == ({True, False} if conflict == "error" else {True})
    elif mode == "clone":
        assert [(o.accepted, o.added) for o in found.outcomes] == [(True, 2), (True, 2)]
    elif conflict == "error":
        assert [(o.accepted, o.state) for o in found.outcomes] == [(False, held)]
    else:
        (outcome,) = found.outcomes
        kept = "old" if conflict == "skip" else "new"
        assert outcome.state == {("knowledge_base", "k1"): {"content": kept}, ("knowledge_base", "k2"): {"content": "x"}}



@pytest.mark.mutants
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(mutants.EXPECTED_KILLS))
def test_only_the_tables_data_catches_the_mutant(name: str) -> None:
    """The whole ci run on the mutant: the one check the table feeds fails, through its branch; every other passes."""
    (check, words), = mutants.EXPECTED_KILLS[name].items()
    outcome = execute_run(["memorizz"], f"python:memconform.suites.memorizz.mutants.domain:{name}", Profile.named("ci"),
                          report_dir=None)
    bad = {r.check_id: r for r in outcome.results if r.outcome is not Outcome.PASSED}
    assert set(bad) == {check}, {k: (r.outcome.value, r.reason) for k, r in bad.items()}
    assert bad[check].outcome is Outcome.FAILED
    assert any(words in f.title for f in bad[check].failures), [f.title for f in bad[check].failures]
