"""Suites against their embedded references side by side (run/suite_processes.py): the report is the one a run
of the suites in turn writes, in the same order, and a suite's process that fails is never a pass."""

from __future__ import annotations

import json
import pickle
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Failure, HarnessError, Outcome, Result
from memconform.run import suite_processes
from memconform.run.session import Session

# what differs between any two runs: ids drawn per run, clock times, durations
DRAWN = re.compile(r"[0-9a-f]{4,}|[0-9A-Za-z_-]{20,}|\d{4}-\d\d-\d\dT[0-9:.]+Z?|\d+\.\d+s?|\d{10,}")
PER_RUN = ("duration_s", "started_at", "finished_at", "chain", "digest")


def masked(value: Any) -> Any:
    if isinstance(value, str):
        return DRAWN.sub("~", value)
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, dict):
        return {k: v if k == "check_id" else masked(v) for k, v in value.items()}
    return value


def comparable(report: Path) -> list[dict[str, Any]]:
    lines = []
    for text in report.read_text("utf-8").splitlines():
        line = json.loads(text)
        for key in PER_RUN:
            line.pop(key, None)
        if "transcript" in line:  # request bodies carry drawn ids and clock times: how many lines, not what
            line["transcript"] = len(line["transcript"])
        lines.append(masked(line))
    return lines


def run(tmp_path: Path, name: str, processes: str, monkeypatch: pytest.MonkeyPatch, checks: list[str]) -> Path:
    monkeypatch.setenv(suite_processes.ENV_PROCESSES, processes)
    folder = tmp_path / name
    session = Session(["amps", "memorizz"], None, Profile.named("ci"), folder, check_ids=checks)
    assert suite_processes.side_by_side(session) is (processes != "1")
    suite_processes.run(session)
    return folder


def test_side_by_side_writes_the_report_of_the_suites_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a few checks of each suite, one of them (memorizz's model sequences) a hypothesis run
    checks = ["amps.schema_valid", "amps.rejects_malformed_export", "amps.atom_labels_required",
              "memorizz.model_sequences", "memorizz.restore_keeps_ids"]
    in_turn = run(tmp_path, "in-turn", "1", monkeypatch, checks)
    together = run(tmp_path, "together", "2", monkeypatch, checks)
    first, second = comparable(in_turn / "report.jsonl"), comparable(together / "report.jsonl")
    assert sorted(line.get("check_id") for line in second if line["type"] == "result") == sorted(checks)
    assert second == first
    footer = second[-1]
    assert footer["type"] == "footer" and [c["suite"] for c in footer["calls"]] == ["amps", "memorizz"]
    assert all(c["calls"] > 0 for c in footer["calls"])
    assert (in_turn / "summary.md").read_text("utf-8").count("conformant") == \
        (together / "summary.md").read_text("utf-8").count("conformant")
    assert not list(tmp_path.glob("*.suites-*")), "the suites' part folders are removed"


class FakePart:
    """A suite's process that sends what it is given, from a thread (is_alive/exitcode/join/terminate)."""

    def __init__(self, messages: list[tuple[Any, ...]], index: int, news: Any, delay: threading.Event | None) -> None:
        self.exitcode: int | None = None
        self.thread = threading.Thread(target=self._send, args=(messages, index, news, delay), daemon=True)
        self.thread.start()

    def _send(self, messages: list[tuple[Any, ...]], index: int, news: Any, delay: threading.Event | None) -> None:
        if delay is not None:
            delay.wait(10)
        for message in messages:
            news.put((index, message))
        self.exitcode = 0

    def is_alive(self) -> bool:
        return self.thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self.thread.join(timeout)

    def terminate(self) -> None:
        pass


def result(suite: str, name: str, outcome: Outcome = Outcome.PASSED) -> Result:
    return Result(check_id=f"{suite}.{name}", suite=suite, spec=suite, section="s", keyword="MUST", level="l",
                  sentence="s", outcome=outcome, failures=[Failure("broken")] if outcome is Outcome.FAILED else [])


def sent(r: Result) -> tuple[str, Any]:
    return ("result", ("pickle", pickle.dumps(r)))


def closed(suite: str, calls: int) -> tuple[str, Any]:
    return ("closed", {"notes": [{"suite": suite, "note": f"{suite} note"}], "readings": [], "calls": {"calls": calls},
                       "levels": None})


def fake_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripts: dict[str, list[tuple[Any, ...]]],
             held_back: dict[str, threading.Event] | None = None) -> Session:
    monkeypatch.setenv(suite_processes.ENV_PROCESSES, str(len(scripts)))
    session = Session(list(scripts), None, Profile.named("ci"), tmp_path / "run")
    started: list[str] = []
    session.on_start = started.append

    def launch(index: int, job: Any, news: Any) -> FakePart:
        return FakePart(scripts[job.suite], index, news, (held_back or {}).get(job.suite))

    session.launched = launch  # type: ignore[attr-defined]
    session.started = started  # type: ignore[attr-defined]
    return session


def test_news_that_comes_out_of_order_is_recorded_in_the_suites_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first_done = threading.Event()
    scripts = {
        "amps": [("start", "amps.a"), sent(result("amps", "a")), ("start", "amps.b"),
                 sent(result("amps", "b", Outcome.FAILED)), closed("amps", 3)],
        "emp": [("start", "emp.a"), sent(result("emp", "a")), closed("emp", 5)],
    }
    session = fake_run(tmp_path, monkeypatch, scripts, {"amps": first_done})
    # emp's news all comes first; amps' only once emp has said everything
    threading.Timer(0.3, first_done.set).start()
    outcome = suite_processes.run_side_by_side(session, session.launched)  # type: ignore[attr-defined]
    assert [r.check_id for r in outcome.results] == ["amps.a", "amps.b", "emp.a"]
    assert session.started == ["amps.a", "amps.b", "emp.a"]  # type: ignore[attr-defined]
    assert [n["note"] for n in outcome.notes] == ["amps note", "emp note"]
    assert outcome.calls == {"amps": {"calls": 3}, "emp": {"calls": 5}}
    lines = [json.loads(x) for x in (outcome.report_dir / "report.jsonl").read_text("utf-8").splitlines()]  # type: ignore[operator]
    assert [x.get("check_id") for x in lines[1:-1]] == ["amps.a", "amps.b", "emp.a"]
    assert lines[-1]["calls"] == [{"suite": "amps", "calls": 3}, {"suite": "emp", "calls": 5}]
    assert outcome.exit_code == 1  # the failed MUST check


def test_a_suite_that_cannot_start_ends_the_run_as_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = {
        "amps": [sent(result("amps", "a")), closed("amps", 1)],
        "emp": [("not started", "emp: the target failed the start-up check: no")],
        "memorizz": [sent(result("memorizz", "a")), closed("memorizz", 1)],
    }
    session = fake_run(tmp_path, monkeypatch, scripts)
    with pytest.raises(HarnessError, match="emp: the target failed the start-up check"):
        suite_processes.run_side_by_side(session, session.launched)  # type: ignore[attr-defined]
    outcome = session.outcome
    assert [r.check_id for r in outcome.results] == ["amps.a"]  # memorizz, after it, is not reported
    assert outcome.notes[-1] == {"suite": "emp", "note": "could not start: emp: the target failed the start-up check: no"}
    assert outcome.exit_code == 2
    footer = json.loads((outcome.report_dir / "report.jsonl").read_text("utf-8").splitlines()[-1])  # type: ignore[operator]
    assert footer["type"] == "footer" and footer["exit_code"] == 2


@pytest.mark.parametrize("last", [None, ("broke", "RuntimeError: a harness bug")], ids=["ended", "broke"])
def test_a_suite_process_that_ends_before_its_suite_is_a_harness_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, last: tuple[str, str] | None) -> None:
    scripts = {"amps": [sent(result("amps", "a")), closed("amps", 1)],
               "emp": [sent(result("emp", "a")), *([last] if last else [])]}
    monkeypatch.setattr(suite_processes, "POLL_S", 0.05)
    session = fake_run(tmp_path, monkeypatch, scripts)
    with pytest.raises(HarnessError, match="emp: the suite's process (ended|broke)"):
        suite_processes.run_side_by_side(session, session.launched)  # type: ignore[attr-defined]
    session.close()
    # the results that came are recorded, and the report stays visibly truncated: no footer, never a pass
    lines = (tmp_path / "run" / "report.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["header", "result", "result"]


def test_only_several_suites_against_their_references_go_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(suite_processes.ENV_PROCESSES, raising=False)
    ci = Profile.named("ci")

    def session(suites: list[str], target: str | None = None) -> Session:
        return Session(suites, target, ci, None)

    assert suite_processes.processes_allowed() >= 2
    assert suite_processes.side_by_side(session(["amps", "emp"]))
    assert not suite_processes.side_by_side(session(["amps"]))
    # one live target's state (a store, a rate limit) is shared by the suites run against it
    assert not suite_processes.side_by_side(session(["amps", "emp"], "http://127.0.0.1:9"))
    monkeypatch.setenv(suite_processes.ENV_PROCESSES, "1")
    assert not suite_processes.side_by_side(session(["amps", "emp"]))
    for bad in ("0", "two"):
        monkeypatch.setenv(suite_processes.ENV_PROCESSES, bad)
        with pytest.raises(HarnessError, match=suite_processes.ENV_PROCESSES):
            suite_processes.processes_allowed()


def test_files_a_suite_writes_are_moved_into_the_run_and_not_taken_for_tampering(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(suite_processes.ENV_PROCESSES, "2")
    session = Session(["amps", "emp"], None, Profile.named("ci"), tmp_path / "run")

    def launch(index: int, job: Any, news: Any) -> FakePart:
        assert job.folder is not None and job.report_name == tmp_path / "run"  # files named as the report folder names them
        (job.folder / "examples").mkdir(parents=True)
        (job.folder / "examples" / f"{job.suite}-example.json").write_text("{}")
        return FakePart([sent(result(job.suite, "a")), closed(job.suite, 1)], index, news, None)

    outcome = suite_processes.run_side_by_side(session, launch)
    session.close()
    assert outcome.tampered == [] and outcome.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "run" / "examples").iterdir()) == ["amps-example.json", "emp-example.json"]
    assert not list(tmp_path.glob("*.suites-*")), "the suites' part folders are removed"



def test_the_longest_suite_starts_first_and_a_suite_that_ends_frees_its_slot_for_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes for three suites: the two longest by the measured figures (emp, memorizz under ci) start
    first; memorizz ends while emp still runs, and amps, first in the report, starts in its slot at once (not
    after emp, which would leave a core idle while emp waits on its locks)."""
    amps_started = threading.Event()
    scripts = {
        "amps": [sent(result("amps", "a")), closed("amps", 1)],
        "emp": [sent(result("emp", "a")), closed("emp", 1)],
        "memorizz": [sent(result("memorizz", "a")), closed("memorizz", 1)],
    }
    monkeypatch.setattr(suite_processes, "POLL_S", 0.05)
    session = fake_run(tmp_path, monkeypatch, scripts, {"emp": amps_started})
    monkeypatch.setenv(suite_processes.ENV_PROCESSES, "2")
    launched: list[str] = []
    emp_done_when_amps_started: list[bool] = []

    def launch(index: int, job: Any, news: Any) -> FakePart:
        launched.append(job.suite)
        part = session.launched(index, job, news)  # type: ignore[attr-defined]
        if job.suite == "amps":
            emp_done_when_amps_started.append(amps_started.is_set())
            amps_started.set()  # emp (held back) goes on only once amps has started
        return part

    ran: list[Any] = []
    runner = threading.Thread(target=lambda: ran.append(suite_processes.run_side_by_side(session, launch)), daemon=True)
    runner.start()
    runner.join(30)  # a slot never freed leaves amps unstarted and the run waiting for it for ever
    assert ran, f"the run did not end: launched {launched}"
    outcome = ran[0]
    assert launched == ["emp", "memorizz", "amps"]
    assert emp_done_when_amps_started == [False]
    assert [r.check_id for r in outcome.results] == ["amps.a", "emp.a", "memorizz.a"]  # the report's order
