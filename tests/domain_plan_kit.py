"""What the four suites' domain-plan tests share (tests/test_<suite>_domain_plan.py): one check run under a
profile with the calls it made, the classes its sweep judged, the open answers it recorded, and the claim each
test makes of a planned sweep: `ci` judges what `default` judges, in fewer calls."""

from __future__ import annotations

from memconform.core.profile import Profile
from memconform.run.session import RunOutcome, execute_run


def sweep(suite: str, check: str, profile: str, target: str | None = None) -> tuple[RunOutcome, int]:
    """The run of one check (`suite.name`) under `profile`, and the calls it made to the target."""
    outcome = execute_run([suite], target, Profile.named(profile), None, check_ids=[check])
    return outcome, outcome.calls[suite]["calls"]


def judged(outcome: RunOutcome) -> int:
    [note] = [n for n in outcome.notes if "domain" in n]
    return int(note["domain"]["classes_judged"])


def open_answers(outcome: RunOutcome) -> dict[str, list[str]]:
    """Each open point's answers seen (in the order the classes were sent, which the plan changes)."""
    return {r["point"]: sorted(r["seen"]) for r in outcome.readings}


def ci_judges_as_default(suite: str, check: str, fewer_than: float = 1.0, answers: bool = False,
                         some_answers: bool = False) -> None:
    """`ci` passes where `default` passes, judging the same classes, in fewer than `fewer_than` x default's
    calls; with `answers`, every open point's answers are recorded as they are alone (`some_answers`: and
    there are some)."""
    ci, ci_calls = sweep(suite, check, "ci")
    default, default_calls = sweep(suite, check, "default")
    assert [r.outcome.value for r in ci.results] == [r.outcome.value for r in default.results] == ["passed"]
    assert judged(ci) == judged(default) > 0
    if answers:
        assert open_answers(ci) == open_answers(default)
        assert open_answers(ci) or not some_answers
    assert ci_calls < default_calls * fewer_than


def packed_as_alone(suite: str, check: str, target: str) -> tuple[RunOutcome, RunOutcome, list[str]]:
    """The check under `ci` and under `default` against `target`: both failed with the same failure titles, so
    a packed request that failed was split until each failure reads as its item's alone. (ci, default, the
    titles, sorted.)"""
    ci, _ = sweep(suite, check, "ci", target)
    alone, _ = sweep(suite, check, "default", target)
    [packed], [single] = ci.results, alone.results
    assert packed.outcome.value == single.outcome.value == "failed"
    titles = sorted(f.title for f in packed.failures)
    assert titles == sorted(f.title for f in single.failures)  # as a request of that item alone makes it
    return ci, alone, titles
