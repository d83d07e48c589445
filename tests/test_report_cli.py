"""`memconform report` renders any report afterwards; every run writes report.html and badges beside the others."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import demo_suite
import pytest
from memconform.cli.main import main
from memconform.core.results import Failure, Outcome, Result
from memconform.render.progress import Progress
from test_report_html import write_report


def test_report_renders_each_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_report(tmp_path / "report.jsonl")
    out = tmp_path / "out"
    code = main(["report", str(tmp_path / "report.jsonl"), "--html", str(out / "r.html"), "--md", str(out / "s.md"),
                 "--junit", str(out / "j.xml"), "--badge", str(out / "badges")])
    assert code == 0
    assert "id='verdicts'" in (out / "r.html").read_text("utf-8")
    assert "## Verdicts" in (out / "s.md").read_text("utf-8")
    ET.parse(out / "j.xml")
    assert (out / "badges" / "memoryai-1.svg").exists()


def test_report_of_a_truncated_run_says_so_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_report(tmp_path / "report.jsonl", footer=False)
    assert main(["report", str(tmp_path / "report.jsonl"), "--html", str(tmp_path / "r.html")]) == 1
    assert "truncated run" in capsys.readouterr().out
    assert "id='truncated'" in (tmp_path / "r.html").read_text("utf-8")


def test_report_without_an_output_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_report(tmp_path / "report.jsonl")
    assert main(["report", str(tmp_path / "report.jsonl")]) == 2
    assert "--html" in capsys.readouterr().err


def test_report_of_a_file_that_is_not_a_report_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.jsonl").write_text("not json\n")
    assert main(["report", str(tmp_path / "x.jsonl"), "--html", str(tmp_path / "r.html")]) == 2
    assert "not a strict JSON line" in capsys.readouterr().err


def test_a_run_writes_report_html_and_badges_beside_the_others(tmp_path: Path) -> None:
    code = main(["run", "--suite", "memoryai", "--report-dir", str(tmp_path),
                 "--check", "memoryai.envelope_format_literal", "--check", "memoryai.checksum_present_and_valid"])
    assert code in (0, 1)
    for name in ("report.jsonl", "junit.xml", "summary.md", "report.html"):
        assert (tmp_path / name).exists(), name
    assert list((tmp_path / "badges").glob("memoryai-*.svg"))
    page = (tmp_path / "report.html").read_text("utf-8")
    assert "memoryai.envelope_format_literal" in page


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _results() -> list[Result]:
    base = {"suite": "memoryai", "spec": "s", "section": "§1", "level": "1", "sentence": "s"}
    return [Result(check_id="memoryai.a", keyword="MUST", outcome=Outcome.PASSED, **base),
            Result(check_id="memoryai.b", keyword="MUST", outcome=Outcome.FAILED, failures=[Failure("x")], **base),
            Result(check_id="memoryai.c", keyword="SHOULD", outcome=Outcome.FAILED, failures=[Failure("y")], **base),
            Result(check_id="memoryai.d", keyword="MUST", outcome=Outcome.ERRORED, reason="target error", **base)]


def test_progress_on_a_terminal_is_one_live_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream, said = _Tty(), []
    with Progress(4, said.append, stream=stream) as progress:
        assert progress.live
        for r in _results():
            progress.on_result(r)
        assert progress.status().startswith("memconform: 4/4 checks, 1 failed, 1 errored, 1 warning, ")
        progress._live.refresh()
    assert said == []  # no per-check lines: the status line is redrawn in place
    assert "4/4 checks" in stream.getvalue()


def test_progress_without_a_terminal_or_under_ci_is_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    for stream in (io.StringIO(), _Tty()):
        said: list[str] = []
        with Progress(4, said.append, stream=stream) as progress:
            assert not progress.live
            for r in _results():
                progress.on_result(r)
        assert [line.rsplit(" (", 1)[0] for line in said] == [
            "[1/4] memoryai.a passed", "[2/4] memoryai.b failed", "[3/4] memoryai.c warning", "[4/4] memoryai.d errored"]
        assert stream.getvalue() == ""


class _Echo(demo_suite.Reference):
    """Echoes the key in everything it answers (as tests/test_redaction.py's Echo)."""

    key = ""

    def export(self, body: object = None) -> dict[str, object]:
        k = type(self).key
        return {"items": [{"id": f"id-{k}", "text": f"Authorization: Bearer {k} <script>x</script>", k: k, "checksum": k}]}

    def import_item(self, body: object = None) -> dict[str, object]:
        raise RuntimeError(f"crashed holding {type(self).key}")


def test_the_key_appears_in_no_rendering(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-canary-5f1e2d3c4b5a69788796a5b4c3d2e1f0"
    monkeypatch.setattr(_Echo, "key", key)
    monkeypatch.setattr(demo_suite, "EchoForRenders", _Echo, raising=False)
    demo_suite.install()
    try:
        code = main(["run", "--suite", "demo", "--target", "python:demo_suite:EchoForRenders", "--api-key", key,
                     "--report-dir", str(tmp_path)])
    finally:
        demo_suite.uninstall()
    out, err = capsys.readouterr()
    assert code == 1
    rendered = [tmp_path / n for n in ("report.html", "junit.xml", "summary.md")] + list((tmp_path / "badges").glob("*.svg"))
    assert len(rendered) > 3
    for text in (out, err, *(p.read_text("utf-8") for p in rendered)):
        assert key not in text and key[:12] not in text
    assert "&lt;script&gt;x&lt;/script&gt;" in (tmp_path / "report.html").read_text("utf-8")


def test_a_report_cut_off_mid_line_renders_as_truncated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_report(tmp_path / "report.jsonl", footer=False)
    path = tmp_path / "report.jsonl"
    path.write_text(path.read_text("utf-8") + '{"type": "result", "check_id": "memoryai.x", "sui', encoding="utf-8")
    assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 1
    assert "cut off mid-write" in capsys.readouterr().out
    assert "id='truncated'" in (tmp_path / "r.html").read_text("utf-8")
    path.write_text(path.read_text("utf-8") + "\n", encoding="utf-8")  # a whole bad line is not a cut-off write
    assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 2
