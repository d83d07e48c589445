"""The four outcomes, the report stream and redaction."""

from __future__ import annotations

import json

import pytest
from memconform.core.check import Check
from memconform.core.profile import Profile
from memconform.core.redact import Redactor
from memconform.core.report import (
    Report,
    ReportWriter,
    read_report,
    validate_line,
)
from memconform.core.results import Failure, Keyword, Outcome, SkipCheck, TargetError
from memconform.core.runner import Context, level_verdicts, run_one
from memconform.core.suite import Level, SuiteSpec
from memconform.render.junit import render_junit
from memconform.render.markdown import render_markdown

SUITE = SuiteSpec(name="demo", spec_title="Demo", version="1", levels=[Level("1", "Level 1"), Level("2", "Level 2", requires=("1",))])


def make(fn, keyword="MUST", level="1"):
    return Check(id=f"demo.{fn.__name__}", suite="demo", spec="Demo", section="§1", keyword=Keyword(keyword),
                 level=level, sentence="s", kind="target", fn=fn)


def ctx():
    return Context(suite=SUITE, target=None, profile=Profile.named("ci"))


def passes(c):
    return iter(())


def fails(c):
    yield Failure("broke it", 1, 2, "$.x")


def target_dies(c):
    raise TargetError("connection refused")
    yield


def harness_bug(c):
    return 1 / 0


def not_claimed(c):
    raise SkipCheck("feature not claimed", not_applicable=True)


def yields_junk(c):
    yield "not a failure"


@pytest.mark.parametrize("fn,outcome", [
    (passes, Outcome.PASSED), (fails, Outcome.FAILED), (target_dies, Outcome.ERRORED),
    (harness_bug, Outcome.ERRORED), (not_claimed, Outcome.SKIPPED), (yields_junk, Outcome.ERRORED),
])
def test_every_path_maps_to_one_outcome(fn, outcome):
    result = run_one(make(fn), ctx())
    assert result.outcome is outcome
    if outcome in (Outcome.ERRORED, Outcome.SKIPPED):
        assert result.reason
    if fn is harness_bug:
        assert "harness error: ZeroDivisionError" in result.reason


def test_level_verdicts_need_prerequisites():
    results = [run_one(make(fails, level="1"), ctx()), run_one(make(passes, level="2"), ctx())]
    one, two = level_verdicts(SUITE, results)
    assert one.line() == "Level 1: not conformant (1 failed check: fails)"
    assert two.conformant is False


def test_should_failure_blocks_only_under_strict():
    lenient = run_one(make(fails, keyword="SHOULD"), ctx())
    strict_ctx = ctx()
    strict_ctx.profile = Profile.named("strict")
    strict = run_one(make(fails, keyword="SHOULD"), strict_ctx)
    assert not lenient.blocking and strict.blocking


def test_report_stream_validates_and_renders(tmp_path):
    writer = ReportWriter(tmp_path / "r.jsonl", Redactor(["topsecret"]))
    writer.header(target="http://x?key=topsecret", suites=["demo"], profile="ci", seed=1, options={}, command="c")
    for fn in (passes, fails, target_dies):
        writer.result(run_one(make(fn), ctx()))
    writer.footer({"passed": 1, "failed": 1, "errored": 1, "skipped": 0}, [], 1)
    writer.close()
    text = (tmp_path / "r.jsonl").read_text()
    assert "topsecret" not in text and "***" in text
    report = Report.from_path(tmp_path / "r.jsonl")
    assert len(report.results) == 3 and report.footer["exit_code"] == 1
    junit = render_junit(report)
    assert 'failures="1"' in junit and 'errors="1"' in junit
    assert "Reproduce with" in render_markdown(report)


def test_report_schema_refuses_a_pass_with_failures():
    line = run_one(make(fails), ctx()).to_json()
    line["outcome"] = "passed"
    # by name: a pytester run earlier in the same process may have re-imported jsonschema (another class object)
    with pytest.raises(Exception) as refused:
        validate_line(line)
    assert type(refused.value).__name__ == "ValidationError"


def test_truncated_stream_is_said(tmp_path):
    writer = ReportWriter(tmp_path / "r.jsonl", Redactor())
    writer.header(target="t", suites=["demo"], profile="ci", seed=1, options={}, command="c")
    writer.close()
    header, results, footer = read_report(tmp_path / "r.jsonl")
    assert footer is None and "Truncated run" in render_markdown(Report(header, results, footer))


def test_redactor_masks_bearer_tokens_and_secrets():
    r = Redactor(["abc123"])
    assert r.text("Authorization: Bearer zzz and abc123") == "Authorization: Bearer *** and ***"
    assert json.dumps(r.deep({"k": ["abc123"]})) == '{"k": ["***"]}'
