"""One budget per run and per check, shared by every call inside them, and a circuit breaker: a run
against a target that never answers in time ends on time, with its report complete.

The end-to-end cases run `memconform run` in a subprocess with budgets of a few seconds; their
bounds are generous (a 5 s budget must end within 60 s): they prove the run is bounded, not fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hostile import http_zoo
from memconform.core.clock import Clock
from memconform.core.redact import Redactor
from memconform.core.results import Failure, TargetError
from memconform.core.runner import MAX_FAILURES, collect_failures
from zoo_support import HERE, assert_survived, run_cli, survivors

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

BUDGET = ["--run-budget", "5", "--call-deadline", "2"]
WITHIN_S = 60


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def clock(run_s: float = 10, check_s: float | None = 4, strikes: int = 3) -> tuple[Clock, FakeTime]:
    fake = FakeTime()
    return Clock(fake.now + run_s, run_s, check_s, strikes, now=fake), fake


def test_a_call_deadline_is_cut_to_what_is_left_of_the_check_and_the_run():
    c, t = clock(run_s=10, check_s=4)
    assert c.deadline("op", 60) == t.now + 10  # no check running: the run's budget
    c.start_check()
    assert c.deadline("op", 60) == t.now + 4
    assert c.deadline("op", 1) == t.now + 1
    assert "check budget" in c.cut_short(c.deadline("op", 60), 60)
    t.now += 4
    with pytest.raises(TargetError, match="not sent: the check budget"):
        c.deadline("op", 60)
    c.end_check()
    c.start_check()  # the next check has its own budget, inside the run's
    assert c.deadline("op", 60) == t.now + 4
    t.now += 6
    with pytest.raises(TargetError, match="not sent: the run budget"):
        c.deadline("op", 60)


def test_three_timeouts_in_a_row_mark_the_target_hung_and_an_answer_resets_the_count():
    c, _ = clock()
    c.timed_out("a")
    c.timed_out("b")
    c.answered()
    c.timed_out("c")
    c.timed_out("d")
    assert c.spent() is None
    c.timed_out("POST /export")
    assert "hung" in str(c.spent()) and "POST /export" in str(c.spent())
    with pytest.raises(TargetError, match="marked hung: 3 calls in a row"):
        c.deadline("next", 60)


def test_targets_of_one_run_share_its_deadline_but_not_their_breaker():
    c, t = clock(run_s=10)
    other = c.sibling()
    c.hang("stuck")
    assert other.spent() is None
    t.now += 10
    assert "run budget" in str(other.spent())


def test_failures_past_the_cut_are_counted_not_kept():
    class Check:
        id = "demo.many"

    def many():
        for i in range(20_000):
            yield Failure(f"bad {i}")

    failures = collect_failures(Check(), many(), Redactor())  # type: ignore[arg-type]
    assert len(failures) == MAX_FAILURES + 1
    assert failures[-1].title == f"... and {20_000 - MAX_FAILURES} more failures of this check"
    assert failures[0].title == "bad 0"


def test_a_check_that_never_stops_failing_stops_being_counted_when_its_budget_is_spent():
    class Check:
        id = "demo.endless"

    c, t = clock(check_s=1)
    c.start_check()

    def endless():
        while True:
            t.now += 0.0001
            yield Failure("bad")

    failures = collect_failures(Check(), endless(), Redactor(), c)  # type: ignore[arg-type]
    assert "counting stopped: the check budget" in failures[-1].title


# ---- end to end: every way of not answering, bounded by the same clock ---------------------------

@pytest.mark.parametrize("mode", ["silent", "head-trickle", "body-trickle", "informational-forever"])
def test_an_http_target_that_never_answers_in_time_ends_within_the_run_budget(tmp_path, mode):
    with http_zoo.serve(mode) as url:
        run = run_cli(tmp_path, ["run", "--suite", "memoryai", "--target", url, *BUDGET])
    results = assert_survived(tmp_path, run, set(), WITHIN_S)
    header = json.loads((tmp_path / "rep" / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert header["budget"] == {"run_s": 5.0, "call_s": 2.0, "check_s": 60.0}
    if not results:  # a loaded machine can spend the 5 s before the first check: a start-up error that says so
        assert run["code"] == 2 and "does not answer" in run["err"] and "run budget" in run["err"], run["err"]
        return
    reasons = " ".join(r.get("reason", "") for r in results)
    assert results and all(r["outcome"] == "errored" for r in results), [r["outcome"] for r in results]
    assert "marked hung" in reasons or "run budget" in reasons, reasons[:2000]
    assert "budget 5 s" in run["out"].splitlines()[0]


def test_the_circuit_breaker_names_its_reason_and_the_remaining_checks_end_at_once(tmp_path):
    with http_zoo.serve("silent") as url:
        run = run_cli(tmp_path, ["run", "--suite", "memoryai", "--target", url, "--run-budget", "300",
                                 "--call-deadline", "1"])
    results = assert_survived(tmp_path, run, set(), WITHIN_S)
    hung = [r for r in results if "marked hung: 3 calls in a row got no answer in time" in r.get("reason", "")]
    # three 1 s timeouts, then every call errors at once: most checks end on the breaker, not a timeout
    assert len(hung) > len(results) / 2, [r.get("reason", "")[:120] for r in results]


def test_a_command_that_hangs_is_bounded_by_the_run_budget_not_its_own_timeout(tmp_path):
    track = tmp_path / "track-hang"
    track.mkdir()
    (tmp_path / "target.json").write_text(json.dumps({
        "default": f"{sys.executable} {HERE / 'hostile' / 'cmd_impl.py'} hang {track} {{op}} {{input}} {{output}}",
        "timeout_s": 30,
    }))
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "4"])
    assert_survived(tmp_path, run, {"target.json", track.name}, WITHIN_S)
    assert survivors(track) == []


def test_a_drop_folder_nobody_answers_is_bounded_by_the_run_budget(tmp_path):
    root = tmp_path / "drop"
    (root / "inbox").mkdir(parents=True)
    (root / "outbox").mkdir()
    (tmp_path / "target.json").write_text(json.dumps({"path": "drop", "wait_s": 30}))
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "dir:@target.json", "--run-budget", "4"])
    results = assert_survived(tmp_path, run, {"target.json", "drop"}, WITHIN_S)
    assert any("hung" in r.get("reason", "") or "budget" in r.get("reason", "") for r in results)


def test_an_in_process_call_that_never_returns_is_abandoned_and_the_run_ends(tmp_path):
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "python:hostile.py_zoo:NeverReturns",
                             "--run-budget", "4", "--call-deadline", "1"])
    results = assert_survived(tmp_path, run, set(), WITHIN_S)
    assert any("marked hung" in r.get("reason", "") for r in results)


def test_an_in_process_reply_over_the_cap_is_refused_before_it_is_serialized(tmp_path):
    run = run_cli(tmp_path, ["run", "--suite", "memoryai", "--target", "python:hostile.py_zoo:HugeReply",
                             "--run-budget", "30"])
    results = assert_survived(tmp_path, run, set(), WITHIN_S)
    assert any("exceeds the cap" in r.get("reason", "") for r in results), [r.get("reason") for r in results]
    assert 0 < run["maxrss_kib"] < 600 * 1024, run["maxrss_kib"]  # about 1 GB once serialized


def test_validate_refuses_a_fifo_a_device_and_a_folder_before_reading(tmp_path):
    import os

    fifo = tmp_path / "bundle.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        run = run_cli(tmp_path, ["validate", str(path)], limit_s=60, key=None)
        assert run["code"] == 2, run
        assert run["err"].count("\n") == 1 and "not a regular file" in run["err"], run["err"]
        assert "Traceback" not in run["err"]
