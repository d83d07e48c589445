"""One Session for every door: the pytest plugin and `memconform run` give the same verdicts, exit
codes and report files (timings and the command line aside) for the same target and seed."""

from __future__ import annotations

import json
import re

import demo_suite
import memconform.run.session  # noqa: F401  (imported before pytester's in-process runs snapshot sys.modules)
import memconform.targets.http  # noqa: F401
import memconform.targets.pyobj  # noqa: F401
import pytest
from memconform.cli.main import main
from memconform.core.report import DuplicateResult, EmptyReport, MissingFooter, Report

pytest_plugins = ["pytester"]

TEST_MODULE = """
import demo_suite
from memconform.cli.plugin import suite_tests

test_check = suite_tests("demo")
"""


@pytest.fixture(autouse=True)
def demo():
    demo_suite.install()
    yield
    demo_suite.uninstall()


def _comparable_jsonl(path):
    lines = []
    for text in path.read_text("utf-8").splitlines():
        line = json.loads(text)
        for key in ("started_at", "finished_at", "command", "duration_s", "chain"):  # the chain covers the times
            line.pop(key, None)
        lines.append(line)
    return lines


def _comparable_text(path):
    text = path.read_text("utf-8")
    text = re.sub(r'time="[0-9.]+"', 'time=""', text)
    return re.sub(r"- command: `[^`]*`", "- command: ``", text)


@pytest.mark.parametrize("impl", ["Reference", "NoChecksum", "NoHint", "RefusesEverything", "EmptyExportOnly"])
def test_plugin_and_cli_agree(pytester, tmp_path, capsys, impl):
    target = f"python:demo_suite:{impl}"
    cli_dir, plugin_dir = tmp_path / "cli", tmp_path / "plugin"
    cli_code = main(["run", "--suite", "demo", "--target", target, "--seed", "7", "--report-dir", str(cli_dir)])
    cli_out = capsys.readouterr().out
    pytester.makepyfile(test_demo=TEST_MODULE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-q", "--mc-target", target, "--mc-seed", "7",
                                "--mc-report-dir", str(plugin_dir))
    assert int(result.ret) == cli_code
    for name in ("report.jsonl", "junit.xml", "summary.md"):
        assert (plugin_dir / name).exists(), name
    assert _comparable_jsonl(plugin_dir / "report.jsonl") == _comparable_jsonl(cli_dir / "report.jsonl")
    assert _comparable_text(plugin_dir / "junit.xml") == _comparable_text(cli_dir / "junit.xml")
    assert _comparable_text(plugin_dir / "summary.md") == _comparable_text(cli_dir / "summary.md")
    # the terminal verdict lines are the same records, whichever door
    report = Report.from_path(cli_dir / "report.jsonl")
    for level in report.footer["levels"]:
        assert level["verdict"] in cli_out
        result.stdout.fnmatch_lines([f"*{level['verdict']}*"])


def test_plugin_header_shows_the_seed_used_and_warnings_do_not_fail(pytester):
    pytester.makepyfile(test_demo=TEST_MODULE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rx", "--mc-target", "python:demo_suite:NoHint",
                                "--mc-profile", "default")
    seed = re.search(r"memconform: target \S+, profile default, seed (\d+)", result.stdout.str())
    assert seed, result.stdout.str()
    assert int(result.ret) == 0
    result.assert_outcomes(passed=5, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*warning*has_hint*"])
    strict = pytester.runpytest("-p", "no:cacheprovider", "--mc-target", "python:demo_suite:NoHint", "--mc-profile", "strict")
    strict.assert_outcomes(passed=5, failed=1)
    assert int(strict.ret) == 1


def test_plugin_runs_the_target_preflight(pytester):
    pytester.makepyfile(test_demo=TEST_MODULE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mc-target", "http://127.0.0.1:9")
    assert int(result.ret) == 2  # a dead target: one line, the run ends, as the CLI's exit 2
    assert sum("memconform: error:" in line for line in result.stdout.lines) == 1, result.stdout.str()


def test_junit_testcase_names_are_check_ids(tmp_path, capsys):
    main(["run", "--suite", "demo", "--target", "python:demo_suite:Reference", "--report-dir", str(tmp_path)])
    names = re.findall(r'<testcase classname="[^"]+" name="([^"]+)"', (tmp_path / "junit.xml").read_text())
    assert names == [f"demo.{fn.__name__}" for fn, _, _ in demo_suite.CHECKS]


def _line(**fields):
    return json.dumps(fields)


HEADER = _line(type="header", report_version=1, harness_version="x", started_at="t", target="t", suites=["demo"],
               profile="ci", seed=1, options={}, command="c")
RESULT = _line(type="result", check_id="demo.a", suite="demo", spec="s", section="1", keyword="MUST", level="1",
               sentence="s", outcome="passed", reason="", failures=[], duration_s=0, reproduce="")
FOOTER = _line(type="footer", finished_at="t", counts={"passed": 1, "failed": 0, "errored": 0, "skipped": 0},
               levels=[], exit_code=0)


def test_report_reader_names_what_is_wrong():
    assert len(Report.from_lines([HEADER, RESULT, FOOTER]).results) == 1
    with pytest.raises(MissingFooter):
        Report.from_lines([HEADER, RESULT])
    with pytest.raises(EmptyReport):
        Report.from_lines([])
    with pytest.raises(EmptyReport):
        Report.from_lines([HEADER, FOOTER])
    with pytest.raises(DuplicateResult):
        Report.from_lines([HEADER, RESULT, RESULT, FOOTER])
    assert Report.from_lines([HEADER, RESULT], allow_truncated=True).truncated


def test_a_target_failing_its_start_up_check_still_completes_the_report(tmp_path, capsys):
    code = main(["run", "--suite", "demo", "--target", "http://127.0.0.1:9", "--report-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("memconform: error:")
    report = Report.from_path(tmp_path / "report.jsonl", allow_empty=True)
    assert report.footer["exit_code"] == 2
    assert report.footer["notes"][0]["note"].startswith("could not start:")
    assert (tmp_path / "junit.xml").exists() and (tmp_path / "summary.md").exists()


def test_a_target_error_in_a_suite_preflight_is_one_harness_line(tmp_path, capsys, monkeypatch):
    from memconform.core.results import TargetError

    def preflight(ctx):
        raise TargetError("timed out after 10 s")

    monkeypatch.setattr(demo_suite.SUITE, "preflight", preflight)
    code = main(["run", "--suite", "demo", "--target", "python:demo_suite:Reference", "--report-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == "memconform: error: demo: the target failed the start-up check: timed out after 10 s"
