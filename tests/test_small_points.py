"""The small things a new user meets first: a progress line that ticks, replay that refuses what it cannot
replay, `serve --port 0` naming its port, `list` as a table, counted words, a cut-off document named."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.results import Outcome, Result
from memconform.render.progress import Progress

BASE = {"suite": "memoryai", "spec": "s", "section": "§1", "level": "1", "sentence": "s", "keyword": "MUST"}


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_names_the_running_check_with_its_clock_and_an_estimate() -> None:
    said: list[str] = []
    with Progress(3, said.append, stream=io.StringIO(), live=False, heartbeat_s=0) as progress:
        progress.on_start("memoryai.first")
        progress.on_result(Result(check_id="memoryai.first", outcome=Outcome.PASSED, **BASE))
        progress.on_start("memoryai.slow")
        status = progress.status()
    assert "running memoryai.slow (0s)" in status and "left" in status and "1/3 checks" in status


def test_without_a_terminal_a_long_check_still_says_it_runs() -> None:
    said: list[str] = []
    with Progress(2, said.append, stream=io.StringIO(), live=False, heartbeat_s=0.05) as progress:
        progress.on_start("memoryai.slow")
        deadline = time.monotonic() + 5
        while not said and time.monotonic() < deadline:
            time.sleep(0.02)
    assert said and said[0].startswith("[1/2] memoryai.slow still running")


def test_on_a_terminal_the_clock_ticks_during_a_long_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream = _Tty()
    with Progress(2, lambda *a, **k: None, stream=stream) as progress:
        assert progress.live
        progress.on_start("memoryai.slow")
        deadline = time.monotonic() + 10
        while "running memoryai.slow (1s)" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.1)  # nothing calls the progress: only its own refresh redraws the line
    assert "running memoryai.slow (0s)" in stream.getvalue() and "running memoryai.slow (1s)" in stream.getvalue()


def test_a_run_tells_the_progress_which_check_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    started: list[str] = []
    monkeypatch.setattr(Progress, "on_start", lambda self, check_id: started.append(check_id))
    assert main(["run", "--suite", "memoryai", "--check", "memoryai.envelope_format_literal",
                 "--report-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert started == ["memoryai.envelope_format_literal"]


@pytest.mark.parametrize("content", ['{"hello": "world"}', "[1, 2, 3]", '"a string"'])
def test_replay_refuses_a_file_that_is_no_saved_example_or_sequence(tmp_path: Path, content: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "neither a saved sequence" in err and "nothing to replay" in err


def test_replay_still_takes_a_saved_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    valid = sorted((Path(__file__).parents[1] / "fixtures" / "memoryai" / "valid").glob("*.json"))
    case = json.loads(valid[0].read_text("utf-8"))
    doc = case["document"]
    (tmp_path / "example.json").write_text(json.dumps(doc))
    assert main(["replay", str(tmp_path / "example.json"), "--target", "reference:memoryai"]) in (0, 1)
    assert "nothing to replay" not in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["omp", "memoryai"])
def test_serve_on_port_0_prints_the_port_it_bound(spec: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "memconform.cli.main", "serve", spec, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
    assert found is not None and int(found.group(1)) > 0, first


def test_list_is_an_aligned_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, rows, total = lines[0], lines[1:-1], lines[-1]
    assert header.split()[:4] == ["check", "section", "keyword", "level"]
    starts = [header.index(word) for word in ("section", "keyword", "level", "sentence")]
    for row in rows:
        for start in starts:  # every column starts where its heading does: a space before it, text at it
            assert row[start - 2:start] == "  " and row[start] != " ", (row, start)
    assert re.fullmatch(r"\d+ checks", total)


def test_counted_words_agree_with_their_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--suite", "memoryai", "--json"]) == 0
    capsys.readouterr()
    from memconform.core.wording import plural

    assert [plural(n, "check") for n in (0, 1, 2)] == ["0 checks", "1 check", "2 checks"]
    assert main(["run", "--suite", "memoryai", "--check", "memoryai.envelope_format_literal",
                 "--report-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out + (tmp_path / "summary.md").read_text("utf-8") + (tmp_path / "report.html").read_text("utf-8")
    assert not re.search(r"\b1 (checks|warnings|failures|causes)\b", out), re.findall(r"\b1 \w+s\b", out)
    assert "1/1 check" in out or "[1/1]" in out


def test_a_cut_off_document_is_named_by_its_first_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"format": "memoryai-bundle", "version": 1,')
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "memoryai.well_formed" in out and "named by its first bytes" in out


def test_a_file_no_format_names_is_still_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"hello": "world", "n": 1,')
    assert main(["validate", str(path)]) == 2
    assert "no known format" in capsys.readouterr().err
