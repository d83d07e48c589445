"""junit.xml no CI can misread: valid under the Jenkins xunit schema, a run without results is an error.

conftest.py also validates every junit.xml any test writes (tests/junit_schema.py); these tests
name the cases that matter: warnings, a dead target through the CLI and through pytest, a run that
ended without results, a truncated run.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junit_schema import junit_problems, schema
from memconform.cli.main import main
from memconform.render.junit import render_junit
from test_report_html import write_report

pytestmark = pytest.mark.skipif(schema() is None, reason="xmlschema not installed (pip install -e '.[dev]')")
pytest_plugins = ["pytester"]


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_schema_rejects_what_ci_tools_reject() -> None:
    # the negative control: a <properties> inside a <testcase>, as warnings were once written
    bad = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0"><testcase name="c">'
           '<properties><property name="warning" value="x"/></properties></testcase></testsuite></testsuites>')
    assert junit_problems(bad)
    assert not junit_problems(bad.replace('<properties><property name="warning" value="x"/></properties>', ""))


def test_warnings_failures_errors_and_skips_are_valid(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report.jsonl")
    text = render_junit(report)
    assert not junit_problems(text)
    root = ET.fromstring(text)
    warn = root.find(".//testcase[@name='memoryai.warns_should']")
    assert warn is not None and warn.find("properties") is None
    assert (warn.findtext("system-out") or "").startswith("WARNING")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["warnings"] == "1" and props["warning.memoryai.warns_should"] == "advisory"


def test_a_truncated_run_is_valid_and_an_error(tmp_path: Path) -> None:
    text = render_junit(write_report(tmp_path / "report.jsonl", footer=False))
    assert not junit_problems(text)
    assert ET.fromstring(text).find(".//testcase[@name='memconform.report_complete']/error") is not None


def _only_case(junit: Path) -> ET.Element:
    root = ET.parse(junit).getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == 1, [c.get("name") for c in cases]
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "1" and suite.get("errors") == "1"
    return cases[0]


def test_a_dead_target_is_one_error_testcase_not_a_green_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = f"http://127.0.0.1:{_closed_port()}"
    assert main(["run", "--suite", "memoryai", "--target", target, "--report-dir", str(tmp_path)]) == 2
    capsys.readouterr()
    assert not junit_problems((tmp_path / "junit.xml").read_text("utf-8"))
    case = _only_case(tmp_path / "junit.xml")
    error = case.find("error")
    assert case.get("name") == "memoryai.run" and error is not None
    assert "could not start" in (error.get("message") or "")


def test_a_run_that_ended_without_results_is_one_error_testcase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--suite", "memoryai", "--check", "memoryai.no_such_check", "--report-dir", str(tmp_path)])
    capsys.readouterr()
    assert code == 2
    assert not junit_problems((tmp_path / "junit.xml").read_text("utf-8"))
    error = _only_case(tmp_path / "junit.xml").find("error")
    assert error is not None and "without results" in (error.get("message") or "")


def test_pytest_with_a_dead_target_prints_one_line_and_writes_one_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    target = f"http://127.0.0.1:{_closed_port()}"
    result = pytester.runpytest_subprocess("--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider",
                                           "--mc-target", target, "--mc-report-dir", str(tmp_path / "rep"))
    assert int(result.ret) == 2
    said = [line for line in result.stdout.lines + result.stderr.lines if "memconform: error:" in line]
    assert len(said) == 1, result.stdout.str()
    assert "Traceback" not in result.stdout.str() and "CheckErrored" not in result.stdout.str()
    assert not junit_problems((tmp_path / "rep" / "junit.xml").read_text("utf-8"))
    assert _only_case(tmp_path / "rep" / "junit.xml").get("name") == "memoryai.run"
