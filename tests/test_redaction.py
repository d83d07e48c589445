"""Redaction cannot corrupt a report: secrets are replaced inside values and text, never in the
report's structure, before anything is cut to length, and in the terminal output too."""

from __future__ import annotations

import json
import string
import xml.etree.ElementTree as ET

import demo_suite
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.cli.main import main
from memconform.core.redact import HARNESS_FIELDS, Redactor
from memconform.core.report import Report, ReportWriter, report_schema
from memconform.core.results import Failure, Outcome, Result
from memconform.core.runner import redact_failure
from memconform.render.junit import render_junit
from memconform.render.markdown import render_markdown

SETTINGS = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _report_words() -> list[str]:
    """Every key of the report schema and every value of its enums: a key could be any part of them."""
    words: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            words.update(node.get("properties", {}))
            for v in node.values():
                walk(v)
            for e in node.get("enum", []) if isinstance(node.get("enum"), list) else []:
                words.add(str(e))
            if isinstance(node.get("const"), str):
                words.add(node["const"])
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(report_schema())
    return sorted(words)


WORDS = _report_words() + ["foo", "test", "type", "e", "latest", "reports", "memconform", "demo", "Bearer", "true"]
SUBSTRINGS = st.sampled_from(WORDS).flatmap(
    lambda w: st.tuples(st.integers(0, len(w) - 1), st.integers(1, len(w))).map(lambda ij: w[ij[0]:ij[0] + ij[1]]))
RANDOM_KEYS = st.text(string.ascii_letters + string.digits + "-_.:/+=*\"\\{}[],", min_size=1, max_size=40)
KEYS = st.one_of(SUBSTRINGS, st.sampled_from(WORDS), RANDOM_KEYS)


def leaks(value, key, field=None):
    """Where `key` survives in a parsed report line, outside the report's own keys and harness fields."""
    if field in HARNESS_FIELDS:
        return []
    if isinstance(value, dict):
        data = field in ("received", "expected")
        out = [f"key {k!r}" for k in value if data and key in k]
        for k, v in value.items():
            out += leaks(v, key, None if data else k)
        return out
    if isinstance(value, list):
        return [x for v in value for x in leaks(v, key, field)]
    if isinstance(value, str) and key in value:
        return [f"{field}: {value[:80]!r}"]
    return []


def planted_result(key: str) -> Result:
    failure = Failure(title=f"echoed {key}", received={key: [key, f"Bearer {key}", f"x{key}y" * 300], "n": key * 200},
                      expected=f"not {key}", path=f"$.{key}", detail=f"detail {key}", readings=(f"r-{key}",))
    result = Result(check_id="demo.items_have_ids", suite="demo", spec="Demo", section="§1", keyword="MUST", level="1",
                    sentence="s", outcome=Outcome.FAILED, reason="", transcript=[f"sent Authorization: Bearer {key}"],
                    reproduce=f"memconform run --api-key {key}")
    result.failures = [redact_failure(failure, Redactor([key]))]  # what the runner does: redact, then cut
    return result


def write_report(tmp_path, key: str | None) -> Report:
    redactor = Redactor([key] if key else [])
    plant = key or "@@PLANT@@"
    writer = ReportWriter(tmp_path / "report.jsonl", redactor)
    writer.header(target=f"http://h/?k={plant}", suites=["demo"], profile="ci", seed=1,
                  options={"demo.x": plant}, command=f"memconform run --api-key {plant}")
    writer.result(planted_result(plant))
    writer.footer({"passed": 0, "failed": 1, "errored": 0, "skipped": 0},
                  [{"suite": "demo", "level": "1", "title": "Level 1", "verdict": f"not conformant ({plant})",
                    "status": "not conformant"}], 1,
                  [{"suite": "demo", "note": f"could not remove: {plant}"}],
                  [{"suite": "demo", "point": "D1", "seen": [plant], "checks": ["demo.items_have_ids"]}])
    writer.close()
    report = Report.from_path(tmp_path / "report.jsonl")  # strict reader: every line schema-valid
    (tmp_path / "junit.xml").write_text(render_junit(report), encoding="utf-8")
    (tmp_path / "summary.md").write_text(render_markdown(report), encoding="utf-8")
    ET.fromstring((tmp_path / "junit.xml").read_bytes())
    return report


@SETTINGS
@given(key=KEYS)
def test_any_key_leaves_a_valid_report_that_does_not_hold_it(tmp_path_factory, key):
    tmp = tmp_path_factory.mktemp("r")
    report = write_report(tmp, key)
    for line in [report.header, *report.results, report.footer]:
        assert leaks(line, key) == [], (key, line)
    # where the key is not a word the harness itself writes, it appears nowhere, in no file
    base = tmp_path_factory.mktemp("b")
    write_report(base, None)
    vocabulary = "".join((base / n).read_text("utf-8").replace("@@PLANT@@", "\x00") for n in ("report.jsonl", "junit.xml", "summary.md"))
    if key not in vocabulary:
        for name in ("report.jsonl", "junit.xml", "summary.md"):
            assert key not in (tmp / name).read_text("utf-8"), (key, name)


def test_a_key_named_like_the_report_structure_changes_no_structure(tmp_path):
    for key in ("footer", "type", "foo", "test", "e", '"', "}", "passed"):
        report = write_report(tmp_path, key)
        assert report.footer is not None and report.footer["type"] == "footer"
        assert report.results[0]["outcome"] == "failed"


def test_redaction_comes_before_cutting():
    key = "sk-" + "q" * 45  # 48 characters: the old cut at 400 kept 46 of them
    text = "z" * 380 + key
    failure = redact_failure(Failure("t", received=text), Redactor([key])).to_json()
    assert "qqqq" not in json.dumps(failure)


def test_masking_never_forms_the_key_again():
    for key, text in [("a**", "aa**b"), ("***", "x***y"), ("ab", "aabb"), ("*#~%^", "**#~%^^")]:
        assert key not in Redactor([key]).text(text)


@pytest.fixture
def demo():
    demo_suite.install()
    yield
    demo_suite.uninstall()


class Echo(demo_suite.Reference):
    """A target that echoes the key back in everything it answers."""

    key = ""

    def export(self, body=None):
        k = type(self).key
        return {"items": [{"id": f"id-{k}", "text": f"Authorization: Bearer {k}", k: k, "checksum": k}]}

    def import_item(self, body=None):
        raise RuntimeError(f"crashed holding {type(self).key}")


@pytest.mark.parametrize("key", ["sk-canary-5f1e2d3c4b5a69788796a5b4c3d2e1f0", "foo", "test", "type", "e"])
def test_run_with_an_echoing_target(demo, tmp_path, capsys, monkeypatch, key):
    monkeypatch.setattr(Echo, "key", key)
    monkeypatch.setattr(demo_suite, "Echo", Echo, raising=False)
    code = main(["run", "--suite", "demo", "--target", "python:demo_suite:Echo", "--api-key", key,
                 "--report-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    report = Report.from_path(tmp_path / "report.jsonl")
    assert {r["outcome"] for r in report.results} >= {"failed", "errored"}
    for line in [report.header, *report.results, report.footer]:
        assert leaks(line, key) == [], line
    ET.fromstring((tmp_path / "junit.xml").read_bytes())
    if key.startswith("sk-"):
        for text in (out, err, *((tmp_path / n).read_text("utf-8") for n in ("report.jsonl", "junit.xml", "summary.md"))):
            assert key not in text and key[:12] not in text
