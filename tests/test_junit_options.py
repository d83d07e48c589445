"""junit.xml's properties name only the options that differ from their defaults (a CI viewer's first screen is
not every default); report.jsonl's header keeps every option as run."""

from __future__ import annotations

from pathlib import Path

from memconform.core.profile import Profile
from memconform.core.redact import Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Outcome
from memconform.core.suite import get_suite
from memconform.render.junit import render_junit
from test_report_html import _result


def test_only_options_that_differ_from_their_defaults_are_properties(tmp_path: Path) -> None:
    suite = get_suite("memoryai")
    options = Profile.named("ci").effective_options()
    ours = {k: v for k, v in options.items() if k.startswith("memoryai.")}
    changed_key, spec = next((f"memoryai.{o.name}", o) for o in suite.options if len(o.choices) > 1)
    changed_value = next(c for c in spec.choices if c != spec.default)
    ours[changed_key] = changed_value
    w = ReportWriter(tmp_path / "report.jsonl", Redactor([]))
    w.header(target="reference:memoryai", suites=["memoryai"], profile="ci", seed=1, options=ours, command="memconform run")
    w.result(_result("memoryai.passes", Outcome.PASSED))
    w.footer({"passed": 1, "failed": 0, "errored": 0, "skipped": 0}, [], 0, [], [])
    w.close()
    report = Report.from_path(tmp_path / "report.jsonl")
    xml = render_junit(report)
    assert len(ours) > 3 and xml.count('name="option.') == 1
    assert f'name="option.{changed_key}" value="{changed_value}"' in xml
    assert report.header["options"] == ours  # every option as run stays in the report
