"""The verdict policy on known-broken implementations of a small demo suite (tests/demo_suite.py).

A level is conformant only on evidence; clause checks decide whatever their keyword; SHOULD rules no
clause lists are warnings outside strict; a negative check whose positive control is refused errors;
claimed or visibly implemented levels that are not conformant make the run exit 1.
"""

from __future__ import annotations

import demo_suite
import pytest
from memconform.core.profile import Profile
from memconform.core.report import Report
from memconform.core.results import Outcome
from memconform.run.session import Session


@pytest.fixture(autouse=True)
def demo():
    demo_suite.install()
    yield
    demo_suite.uninstall()


def run(impl: str, tmp_path=None, profile: str = "ci", checks=None):
    outcome = Session(["demo"], f"python:demo_suite:{impl}", Profile.named(profile), tmp_path, check_ids=checks).run()
    levels = {v.key: v for v in outcome.levels["demo"]}
    return outcome, levels, {r.check_id.split(".")[1]: r for r in outcome.results}


def test_reference_is_conformant_with_evidence(tmp_path):
    outcome, levels, results = run("Reference", tmp_path)
    assert outcome.exit_code == 0
    assert all(v.status == "conformant" for v in levels.values()), [v.line() for v in levels.values()]
    report = Report.from_path(tmp_path / "report.jsonl")
    assert report.footer["readings"] == [{"suite": "demo", "point": "D1", "seen": ["text-kept"], "checks": ["demo.imports_item"]}]
    assert report.footer["notes"] == []  # everything the run wrote was removed


def test_empty_export_only_target_is_not_assessed_and_exits_1():
    outcome, levels, results = run("EmptyExportOnly")
    assert results["items_have_ids"].outcome is Outcome.SKIPPED and results["items_have_ids"].inconclusive
    assert levels["1"].line().startswith("Level 1 Producer: not assessed (why: items_have_ids inconclusive: no items")
    assert levels["2"].status == "not assessed" and levels["2"].claimed  # claimed, nothing it offers
    assert levels["http"].status == "not applicable"  # optional, not claimed
    assert levels["3"].status == "not claimed" and levels["3"].line() == "Level 3 Bidirectional: not claimed"
    assert outcome.exit_code == 1
    assert not any(r.outcome is Outcome.PASSED for r in outcome.results)


def test_target_refusing_everything_never_passes_a_rejection_check():
    outcome, levels, results = run("RefusesEverything")
    negative = results["rejects_item_without_id"]
    assert negative.outcome is Outcome.ERRORED and negative.reason.startswith("positive control refused: ")
    assert levels["2"].status == "not conformant" and outcome.exit_code == 1


def test_a_should_rule_in_the_clause_decides_its_level(tmp_path):
    outcome, levels, results = run("NoChecksum", tmp_path)
    assert results["has_checksum"].blocking and not results["has_checksum"].warning
    assert levels["1"].line() == "Level 1 Producer: not conformant (1 failed check: has_checksum)"
    assert levels["3"].line() == "Level 3 Bidirectional: not conformant (requires Level 1 Producer, which is not conformant)"
    assert outcome.exit_code == 1
    assert "fails under reading(s): sorted-keys" in (tmp_path / "summary.md").read_text()


def test_a_should_rule_in_no_clause_is_a_warning_outside_strict(tmp_path):
    outcome, levels, results = run("NoHint", tmp_path)
    assert results["has_hint"].warning and not results["has_hint"].blocking
    assert levels["1"].line() == "Level 1 Producer: conformant (1 warning: has_hint)"
    assert outcome.exit_code == 0
    junit = (tmp_path / "junit.xml").read_text()
    assert 'failures="0"' in junit and "WARNING" in junit
    strict, strict_levels, _ = run("NoHint", profile="strict")
    assert strict.exit_code == 1 and strict_levels["1"].status == "not conformant"


def test_an_optional_profile_present_but_broken_is_not_conformant_or_assessed():
    outcome, levels, _ = run("ProfileCrashes")
    assert levels["http"].status == "not assessed" and levels["http"].implemented
    assert "profile_answers errored" in levels["http"].line()
    assert outcome.exit_code == 1


def test_an_optional_profile_absent_is_not_applicable():
    outcome, levels, _ = run("NoProfile")
    assert levels["http"].line().startswith("HTTP profile (RECOMMENDED): not applicable (optional")
    assert outcome.exit_code == 0


def test_a_skipped_must_check_leaves_its_level_not_assessed():
    demo_suite.install(extra=[(demo_suite.needs_a_hook, "MUST", "1")])
    outcome, levels, _ = run("Reference")
    assert levels["1"].line() == "Level 1 Producer: not assessed (why: needs_a_hook skipped: needs the decay hook)"
    assert outcome.exit_code == 1


def test_a_level_whose_only_runnable_checks_errored_is_not_conformant_nor_passed():
    outcome, levels, _ = run("ProfileCrashes", checks=["profile_answers"])
    assert levels["http"].conformant is None and outcome.exit_code == 1


def test_nothing_applicable_ran_is_exit_2():
    outcome, levels, _ = run("NoProfile", checks=["profile_answers"])
    assert outcome.exit_code == 2


def test_what_could_not_be_removed_is_in_the_footer_notes(tmp_path):
    outcome, _, _ = run("NoDelete", tmp_path)
    notes = Report.from_path(tmp_path / "report.jsonl").footer["notes"]
    assert len(notes) == 2 and all(n["note"].startswith("could not remove: item memconform-") for n in notes)
    assert outcome.exit_code == 0  # leftovers are reported, they are not the target's fault


def test_begin_check_is_called_before_every_check():
    from memconform.core.runner import Context, run_checks
    from memconform.targets.pyobj import PythonTarget

    class Counting(PythonTarget):
        begun = 0

        def begin_check(self) -> None:
            self.begun += 1

    target = Counting(demo_suite.Reference(), "counting")
    ctx = Context(suite=demo_suite.SUITE, target=target, profile=Profile.named("ci"))
    checks = [demo_suite.make_check(fn, kw, lv) for fn, kw, lv in demo_suite.CHECKS]
    results = list(run_checks(checks, ctx))
    assert target.begun == len(checks) and all(r.outcome is Outcome.PASSED for r in results)


def test_a_level_is_not_conformant_on_a_selection_of_its_checks():
    outcome, levels, _ = run("Reference", checks=["items_have_ids"])
    assert levels["1"].line() == ("Level 1 Producer: not assessed (why: 1 of its checks were not selected for this run "
                                  "(has_checksum))")
    assert outcome.exit_code == 0  # what was asked for passed; the verdict says it is partial
    outcome, levels, _ = run("NoChecksum", checks=["has_checksum"])
    assert levels["1"].status == "not conformant" and outcome.exit_code == 1
