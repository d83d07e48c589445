"""A reading is shown as followed only when no failure of the same point contradicts it (issue 35, "What to
build" 3): a check that met the point in the run and failed (a warning too) turns the reading into
"contradicted by <check>" in the terminal, summary.md and report.html, while report.jsonl keeps what was
seen. The demo suite (tests/demo_suite.py) runs with four checks of its own here, through `memconform run`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import demo_suite
import pytest
from memconform.cli.main import main
from memconform.core.readings import contradictions
from memconform.core.report import Report, render_summary
from memconform.core.results import Failure


def lock_wait_recorded(ctx: Any) -> Iterator[Failure]:
    """Sees the target wait for the lock (D6) and passes: the reading another check will contradict."""
    ctx.observe("D6", {"waits for the lock": True, "gives up": False})
    yield from ()


def lock_wait_judged_again(ctx: Any) -> Iterator[Failure]:
    """Meets D6 too, but the answer fits no reading: the check fails (it records no reading of its own)."""
    seen = ctx.observe("D6", {"waits for the lock": False, "gives up": False}, "wrote at once")
    if seen.failure:
        yield seen.failure


def tie_seen_then_failed(ctx: Any) -> Iterator[Failure]:
    """Records a reading of D7 itself and fails for what it saw next (the EMP lock-wait case of last stop)."""
    ctx.observe("D7", {"later line wins": True})
    yield Failure("the app wrote while another app held the lock", "written", "nothing written")


def clean_point(ctx: Any) -> Iterator[Failure]:
    """The positive control: D8 seen by a passing check, met by no failing one, stays followed."""
    ctx.observe("D8", {"kept as sent": True})
    yield from ()


EXTRA = [(lock_wait_recorded, "MUST", "2"), (lock_wait_judged_again, "MUST", "2"),
         (tie_seen_then_failed, "SHOULD", "1"), (clean_point, "MUST", "1")]


@pytest.fixture
def ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, str]:
    demo_suite.install(EXTRA)
    try:
        folder = tmp_path / "out"
        args = ["run", "--suite", "demo", "--target", "python:demo_suite:Reference", "--seed", "1", "--report-dir", str(folder)]
        code = main(args)
        terminal = capsys.readouterr().out
        assert code == 1  # two checks fail
        main([*args[:-1], str(tmp_path / "verbose"), "--verbose"])
        verbose = capsys.readouterr().out
    finally:
        demo_suite.uninstall()
    return folder, terminal, verbose


def test_report_jsonl_keeps_what_was_seen_and_who_met_the_point(ran: tuple[Path, str, str]) -> None:
    folder = ran[0]
    report = Report.from_path(folder / "report.jsonl")
    readings = {x["point"]: x for x in (report.footer or {})["readings"]}
    assert readings["D6"]["seen"] == ["waits for the lock"] and readings["D6"]["checks"] == ["demo.lock_wait_recorded"]
    assert readings["D6"]["met"] == ["demo.lock_wait_judged_again"]  # met the point, no reading fitting
    assert readings["D7"]["seen"] == ["later line wins"] and "met" not in readings["D7"]
    assert readings["D1"]["seen"] == ["text-kept"]  # the demo suite's own reading, by a passing check
    assert contradictions(report.footer["readings"], report.results) == {  # type: ignore[index]
        ("demo", "D6"): ["demo.lock_wait_judged_again"], ("demo", "D7"): ["demo.tie_seen_then_failed"]}


def test_the_terminal_counts_a_contradicted_reading_apart(ran: tuple[Path, str, str]) -> None:
    _, terminal, verbose = ran
    line = next(x for x in terminal.splitlines() if x.startswith("readings (demo)"))
    assert line.startswith("readings (demo): 2 points followed, 2 contradicted by a failure of the same point (")
    assert "D6: contradicted by demo.lock_wait_judged_again" in line and "D7: contradicted by demo.tie_seen_then_failed" in line
    assert "later line wins" not in terminal  # D6's reading names stay in its failure's expectation only
    assert "reading (demo D6): contradicted by demo.lock_wait_judged_again" in verbose
    assert "reading (demo D7): contradicted by demo.tie_seen_then_failed" in verbose
    assert "reading (demo D8): seen kept as sent" in verbose and "reading (demo D1): seen text-kept" in verbose
    assert "seen waits for the lock" not in verbose and "later line wins" not in verbose


def test_summary_md_and_report_html_withhold_it(ran: tuple[Path, str, str]) -> None:
    folder = ran[0]
    summary = (folder / "summary.md").read_text("utf-8")
    assert "2 points contradicted by a failure of a check that met the same point" in summary
    assert r"| demo | D6 | contradicted by demo.lock\_wait\_judged\_again (failed) | demo.lock\_wait\_recorded |" in summary
    assert r"| demo | D7 | contradicted by demo.tie\_seen\_then\_failed (failed) | demo.tie\_seen\_then\_failed |" in summary
    assert r"| demo | D8 | kept as sent | demo.clean\_point |" in summary
    section = summary[summary.index("## Readings"):]
    assert "waits for the lock" not in section and "later line wins" not in summary
    page = (folder / "report.html").read_text("utf-8")
    assert "<td>D6</td><td><span class='st o-failed'>contradicted by demo.lock_wait_judged_again (failed)</span></td>" in page
    assert "<td>D7</td><td><span class='st o-failed'>contradicted by demo.tie_seen_then_failed (failed)</span></td>" in page
    assert "<td>D8</td><td>kept as sent</td>" in page
    assert "waits for the lock" not in page[page.index("id='readings'"):] and "later line wins" not in page
    plain = render_summary(Report.from_path(folder / "report.jsonl"))  # the older one-screen summary
    assert "reading (demo D6): contradicted by demo.lock_wait_judged_again" in plain
    assert "reading (demo D8): seen kept as sent" in plain and "seen waits for the lock" not in plain


def test_a_failure_of_another_point_or_suite_contradicts_nothing() -> None:
    readings = [{"suite": "emp", "point": "E6", "seen": ["waits for the lock"], "checks": ["emp.a"], "met": ["emp.b"]}]

    def result(suite: str, check: str, outcome: str, **more: Any) -> dict[str, Any]:
        return {"suite": suite, "check_id": check, "outcome": outcome, **more}

    assert contradictions(readings, [result("emp", "emp.c", "failed"), result("emp", "emp.b", "errored"),
                                     result("amps", "emp.a", "failed"), result("emp", "emp.a", "passed")]) == {}
    assert contradictions(readings, [result("emp", "emp.b", "failed", warning=True)]) == {("emp", "E6"): ["emp.b"]}
    assert json.dumps(readings)  # the entries stay plain JSON, as the footer writes them


def test_a_point_judged_through_a_table_is_met_whichever_reading_the_answer_fits() -> None:
    """ReadingTable.judge (the EMP and AMPS checks' way to a point) records the point as met, as observe does,
    so a failure of the check contradicts the point's readings however the check asked the table."""
    from memconform.core.readings import Reading, ReadingTable

    class Ctx:
        def __init__(self) -> None:
            self.met_points: list[str] = []
            self.seen: list[tuple[str, str]] = []

        def met(self, point: str) -> None:
            self.met_points.append(point)

        def reading(self, point: str, name: str) -> None:
            self.seen.append((point, name))

    table = ReadingTable([Reading("X1", "yes", meets=lambda r: r == "ask", predicts=lambda r, a: a is True),
                          Reading("X1", "no", meets=lambda r: r == "ask", predicts=lambda r, a: a is False)])
    fits, fits_none, other = Ctx(), Ctx(), Ctx()
    assert table.judge(fits, "X1", "ask", True, {}).failure is None
    assert table.judge(fits_none, "X1", "ask", "maybe", {}).failure is not None
    table.judge(other, "X1", "something else", True, {})
    assert (fits.met_points, fits.seen) == (["X1"], [("X1", "yes")])
    assert (fits_none.met_points, fits_none.seen) == (["X1"], [])
    assert other.met_points == []  # a request that does not meet the point meets nothing
