"""A report folder is one run: the run before is kept as previous/, a run that cannot start never pushes out
the last good one, badges come only from the run beside them, and tests never write into the checkout."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from memconform import report_folder
from memconform.cli import main
from memconform.core.report import Report

ONE_CHECK = ["--check", "memoryai.envelope_format_literal"]


def _dead_target() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _run(folder: Path, capsys: pytest.CaptureFixture[str], *args: str) -> int:
    code = main(["run", "--report-dir", str(folder), *args])
    capsys.readouterr()
    return code


def _header(folder: Path) -> dict[str, object]:
    return json.loads((folder / "report.jsonl").read_text("utf-8").splitlines()[0])


def _results(folder: Path) -> list[dict[str, object]]:
    return Report.from_path(folder / "report.jsonl", allow_empty=True).results


def test_the_run_before_is_kept_as_previous_one_level_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for seed in ("1", "2", "3"):
        assert _run(tmp_path, capsys, "--suite", "memoryai", "--seed", seed, *ONE_CHECK) == 0
    assert _header(tmp_path)["seed"] == 3
    assert _header(tmp_path / "previous")["seed"] == 2
    assert not (tmp_path / "previous" / "previous").exists()
    assert not (tmp_path / report_folder.STAGING).exists()


def test_a_run_that_cannot_start_keeps_the_last_good_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, capsys, "--suite", "memoryai", "--seed", "5", *ONE_CHECK) == 0
    for _ in range(2):  # twice: the second dead run must not push the good one out either
        assert _run(tmp_path, capsys, "--suite", "memoryai", "--target", _dead_target()) == 2
        assert _results(tmp_path) == []  # the folder tells the truth about this run: it could not start
        assert _header(tmp_path / "previous")["seed"] == 5 and len(_results(tmp_path / "previous")) == 1


def test_badges_come_only_from_the_run_beside_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert {p.name.split("-")[0] for p in (tmp_path / "badges").glob("*.svg")} == {"memoryai"}
    assert _run(tmp_path, capsys, "--suite", "memoryai", "--target", _dead_target()) == 2
    badges = list((tmp_path / "badges").glob("*.svg"))
    assert badges and all("conformant" not in p.read_text("utf-8").replace("not conformant", "") for p in badges)
    assert (tmp_path / "previous" / "badges").is_dir()


def test_files_of_the_user_in_the_folder_are_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert _run(tmp_path, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert _run(tmp_path, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert (tmp_path / "notes.txt").read_text() == "mine" and not (tmp_path / "previous" / "notes.txt").exists()


def test_a_killed_run_leaves_a_folder_the_next_run_repairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, capsys, "--suite", "memoryai", "--seed", "8", *ONE_CHECK) == 0
    report_folder.begin(tmp_path)  # a run starts and is killed: partial files, the good run staged
    (tmp_path / "report.jsonl").write_text('{"type": "header"}\n')
    assert _run(tmp_path, capsys, "--suite", "memoryai", "--seed", "9", *ONE_CHECK) == 0
    assert _header(tmp_path)["seed"] == 9 and _header(tmp_path / "previous")["seed"] == 8


def test_a_run_without_report_dir_uses_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCONFORM_REPORT_DIR", str(tmp_path / "env"))
    assert main(["run", "--suite", "memoryai", *ONE_CHECK]) == 0
    assert f"report: {tmp_path / 'env' / 'report.jsonl'}" in capsys.readouterr().out
    assert (tmp_path / "env" / "junit.xml").is_file()


def test_the_test_suite_points_runs_away_from_the_checkout() -> None:
    import os

    from conftest import CHECKOUT_REPORTS

    assert not Path(os.environ["MEMCONFORM_REPORT_DIR"]).resolve().is_relative_to(CHECKOUT_REPORTS.parent.parent)
