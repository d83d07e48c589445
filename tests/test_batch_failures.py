"""One item in the middle of a batch write (harness/kit/batch_failures.py and each suite's
import_batch_middle_item): the judgement alone against a recording context, then each suite's check on
its reference (passes, the reading seen recorded) and on the mutants that stop at the bad item or lose
what was held before (fail through that branch)."""

from __future__ import annotations

from pathlib import Path

import pytest
from memconform.core.profile import Profile
from memconform.kit import batch_failures as bf
from memconform.run.session import execute_run
from readings_kit import ReadingRecorder

Recording = ReadingRecorder  # the two context methods judge uses


def outcome(accepted: bool, reported: bool, stored: str) -> bf.BatchResult:
    return bf.BatchResult(accepted=accepted, reported=reported, stored=tuple(ch == "y" for ch in stored))


CASES = [  # (expect, readings allowed when invalid, outcome, fails?, reading recorded)
    ("valid", bf.WHOLE, outcome(True, False, "yyyyy"), False, None),
    ("valid", bf.EITHER, outcome(True, True, "yynyy"), True, None),
    ("invalid", bf.EITHER, outcome(True, True, "yynyy"), False, bf.REPORTED),
    ("invalid", bf.EITHER, outcome(False, True, "nnnnn"), False, bf.REFUSED),
    ("invalid", bf.WHOLE, outcome(True, True, "yynyy"), True, bf.REPORTED),
    ("invalid", bf.WHOLE, outcome(False, False, "yynnn"), True, None),  # refused after writing part
    ("invalid", bf.EITHER, outcome(True, False, "yyyyy"), True, bf.ALL),  # a forbidden item stored
    ("open", bf.WHOLE, outcome(True, False, "yyyyy"), False, bf.ALL),
    ("open", bf.WHOLE, outcome(False, False, "nnnnn"), False, bf.REFUSED),
]


@pytest.mark.parametrize("expect,when_invalid,seen,fails,recorded", CASES)
def test_judge_accepts_what_the_class_allows(expect: str, when_invalid: tuple[str, ...], seen: bf.BatchResult, fails: bool,
                                             recorded: str | None) -> None:
    ctx = Recording()
    failures = list(bf.judge(ctx, "X1", "a batch", expect, seen, when_invalid))  # type: ignore[arg-type]
    assert bool(failures) is fails, [f.title for f in failures]
    if expect == "valid":
        assert ctx.seen == []  # not an open point: nothing recorded
    else:
        assert ctx.seen == ([("X1", recorded)] if recorded else [])


def test_stopping_at_the_middle_item_is_named() -> None:
    for when_invalid in (bf.WHOLE, bf.EITHER):
        (failure,) = bf.judge(Recording(), "X1", "a batch", "invalid", outcome(True, False, "yynnn"), when_invalid)  # type: ignore[arg-type]
        assert "stopped at the middle item without saying so" in failure.title
        assert failure.received["items written, in order"] == ["yes", "yes", "no", "no", "no"]


def test_kept_names_what_was_lost_or_changed() -> None:
    before = {"a": 1, "b": 2}
    assert list(bf.kept("x", before, {"a": 1, "b": 2})) == []
    titles = [f.title for f in bf.kept("x", before, {"a": 3})]
    assert titles == ["x: a record stored before the batch was lost", "x: a record stored before the batch changed"]


CHECK = "import_batch_middle_item"
POINTS = {"memoryai": "E41", "amps": "A36", "memorizz": "M34"}
# suite -> mutant -> a fragment of the failure title it must raise
MUTANTS = {
    "memoryai": {"ImportStopsAtInvalid": "stopped at the middle item without saying so"},
    "amps": {"ImportStopsAtInvalid": "stopped at the middle item without saying so"},
    "memorizz": {"ImportStopsAtInvalid": "stopped at the middle item without saying so",
                 "ReplaceDeletesBeforeValidating": "a record stored before the batch was lost"},
}


@pytest.mark.parametrize("suite", sorted(POINTS))
def test_reference_passes_and_the_reading_seen_is_recorded(suite: str, tmp_path: Path) -> None:
    outcome = execute_run([suite], None, Profile.named("ci"), report_dir=tmp_path, check_ids=[f"{suite}.{CHECK}"])
    (result,) = outcome.results
    assert result.outcome.value == "passed", (result.reason, [f.to_json() for f in result.failures])
    report = (tmp_path / "report.jsonl").read_text("utf-8")
    assert f'"point": "{POINTS[suite]}"' in report


@pytest.mark.mutants
@pytest.mark.parametrize("suite,mutant", [(s, m) for s in sorted(MUTANTS) for m in sorted(MUTANTS[s])])
def test_a_broken_batch_is_caught(suite: str, mutant: str) -> None:
    outcome = execute_run([suite], f"python:memconform.suites.{suite}.mutants:{mutant}", Profile.named("ci"), report_dir=None,
                          check_ids=[f"{suite}.{CHECK}"])
    (result,) = outcome.results
    assert result.outcome.value == "failed", result.reason
    assert any(MUTANTS[suite][mutant] in f.title for f in result.failures), [f.title for f in result.failures]
