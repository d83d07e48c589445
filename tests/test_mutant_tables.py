"""The mutant tables read as one typed object (harness/core/mutants.py): what a wrong table is refused for."""

from __future__ import annotations

import types

import pytest
from memconform.core.mutants import Mutants
from memconform.core.results import HarnessError
from memconform.core.suite import all_suites


def module(**tables) -> types.ModuleType:
    m = types.ModuleType("toy_mutants")
    m.__dict__.update(tables)
    return m


def test_every_installed_suite_has_a_valid_table():
    tables = {s.name: s.mutant_table() for s in all_suites() if s.mutants is not None}
    assert tables and all(t is not None and t.problems() == [] and t.kills for t in tables.values())


def test_one_spelling_of_the_branch_that_must_fire():
    table = Mutants.of(module(MUTANTS={"A": object, "B": object, "C": object},
                              EXPECTED_KILLS={"A": {"toy.x": "words a"}, "B": {"toy.y"}, "C": {"toy.z"}},
                              EXPECTED_TITLES={"B": {("toy.y", "words b")}},
                              EXPECTED_FAILURES={"C": {"z": "words c"}}), "toy")
    assert table.branches == {"A": {("toy.x", "words a")}, "B": {("toy.y", "words b")}, "C": {("toy.z", "words c")}}
    assert table.kills == {"A": {"toy.x"}, "B": {"toy.y"}, "C": {"toy.z"}}


@pytest.mark.parametrize("tables,why", [
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": {"toy.x"}, "Gone": {"toy.x"}}}, "do not exist"),
    ({"MUTANTS": {"A": object, "B": object}, "EXPECTED_KILLS": {"A": {"toy.x"}}}, "no expected kill"),
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": set()}}, "is empty"),
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": {"other.x"}}}, "not of suite"),
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": {"toy.x"}}, "HTTP_ONLY": {"A"}}, "no http_app"),
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": {"toy.x"}}, "NOTE_ONLY": {"A"}}, "both killed"),
    ({"MUTANTS": {"A": object}, "EXPECTED_KILLS": {"A": {"toy.x"}}, "EXPECTED_TITLES": {"Z": {("toy.x", "w")}}},
     "do not exist"),
])
def test_a_table_that_disagrees_is_refused_naming_why(tables, why):
    with pytest.raises(HarnessError, match=why):
        Mutants.of(module(**tables), "toy")


def test_checks_run_on_a_mutant():
    table = Mutants.of(module(MUTANTS={"A": object, "Slow": object}, EXPECTED_KILLS={"A": {"toy.x"}, "Slow": {"toy.y"}},
                              ALSO_RUN={"toy.setup"}, KILLS_ONLY={"Slow"}), "toy")
    assert table.checks_run_on("A") == ["toy.setup", "toy.x"] and table.checks_run_on("Slow") == ["toy.y"]
    assert table.target("A") == "python:toy_mutants:A"
