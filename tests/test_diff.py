"""`memconform diff A B`: newly failing, newly passing, changed messages, levels and readings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.core.redact import Redactor
from memconform.core.report import ReportWriter
from memconform.core.results import Failure, Outcome, Result


def _write(path: Path, outcomes: dict[str, tuple[Outcome, str]], level: str, seen: list[str]) -> Path:
    w = ReportWriter(path, Redactor([]))
    w.header(target="reference:memoryai", suites=["memoryai"], profile="ci", seed=1, options={}, command="memconform run")
    for cid, (outcome, title) in outcomes.items():
        failures = [Failure(title, 1, 2, "$.x")] if outcome is Outcome.FAILED else []
        reason = title if outcome in (Outcome.ERRORED, Outcome.SKIPPED) else ""
        w.result(Result(check_id=cid, suite="memoryai", spec="MemoryAI Protocol v1", section="§3.1", keyword="MUST",
                        level="1", sentence="s", outcome=outcome, reason=reason, failures=failures))
    lv: dict[str, Any] = {"suite": "memoryai", "level": "1", "title": "Level 1", "status": level, "verdict": f"Level 1: {level}",
                          "claimed": None, "implemented": True, "optional": False, "counts": {}, "failed": [], "why": [], "warnings": []}
    w.footer({"passed": 0, "failed": 0, "errored": 0, "skipped": 0}, [lv], 0, [],
             [{"suite": "memoryai", "point": "E1", "seen": seen, "checks": ["memoryai.a"]}])
    w.close()
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _write(tmp_path / "a.jsonl", {"memoryai.a": (Outcome.PASSED, ""), "memoryai.b": (Outcome.FAILED, "old"),
                                      "memoryai.c": (Outcome.FAILED, "same msg"), "memoryai.d": (Outcome.FAILED, "was"),
                                      "memoryai.gone": (Outcome.PASSED, "")}, "not conformant", ["utf8-literal"])
    b = _write(tmp_path / "b.jsonl", {"memoryai.a": (Outcome.FAILED, "broke"), "memoryai.b": (Outcome.PASSED, ""),
                                      "memoryai.c": (Outcome.FAILED, "same msg"), "memoryai.d": (Outcome.FAILED, "now"),
                                      "memoryai.new": (Outcome.ERRORED, "target error: x")}, "not conformant",
               ["utf8-literal", "u-escaped"])
    return a, b


def test_diff_names_every_kind_of_change(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pair
    assert main(["diff", str(a), str(b), "--json"]) == 1  # something newly fails
    d = json.loads(capsys.readouterr().out)
    assert [x["check"] for x in d["newly_failing"]] == ["memoryai.a", "memoryai.new"]
    assert d["newly_failing"][0]["message"] == "broke at $.x"
    assert [x["check"] for x in d["newly_passing"]] == ["memoryai.b"]
    assert [(x["check"], x["was"], x["now"]) for x in d["changed_messages"]] == [("memoryai.d", ["was at $.x"], ["now at $.x"])]
    assert d["changed_readings"] == [{"suite": "memoryai", "point": "E1", "a": ["utf8-literal"], "b": ["utf8-literal", "u-escaped"]}]
    assert d["only_in_a"] == ["memoryai.gone"] and d["only_in_b"] == ["memoryai.new"]
    assert d["changed_levels"] == []


def test_diff_the_other_way_is_not_a_regression_unless_something_fails_anew(pair: tuple[Path, Path],
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pair
    assert main(["diff", str(b), str(a)]) == 1  # memoryai.b fails again
    out = capsys.readouterr().out
    assert "newly failing (1):\n  memoryai.b: passed -> failed: old at $.x" in out


def test_identical_reports_have_no_difference(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = pair
    assert main(["diff", str(a), str(a)]) == 0
    assert "no difference" in capsys.readouterr().out
