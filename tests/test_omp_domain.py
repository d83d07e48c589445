"""OMP data drawn from the domain table: the `ci` profile judges every class of the table; a bug that
only a pair of parameters shows is caught by `default`'s pairwise rows and not by `ci`'s subset."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from memconform.core.profile import Profile
from memconform.core.suite import get_suite
from memconform.kit import domain
from memconform.run import coverage
from memconform.run.session import execute_run
from memconform.suites.omp.mutants.domain import PAIR_ONLY

DOMAIN_CHECKS = ["omp.domain_list_parameters", "omp.domain_search_parameters", "omp.domain_conflict_on_existing_id",
                 "omp.domain_memory_ids", "omp.domain_create_every_class", "omp.domain_update_every_class",
                 "omp.domain_import_every_class"]
# every suite's ci run is held to "every class judged": OMP here, MemoRizz and MemoryAI through
# SUITE_DOMAIN_CHECKS below, AMPS and EMP in their own tests at the end


def _domain_note(outcome: object) -> dict:
    notes = [n for n in outcome.notes if n["suite"] == "omp" and "domain" in n]  # type: ignore[attr-defined]
    assert len(notes) == 1, outcome.notes  # type: ignore[attr-defined]
    return notes[0]["domain"]


def test_ci_profile_judges_every_class_of_the_omp_table(tmp_path: Path) -> None:
    outcome = execute_run(["omp"], "reference:omp", Profile.named("ci"), report_dir=tmp_path, check_ids=DOMAIN_CHECKS)
    assert {r.check_id: r.outcome.value for r in outcome.results} == dict.fromkeys(DOMAIN_CHECKS, "passed")
    found = _domain_note(outcome)
    assert found["unreached"] == [], "classes of suites/omp/domain.json the ci profile never sent and judged"
    assert found["classes_judged"] == found["classes_total"] == len(domain.load("omp").classes())
    assert 0 < found["pairs_judged"] < found["pairs_total"]  # ci: a fixed covering subset of the pairs
    _report_is_valid_and_shows_the_figures(tmp_path, found)


def _report_is_valid_and_shows_the_figures(folder: Path, found: dict) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(resources.files("memconform").joinpath("schemas/report.schema.json").read_text("utf-8"))
    validator = Draft202012Validator(schema)
    for line in (folder / "report.jsonl").read_text("utf-8").splitlines():
        assert list(validator.iter_errors(json.loads(line))) == []
    assert f"domain: {found['classes_judged']}/{found['classes_total']} classes judged" in (folder / "summary.md").read_text("utf-8")
    shown = coverage.domain_coverage(get_suite("omp"), folder)
    assert shown.run == found
    assert any("classes judged" in line for line in coverage.render_domain(shown))


@pytest.mark.mutants
@pytest.mark.parametrize("name", sorted(PAIR_ONLY))
def test_pair_only_bug_needs_the_default_profile(name: str) -> None:
    _, check, words = PAIR_ONLY[name]
    target = f"python:memconform.suites.omp.mutants.domain:{name}"
    ci = execute_run(["omp"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    assert [r.outcome.value for r in ci.results] == ["passed"]
    full = execute_run(["omp"], target, Profile.named("default", seed=1), report_dir=None, check_ids=[check])
    assert [r.outcome.value for r in full.results] == ["failed"]
    assert any(words in f.title for f in full.results[0].failures)
    assert _domain_note(full)["pairs_judged"] == len(domain.load("omp").pair_universe("list_parameters"))  # every pair of the list


def test_emp_reader_is_sent_every_class_and_judged_on_the_valid_ones() -> None:
    """EMP draws only its reader data from the table so far: every class reaches the reader, the
    classes memconform's validator accepts are judged (the writer's refusals are not drawn yet)."""
    outcome = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None,
                          check_ids=["emp.reader_returns_every_valid_class"])
    assert [r.outcome.value for r in outcome.results] == ["passed"]
    notes = [n["domain"] for n in outcome.notes if n["suite"] == "emp" and "domain" in n]
    assert len(notes) == 1
    line_classes = [c for f in domain.load("emp").fields if f.where == "line" for c in f.classes]
    assert notes[0]["classes_reached"] == len(line_classes)  # every class of a line's fields; the request ones elsewhere
    assert 0 < notes[0]["classes_judged"] < len(line_classes)


SUITE_DOMAIN_CHECKS = {
    "memorizz": ["memorizz.domain_envelope_every_class", "memorizz.domain_records_every_class",
                 "memorizz.domain_archive_every_class", "memorizz.domain_records_and_manifest_every_class",
                 "memorizz.domain_export_selection", "memorizz.domain_import_modes",
                 "memorizz.record_limit_at_the_boundary"],
    "memoryai": ["memoryai.domain_import_every_class", "memoryai.domain_export_every_class", "memoryai.domain_import_every_record_class",
                 "memoryai.domain_export_parameters_pairwise", "memoryai.domain_import_requests_pairwise"],
}


@pytest.mark.parametrize("suite", sorted(SUITE_DOMAIN_CHECKS))
def test_ci_profile_judges_every_class_of_the_suite_table(suite: str, tmp_path: Path) -> None:
    """The same bar as OMP's for MemoRizz and MemoryAI: ci leaves no class of their tables unjudged."""
    checks = SUITE_DOMAIN_CHECKS[suite]
    outcome = execute_run([suite], f"reference:{suite}", Profile.named("ci"), report_dir=tmp_path, check_ids=checks)
    assert {r.check_id: r.outcome.value for r in outcome.results} == dict.fromkeys(checks, "passed")
    notes = [n["domain"] for n in outcome.notes if n["suite"] == suite and "domain" in n]
    assert len(notes) == 1, outcome.notes
    assert notes[0]["unreached"] == [], f"classes of suites/{suite}/domain.json the ci profile never sent and judged"
    assert notes[0]["classes_judged"] == notes[0]["classes_total"] == len(domain.load(suite).classes())
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert f"domain: {notes[0]['classes_judged']}/{notes[0]['classes_total']} classes judged" in summary


AMPS_DOMAIN_CHECKS = ["amps.imports_every_schema_class", "amps.imports_every_envelope_and_id_class",
                      "amps.imports_optional_fields_pairwise"]


def test_ci_profile_judges_every_class_of_the_amps_table(tmp_path: Path) -> None:
    """AMPS is held to the same bar: ci judges every class of its table and a covering subset of the
    pairs of one atom's optional fields; default judges every pair."""
    ci = execute_run(["amps"], "reference:amps", Profile.named("ci"), report_dir=tmp_path, check_ids=AMPS_DOMAIN_CHECKS)
    assert {r.check_id: r.outcome.value for r in ci.results} == dict.fromkeys(AMPS_DOMAIN_CHECKS, "passed")
    found = [n["domain"] for n in ci.notes if n["suite"] == "amps" and "domain" in n]
    assert len(found) == 1, ci.notes
    assert found[0]["unreached"] == [], "classes of suites/amps/domain.json the ci profile never sent and judged"
    assert found[0]["classes_judged"] == found[0]["classes_total"] == len(domain.load("amps").classes())
    assert 0 < found[0]["pairs_judged"] < found[0]["pairs_total"] == len(domain.load("amps").pair_universe("atom_optional_fields"))
    assert f"domain: {found[0]['classes_judged']}/{found[0]['classes_total']} classes judged" in (tmp_path / "summary.md").read_text("utf-8")
    full = execute_run(["amps"], "reference:amps", Profile.named("default", seed=1), report_dir=None,
                       check_ids=["amps.imports_optional_fields_pairwise"])
    assert [r.outcome.value for r in full.results] == ["passed"]
    pairs = [n["domain"]["pairs_judged"] for n in full.notes if n["suite"] == "amps" and "domain" in n]
    assert pairs == [len(domain.load("amps").pair_universe("atom_optional_fields"))]


def test_ci_profile_judges_every_class_of_the_emp_table(tmp_path: Path) -> None:
    """EMP too: the reader is fed a line of every class and the writer asked to append one, so ci leaves
    no class of suites/emp/domain.json unjudged; the writer's open classes are recorded as E36."""
    checks = ["emp.reader_returns_every_valid_class", "emp.writer_appends_every_class", "emp.writer_updates_every_class",
              "emp.writer_deletes_every_class", "emp.query_every_parameter_pair", "emp.writer_concurrent_no_loss",
              "emp.writer_missing_file_contention", "emp.file_every_line_form", "emp.writer_lock_every_content"]
    outcome = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=tmp_path, check_ids=checks)
    assert {r.check_id: r.outcome.value for r in outcome.results} == dict.fromkeys(checks, "passed")
    notes = [n["domain"] for n in outcome.notes if n["suite"] == "emp" and "domain" in n]
    assert len(notes) == 1, outcome.notes
    assert notes[0]["unreached"] == [], "classes of suites/emp/domain.json the ci profile never sent and judged"
    assert notes[0]["classes_judged"] == notes[0]["classes_total"] == len(domain.load("emp").classes())
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert f"domain: {notes[0]['classes_judged']}/{notes[0]['classes_total']} classes judged" in summary
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    # the reference refuses what its validator refuses and writes the rest as given
    assert {("E36", "an open class appended as given"), ("E36", "an open class refused")} <= seen
    # its query: every tag asked for, similar vectors, and for the values the spec is silent on the readings it took
    assert {("E62", "every given tag present"), ("E60", "similar vectors returned"), ("E61", "read as absent"),
            ("E61", "refused"), ("E61", "exact")} <= seen
    assert 0 < notes[0]["pairs_judged"] < notes[0]["pairs_total"] == len(domain.load("emp").pair_universe("query_parameters"))


def test_emp_default_profile_judges_every_query_pair() -> None:
    """default: every pair of two query parameters, and of each with every write history, is judged."""
    full = execute_run(["emp"], "reference:emp", Profile.named("default", seed=1), report_dir=None,
                       check_ids=["emp.query_every_parameter_pair"])
    assert [r.outcome.value for r in full.results] == ["passed"]
    pairs = [n["domain"]["pairs_judged"] for n in full.notes if n["suite"] == "emp" and "domain" in n]
    assert pairs == [len(domain.load("emp").pair_universe("query_parameters"))]


@pytest.mark.mutants
def test_emp_query_filter_pairs_catch_a_reader_only_they_reach() -> None:
    """A query applying only the first filter it is given passes every single-filter query check; the
    table's pairs catch it, already under ci."""
    ci = execute_run(["emp"], "python:memconform.suites.emp.mutants:QueryFirstFilterOnly", Profile.named("ci"), report_dir=None)
    failed = {r.check_id for r in ci.results if r.outcome.value == "failed"}
    assert failed == {"emp.query_every_parameter_pair"}


def test_emp_writer_domain_catches_writers_only_the_table_reaches() -> None:
    """A writer that leaves out null values of `meta`, and one whose rewriting delete drops lines missing a
    required field, pass every other EMP check: only the table's classes reach them."""
    nulls = execute_run(["emp"], "python:memconform.suites.emp.mutants:DropsNullMetaValues", Profile.named("ci"),
                        report_dir=None)
    failed = {r.check_id: [f.title for f in r.failures] for r in nulls.results if r.outcome.value == "failed"}
    assert failed == {"emp.writer_appends_every_class": ["a valid entry (entry.meta:null_value) was written valid, changed"],
                      "emp.writer_updates_every_class": ["an update to a valid value (entry.meta:null_value) was not "
                                                         "written as the entry with that field changed"]}
    tidy = execute_run(["emp"], "python:memconform.suites.emp.mutants:RewriteDropsIncompleteLines", Profile.named("ci"),
                       report_dir=None)
    assert {r.check_id for r in tidy.results if r.outcome.value == "failed"} == {"emp.writer_deletes_every_class"}
