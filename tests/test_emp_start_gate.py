"""Start gates (harness/targets/gate.py): `cmd:` calls whose commands exec together, and the EMP
missing-file race judged with them (emp.writer_missing_file_contention), by counts."""

from __future__ import annotations

import shlex
import sys
import threading
import time
from pathlib import Path

import pytest
from memconform.core.profile import Limits, Profile
from memconform.run.session import execute_run
from memconform.targets.command import CommandTarget
from memconform.targets.gate import StartGate
from memconform.targets.pyobj import PythonTarget

HERE = Path(__file__).resolve().parent
READY_BOUND_S = 60.0  # how long the test waits for the commands to reach the gate; no verdict depends on it


def marking_target(marks: Path) -> CommandTarget:
    """Each call's command leaves one file in `marks` (a name of its own) and replies nothing."""
    script = 'mktemp "$1/m-XXXXXXXX" > /dev/null; : > "$2"'  # $$ repeats across PID namespaces
    return CommandTarget(f"/bin/sh -c {shlex.quote(script)} sh {shlex.quote(str(marks))} {{output}}", Limits())


def test_no_gated_command_runs_before_the_gate_opens_and_all_run_after(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    target = marking_target(marks)
    replies: list[str] = []

    def app(gate: StartGate) -> None:
        with gate.entered():
            replies.append(target.call("append", {}).status)

    with StartGate(3) as gate:
        threads = [threading.Thread(target=app, args=(gate,), daemon=True) for _ in range(3)]
        for t in threads:
            t.start()
        bound = time.monotonic() + READY_BOUND_S
        while gate.ready() < 3 and time.monotonic() < bound:
            time.sleep(0.01)
        assert gate.ready() == 3
        assert sorted(p.name for p in marks.iterdir()) == []  # forked, waiting: none has exec'd
        gate.open()
        for t in threads:
            t.join(READY_BOUND_S)
        folder = gate.folder
    assert replies == ["ok"] * 3
    assert len(list(marks.iterdir())) == 3
    assert not folder.exists()


def test_a_call_outside_the_gate_and_a_closed_gate_hold_nothing(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    target = marking_target(marks)
    assert target.call("append", {}).status == "ok"  # no gate entered: runs at once
    with StartGate(2) as gate:  # expects two, gets one, is never opened: closing it lets the call through
        done: list[str] = []
        thread = threading.Thread(target=lambda: done.append(_gated_call(target, gate)), daemon=True)
        thread.start()
        bound = time.monotonic() + READY_BOUND_S
        while gate.ready() < 1 and time.monotonic() < bound:
            time.sleep(0.01)
    thread.join(READY_BOUND_S)
    assert done == ["ok"]
    assert len(list(marks.iterdir())) == 2


def _gated_call(target: CommandTarget, gate: StartGate) -> str:
    with gate.entered():
        return target.call("append", {}).status


def test_only_targets_that_start_processes_get_a_gate() -> None:
    assert StartGate.for_target(PythonTarget.__new__(PythonTarget), 8) is None
    gate = StartGate.for_target(CommandTarget("/bin/true {output}", Limits()), 8)
    assert gate is not None
    gate.close()


def race(app: str) -> object:
    target = f"cmd:{shlex.quote(sys.executable)} {app} {{op}} {{input}} {{output}}"
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None,
                          check_ids=["emp.writer_missing_file_contention"])
    return outcome.results[0]


@pytest.mark.mutants
def test_a_check_then_create_initialiser_loses_a_first_entry_by_count() -> None:
    """The app looks for memory.jsonl at start-up and creates it empty later (as the public SDK's
    initialise): apps started together truncate one another's first entries; the counts say so."""
    result = race(str(HERE / "emp_startup_race_app.py"))
    assert result.outcome.value == "failed", (result.reason, result.transcript)
    assert result.failures[0].title.endswith("apps starting on a missing file lost or damaged a first entry")
    assert result.failures[0].received["counts"]["lost"] >= 1


@pytest.mark.mutants
def test_the_reference_as_commands_started_together_loses_nothing() -> None:
    result = race("-m memconform.suites.emp.reference")
    assert result.outcome.value == "passed", (result.reason, [f.title for f in result.failures])
    assert any("8 apps on a missing file" in str(line) and "'lost': 0" in str(line) for line in result.transcript)
    assert any("8 of 8 started together at a start gate" in str(line) for line in result.transcript)


def test_a_call_that_never_reaches_the_gate_is_not_waited_for(tmp_path: Path) -> None:
    """A call refused before any process starts (a spent budget) leaves the gate: the others are let through
    at once, not after the gate's wait bound."""
    marks = tmp_path / "marks"
    marks.mkdir()
    target = marking_target(marks)
    replies: list[str] = []

    def refused(gate: StartGate) -> None:
        with gate.entered():
            pass  # the call errored before its supervisor was started

    with StartGate(3, wait_s=600.0) as gate:
        threads = [threading.Thread(target=lambda: replies.append(_gated_call(target, gate)), daemon=True) for _ in range(2)]
        threads.append(threading.Thread(target=refused, args=(gate,), daemon=True))
        for t in threads:
            t.start()
        started = time.monotonic()
        assert gate.open_when_ready() == 2
        assert time.monotonic() - started < 300  # far below the 600 s bound: not a timing verdict, a hang guard
        for t in threads:
            t.join(READY_BOUND_S)
    assert replies == ["ok", "ok"]
