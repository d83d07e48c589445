"""Failures grouped by cause (terminal, summary.md, report.html), curl lines for HTTP failures, exchanges.har."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.redact import Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome
from memconform.render.groups import clip, group_problems
from memconform.render.html import render_html
from memconform.render.markdown import render_markdown
from test_report_html import _result

CRASH = "target error: POST /v1/brain/import: server error 500: b'Internal Server Error'"
KEY = "canary-key-5b1e07"
SAME_CAUSE = ["memoryai.rejects_newer_version", "memoryai.reimport_inserts_nothing", "memoryai.existing_row_preserved"]


def _crash_report(path: Path) -> Report:
    w = ReportWriter(path, Redactor([]))
    w.header(target="http://127.0.0.1:1", suites=["memoryai"], profile="ci", seed=1, options={}, command="memconform run")
    for i in range(22):
        w.result(_result(f"memoryai.crash_{i}", Outcome.ERRORED, reason=CRASH))
    w.result(_result("memoryai.fails_once", Outcome.FAILED, failures=[Failure("wrong format", "x", "y", "$.format")]))
    w.footer({"passed": 0, "failed": 1, "errored": 22, "skipped": 0}, [], 1, [], [])
    w.close()
    return Report.from_path(path)


def test_identical_causes_make_one_group_with_every_check(tmp_path: Path) -> None:
    groups = group_problems(_crash_report(tmp_path / "report.jsonl").results)
    assert [(g.label, len(g.results)) for g in groups] == [("failed", 1), ("errored", 22)]
    assert groups[1].check_ids == [f"memoryai.crash_{i}" for i in range(22)]


def test_summary_md_prints_each_cause_once_with_its_count(tmp_path: Path) -> None:
    md = render_markdown(_crash_report(tmp_path / "report.jsonl"))
    assert "(23 checks, 2 causes)" in md
    assert md.count("Reproduce with:") == 2 and "**errored ×22**" in md
    assert "`memoryai.crash_21`" in md


def test_report_html_draws_one_card_per_cause_and_keeps_each_check_linkable(tmp_path: Path) -> None:
    page = render_html(_crash_report(tmp_path / "report.jsonl"))
    assert page.count("class='failure") == 2 and "×22" in page
    for i in range(22):  # the table's links to #fail-<check> still land on the card
        assert f"id='fail-memoryai.crash_{i}'" in page


def test_a_verdict_reason_is_cut_at_a_word_never_mid_word() -> None:
    text = "word " * 60
    cut = clip(text, 42)
    assert cut.endswith(" …") and cut[:-2].split(" ")[-1] == "word"


@pytest.fixture
def crashing_server() -> object:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.mutants import CrashesOnImport
    from memconform.suites.memoryai.reference.http_app import make_app

    url, stop = serve_in_thread(make_app(CrashesOnImport()))
    yield url
    stop()


def test_terminal_curl_lines_and_har_of_an_http_run(crashing_server: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    checks = [a for c in SAME_CAUSE for a in ("--check", c)]
    code = main(["run", "--suite", "memoryai", "--target", crashing_server, "--api-key", KEY,
                 "--report-dir", str(tmp_path), *checks])
    out, err = capsys.readouterr()
    assert code in (1, 2)
    live = out[: out.index("Failures by cause")]
    assert live.count("Reproduce with:") == 1  # the cause's block once, then one line per further check
    assert live.count("the same cause as memoryai.rejects_newer_version") == 2
    assert "3 × errored: target error: POST /v1/brain/import: server error 500" in out
    assert 'curl -sS -X POST' in out and '-H "Authorization: Bearer $MEMCONFORM_API_KEY"' in out
    report = Report.from_path(tmp_path / "report.jsonl")
    assert all(r["curl"] for r in report.results if r["outcome"] == "errored")
    har = json.loads((tmp_path / "exchanges.har").read_text("utf-8"))["log"]
    assert har["version"] == "1.2" and har["entries"]
    assert {e["comment"] for e in har["entries"]} <= {*SAME_CAUSE, "(start-up: before any check)"}
    assert any(e["response"]["status"] == 500 for e in har["entries"])
    auth = [h["value"] for e in har["entries"] for h in e["request"]["headers"] if h["name"].lower() == "authorization"]
    assert auth and set(auth) == {"[REDACTED]"}
    for name in ("exchanges.har", "report.jsonl", "summary.md", "report.html", "junit.xml"):
        assert KEY not in (tmp_path / name).read_text("utf-8"), name
    assert KEY not in out + err


def test_no_har_for_a_target_that_is_not_http(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "memoryai", "--check", "memoryai.envelope_format_literal",
                 "--report-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert not (tmp_path / "exchanges.har").exists()
