"""What `memconform run` prints after its progress (render/terminal.py): the causes, one readings line per suite,
the notes, the verdict table last with warnings apart from failures, then the paths, report.html first;
--verbose prints every reading and every failure in full."""

from __future__ import annotations

from pathlib import Path

from memconform.core.redact import Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome
from memconform.render.terminal import render_terminal
from test_report_html import _result


def _conformant_with_a_warning(path: Path) -> Report:
    w = ReportWriter(path, Redactor([]))
    w.header(target="reference:memoryai", suites=["memoryai"], profile="ci", seed=1, options={}, command="memconform run")
    for i in range(25):
        w.result(_result(f"memoryai.passes_{i}", Outcome.PASSED))
    w.result(_result("memoryai.advice", Outcome.FAILED, keyword="SHOULD",  # in no clause: a warning
                     failures=[Failure("a checksum mismatch was not warned about", "nothing", '{"warning": "..."}', "$")]))
    level = {"suite": "memoryai", "level": "1", "title": "Level 1 Producer", "status": "conformant",
             "verdict": "Level 1 Producer: conformant (1 warning: advice)", "claimed": True, "implemented": True,
             "optional": False, "counts": {"passed": 25, "failed": 1, "errored": 0, "skipped": 0}, "failed": [],
             "why": [], "warnings": ["advice"]}
    readings = [{"suite": "memoryai", "point": f"E{i}", "seen": [f"reading {'x' * 300} {i}"], "checks": ["memoryai.passes_0"]}
                for i in range(49)]
    w.footer({"passed": 25, "failed": 1, "errored": 0, "skipped": 0}, [level], 0,
             [{"suite": "memoryai", "note": "Jepsen-style counts " + "y" * 600}], readings, warnings=1)
    w.close()
    return Report.from_path(path)


def test_a_conformant_run_with_a_warning_ends_with_its_verdicts_and_report_html(tmp_path: Path) -> None:
    text = render_terminal(_conformant_with_a_warning(tmp_path / "report.jsonl"), tmp_path)
    lines = text.rstrip().splitlines()
    assert lines[-1] == f"report: {tmp_path}/report.html (report.jsonl, junit.xml, summary.md beside it)"
    assert lines[-2] == "25 passed, 0 failed, 1 warning, 0 errored, 0 skipped"  # the warning apart, never "1 failed"
    row = next(line for line in lines if line.strip().startswith("Level 1 Producer ") and "conformant" not in line)
    assert row.split()[-5:] == ["25", "0", "1", "0", "0"]  # passed, failed, warnings, errored, skipped
    assert "Failures by cause" not in text and "Warnings by cause" in text
    assert "readings (memoryai): 49 points followed, see summary.md#readings" in text
    assert "reading (memoryai" not in text and max(len(line) for line in lines) < 400
    order = [text.index(x) for x in ("Warnings by cause", "readings (memoryai)", "Level 1 Producer: conformant", "report: ")]
    assert order == sorted(order)


def test_verbose_prints_every_reading_and_every_failure_in_full(tmp_path: Path) -> None:
    text = render_terminal(_conformant_with_a_warning(tmp_path / "report.jsonl"), tmp_path, verbose=True)
    assert text.count("reading (memoryai E") == 49 and "y" * 600 in text
    assert "memoryai.advice [" in text and 'expected: {"warning": "..."}' in text  # a string as itself
