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
    live, after = out[: out.index("Failures by cause")], out[out.index("Failures by cause"):]
    assert "Reproduce with:" not in live and "curl -sS" not in live  # the run prints progress; the causes follow it
    assert out.count("Failures by cause: 1 cause for 3 checks") == 1
    assert "3 × errored: target error: POST /v1/brain/import: server error 500" in after
    assert after.count("rerun: ") == 1 and all(f"--check {c}" in after for c in SAME_CAUSE)  # once for the cause
    assert 'curl -sS -X POST' in after and '-H "Authorization: Bearer $MEMCONFORM_API_KEY"' in after
    assert after.index("Failures by cause") < after.index("Level 2 Consumer") < after.index("report: ")
    assert out.rstrip().splitlines()[-1] == f"report: {tmp_path}/report.html (report.jsonl, junit.xml, summary.md beside it)"
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


# ---- causes, not messages: one mistake in two wordings, ids and numbers masked ----------------------------

ENVELOPE_EXPECTED = '{"error": CODE, "message": "...", "details": {}}'
SCHEMA_DETAIL = ('"error" is a required property\n\nValidated against the response schema for status code 404.\n\n'
                 'Schema at /components/schemas/Error:\n\n    {\n        "required": [\n            "error"\n        ],\n'
                 '        "description": "\\u00a74: every error is {error, message, details}; messag...\n    }\n\n'
                 'Value:\n\n    {\n        "detail": "no memory"\n    }\n\n'
                 "Reproduce with: curl -X GET -H 'Authorization: [Filtered]' 'http://127.0.0.1:1/v1/memories/x'")


def _envelope_report(path: Path, extra: list[tuple[str, list[Failure]]] | None = None) -> Report:
    """memconform's words (ids differ per request), a readings table naming the rule, and schemathesis's words."""
    w = ReportWriter(path, Redactor([]))
    w.header(target="http://127.0.0.1:1", suites=["omp"], profile="ci", seed=1, options={}, command="memconform run")
    ours = [(f"omp.check_{i}", [Failure(f"GET /memories/mem_{i:04d}{'abcdefgh'[i]}Xy9: the error is not the §4 envelope",
                                        f'application/json {{"detail": "no memory with id mem_{i}"}}', ENVELOPE_EXPECTED, "$.error")])
            for i in range(6)]
    readings = [("omp.list_limit_max_100", [Failure(
        "GET /v1/memories?tags=ds-0a210c8bbe49&limit=101: limit=101 was neither served with at most 100 memories nor "
        "refused with a 4xx", "422 {\"detail\": \"limit\"}",
        {"O9 limit=101 refused": "the error is not the §4 envelope", "O9 limit=101 clamped": "not a 200 list page"},
        "$.limit")])]
    theirs = [("omp.fuzz_error_envelopes", [Failure("GET /v1/memories: Response violates schema at GET /v1/memories",
                                                    "422 {}", f"the §4 envelope {ENVELOPE_EXPECTED} with the code of the status",
                                                    "GET /v1/memories")]),
              ("omp.fuzz_stateful_crud", [Failure("GET /v1/memories/{id}: Response violates schema", "404 {}",
                                                  "each step of the sequence conforming", "GET /v1/memories/{id}",
                                                  detail=SCHEMA_DETAIL)])]
    for check_id, failures in ours + readings + theirs + (extra or []):
        w.result(_result(check_id, Outcome.FAILED, failures=failures))
    w.footer({"passed": 0, "failed": 9 + len(extra or []), "errored": 0, "skipped": 0}, [], 1, [], [])
    w.close()
    return Report.from_path(path)


def test_one_rule_in_two_wordings_with_different_ids_is_one_cause(tmp_path: Path) -> None:
    groups = group_problems(_envelope_report(tmp_path / "report.jsonl").results)
    assert [(g.label, len(g.results), g.cause) for g in groups] == [("failed", 9, "the error is not the §4 envelope")]
    assert {"omp.fuzz_error_envelopes", "omp.fuzz_stateful_crud", "omp.list_limit_max_100"} <= set(groups[0].check_ids)


def test_a_different_mistake_stays_its_own_cause(tmp_path: Path) -> None:
    tags = [("omp.list_filter_tags_and", [Failure("the tags (AND) filter returned memories that do not match",
                                                  ["a"], "only memories with every tag", "$.memories")])]
    groups = group_problems(_envelope_report(tmp_path / "report.jsonl", tags).results)
    assert sorted((len(g.results), g.cause) for g in groups) == [
        (1, "the tags (AND) filter returned memories that do not match"), (9, "the error is not the §4 envelope")]


def test_a_bare_section_joins_no_cause_when_two_rules_share_it(tmp_path: Path) -> None:
    """schemathesis's "Response violates schema" cites only "§4" in its schema: with two §4 rules in the run it
    cannot tell which, so it keeps its own words (negative control of the merge above)."""
    other = [("omp.other_rule", [Failure("GET /x: the §4 code does not match the status", "x", "y", "$.error")])]
    groups = group_problems(_envelope_report(tmp_path / "report.jsonl", other).results)
    crud = next(g for g in groups if "omp.fuzz_stateful_crud" in g.check_ids)
    assert crud.check_ids == ["omp.fuzz_stateful_crud"] and crud.cause == "Response violates schema"


def test_errors_differing_only_in_numbers_and_ids_are_one_cause(tmp_path: Path) -> None:
    w = ReportWriter(tmp_path / "report.jsonl", Redactor([]))
    w.header(target="t", suites=["memoryai"], profile="ci", seed=1, options={}, command="memconform run")
    for i, reason in enumerate(["target error: call 7 to run-4f9a2c1b77 timed out after 10.5 s",
                                "target error: call 12 to run-e0c4d2a9f1 timed out after 9.25 s",
                                "target error: connection refused"]):
        w.result(_result(f"memoryai.c{i}", Outcome.ERRORED, reason=reason))
    w.footer({"passed": 0, "failed": 0, "errored": 3, "skipped": 0}, [], 1, [], [])
    w.close()
    groups = group_problems(Report.from_path(tmp_path / "report.jsonl").results)
    assert sorted(len(g.results) for g in groups) == [1, 2]


def test_the_terminal_prints_each_cause_once_with_one_example_cut_to_the_failing_path(tmp_path: Path) -> None:
    from memconform.render.terminal import render_causes

    text = render_causes(_envelope_report(tmp_path / "report.jsonl"))
    assert text.count("× failed") == 1 and "9 × failed: the error is not the §4 envelope" in text
    assert "Schema at" not in text and '"required": [' not in text
    assert f"expected: {ENVELOPE_EXPECTED}" in text  # a string value as itself, not a JSON string of JSON


def test_a_schema_dump_is_cut_and_its_curl_line_takes_the_key_from_the_environment() -> None:
    from memconform.render.groups import cut_schema_dump

    cut = cut_schema_dump(SCHEMA_DETAIL)
    assert '"error" is a required property' in cut and '"detail": "no memory"' in cut
    assert "Schema at" not in cut and "[Filtered]" not in cut
    assert "-H \"Authorization: Bearer $MEMCONFORM_API_KEY\"" in cut


def test_spec_title_and_version_are_said_once() -> None:
    from memconform.render.common import title_with_version

    assert title_with_version("Open Memory Protocol v0.1", "0.1") == "Open Memory Protocol v0.1"
    assert title_with_version("MemoryAI Protocol", "1.0") == "MemoryAI Protocol 1.0"
