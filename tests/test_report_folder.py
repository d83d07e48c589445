"""A report folder is one run: the run before is kept as previous/, a run that cannot start never pushes out
the last good one, badges come only from the run beside them, and tests never write into the checkout."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.report import Report
from memconform.run import report_folder

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


def _rep(tmp_path: Path) -> Path:
    return tmp_path / "rep"


def _nothing_beside(tmp_path: Path) -> None:
    """No fresh folder of a run is left beside the report folder once the run ended."""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def _badges_are_of(folder: Path, tmp_path: Path) -> None:
    """The badges in `folder` are exactly those its own report.jsonl renders."""
    from memconform.render.badge import write_badges

    fresh = tmp_path / "rendered-again"
    shutil.rmtree(fresh, ignore_errors=True)
    write_badges(fresh, Report.from_path(folder / "report.jsonl", allow_truncated=True, allow_empty=True))
    expected = {p.name: p.read_bytes() for p in fresh.iterdir()}
    shutil.rmtree(fresh)
    assert {p.name: p.read_bytes() for p in (folder / "badges").iterdir()} == expected


def test_the_run_before_is_kept_as_previous_one_level_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for seed in ("1", "2", "3"):
        assert _run(_rep(tmp_path), capsys, "--suite", "memoryai", "--seed", seed, *ONE_CHECK) == 0
    assert _header(_rep(tmp_path))["seed"] == 3
    assert _header(_rep(tmp_path) / "previous")["seed"] == 2
    assert not (_rep(tmp_path) / "previous" / "previous").exists()
    _nothing_beside(tmp_path)


def test_a_run_that_cannot_start_writes_nothing_over_the_last_good_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rep = _rep(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "4", *ONE_CHECK) == 0
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "5", *ONE_CHECK) == 0
    before = {p.relative_to(rep): p.read_bytes() for p in rep.rglob("*") if p.is_file()}
    for _ in range(2):  # twice: the second dead run must not push the good one out either
        assert main(["run", "--report-dir", str(rep), "--suite", "memoryai", "--target", _dead_target()]) == 2
        assert f"report of this run: {rep / report_folder.NOT_STARTED}" in capsys.readouterr().out
        after = {p.relative_to(rep): p.read_bytes() for p in rep.rglob("*") if p.is_file()
                 if not p.relative_to(rep).parts[0] == report_folder.NOT_STARTED}
        assert after == before  # the last good run, its badges and its previous/ byte for byte
        assert _results(rep / report_folder.NOT_STARTED) == []  # beside it, the truth about the dead run
        assert 'type="no results"' in (rep / report_folder.NOT_STARTED / "junit.xml").read_text("utf-8")
    _nothing_beside(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "6", *ONE_CHECK) == 0  # the next good run
    assert _header(rep / "previous")["seed"] == 5 and not (rep / report_folder.NOT_STARTED).exists()


def test_a_run_that_cannot_start_into_a_folder_without_a_good_run_is_in_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh CI checkout: the folder's junit.xml must say the run could not start."""
    rep = _rep(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", "--target", _dead_target()) == 2
    assert _results(rep) == [] and 'type="no results"' in (rep / "junit.xml").read_text("utf-8")
    assert not (rep / report_folder.NOT_STARTED).exists()
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "7", *ONE_CHECK) == 0
    assert not (rep / "previous").exists()  # a run without results is nobody's previous run
    _nothing_beside(tmp_path)


def test_badges_come_only_from_the_run_beside_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rep = _rep(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert {p.name.split("-")[0] for p in (rep / "badges").glob("*.svg")} == {"memoryai"}
    assert _run(rep, capsys, "--suite", "amps", "--check", "amps.schema_valid") == 0
    assert _run(rep, capsys, "--suite", "memoryai", "--target", _dead_target()) == 2
    for folder in (rep, rep / "previous", rep / report_folder.NOT_STARTED):
        _badges_are_of(folder, tmp_path)
    assert {p.name.split("-")[0] for p in (rep / "badges").glob("*.svg")} == {"amps"}


def test_files_of_the_user_in_the_folder_are_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rep = _rep(tmp_path)
    rep.mkdir()
    (rep / "notes.txt").write_text("mine")
    (rep / "mine").mkdir()
    (rep / "mine" / "data.json").write_text("{}")
    assert _run(rep, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert _run(rep, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert _run(rep, capsys, "--suite", "memoryai", "--target", _dead_target()) == 2
    assert (rep / "notes.txt").read_text() == "mine" and (rep / "mine" / "data.json").read_text() == "{}"
    assert not (rep / "previous" / "notes.txt").exists() and not (rep / "previous" / "mine").exists()
    _nothing_beside(tmp_path)


@pytest.mark.mutants
def test_the_paths_a_report_names_are_true_once_it_is_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant fails the model-based check: the replay line and the script it names are files that exist
    once the run is in place, under the folder as the user named it (here relative to the working folder)."""
    monkeypatch.chdir(tmp_path)
    target = "python:memconform.suites.amps.mutants:ArtifactsReplacedPerImport"
    for _ in range(2):  # the second time the first run is previous/: the named files are the new run's
        code = main(["run", "--report-dir", "rep", "--suite", "amps", "--target", target,
                     "--check", "amps.model_sequences"])
        capsys.readouterr()
        assert code == 1
        (result,) = _results(Path("rep"))
        named = _replay_files(result["failures"][0]["detail"])
        assert named and all(path.parts[0] == "rep" and path.is_file() for path in named), named
        assert (Path("rep") / "sequences").is_dir() and set(named) <= {
            Path("rep") / "sequences" / p.name for p in (Path("rep") / "sequences").iterdir()}
    _nothing_beside(tmp_path)


def _replay_files(detail: str) -> list[Path]:
    """The sequence file of the "Reproduce with: memconform replay FILE" line, and the script it offers."""
    import re
    import shlex

    line = re.search(r"Reproduce with: (memconform replay [^\n]*)", detail)
    assert line, detail
    words = shlex.split(line.group(1).split(" (or read and run ")[0])
    named = [Path(words[2])]
    script = re.search(r"\(or read and run ([^)]+)\)", detail)
    return named + ([Path(script.group(1))] if script else [])


def test_a_killed_run_leaves_the_last_good_folder_whole_and_the_next_run_clears_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rep = _rep(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "8", *ONE_CHECK) == 0
    (rep / "notes.txt").write_text("mine")
    dead = tmp_path / f".rep{report_folder.RUN_MARK}{_a_finished_pid()}-0000-{report_folder._host()}"
    dead.mkdir()  # what a run killed mid-run leaves: its fresh folder, partly written
    (dead / "report.jsonl").write_text('{"type": "header"}\n')
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "9", *ONE_CHECK) == 0
    assert _header(rep)["seed"] == 9 and _header(rep / "previous")["seed"] == 8
    assert (rep / "notes.txt").read_text() == "mine"
    _nothing_beside(tmp_path)


def test_a_kill_between_the_two_renames_puts_the_last_good_run_back(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Where the folders cannot trade places in one step: the run in place was renamed away, the new one
    not yet in; the next run puts the old one back, with the user's files the killed run had taken."""
    rep = _rep(tmp_path)
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "10", *ONE_CHECK) == 0
    pid = _a_finished_pid()
    old = tmp_path / f".rep{report_folder.OLD_MARK}{pid}-0000-{report_folder._host()}"
    work = tmp_path / f".rep{report_folder.RUN_MARK}{pid}-0001-{report_folder._host()}"
    shutil.copytree(rep, work)
    (work / "notes.txt").write_text("mine")  # step 1 had moved it
    rep.rename(old)
    assert _run(rep, capsys, "--suite", "memoryai", "--seed", "11", *ONE_CHECK) == 0
    assert _header(rep)["seed"] == 11 and _header(rep / "previous")["seed"] == 10
    assert (rep / "notes.txt").read_text() == "mine"
    _nothing_beside(tmp_path)


def test_the_folders_trade_places_without_the_one_step_exchange(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_folder, "_exchange_in_one_step", lambda a, b: False)
    rep = _rep(tmp_path)
    for seed in ("12", "13"):
        assert _run(rep, capsys, "--suite", "memoryai", "--seed", seed, *ONE_CHECK) == 0
    assert _header(rep)["seed"] == 13 and _header(rep / "previous")["seed"] == 12
    _nothing_beside(tmp_path)


def test_a_symlinked_report_folder_stays_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "elsewhere" / "real"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for seed in ("14", "15"):
        assert _run(link, capsys, "--suite", "memoryai", "--seed", seed, *ONE_CHECK) == 0
    assert link.is_symlink() and _header(real)["seed"] == 15 and _header(real / "previous")["seed"] == 14


def _a_finished_pid() -> int:
    """The id of a process that has ended (a killed run's)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)


def test_the_checkout_guard_sees_a_file_written_into_the_checkout(tmp_path: Path) -> None:
    """The conftest guard that fails the session when a test writes into the checkout: it sees a new, a
    changed and a removed file (here in a copy of its view of the checkout, never the checkout itself)."""
    from conftest import checkout_files, writes_into_checkout

    (tmp_path / "kept.txt").write_text("a")
    (tmp_path / "changed.txt").write_text("a")
    (tmp_path / "gone.txt").write_text("a")
    (tmp_path / "__pycache__").mkdir()
    before = checkout_files(tmp_path)
    assert writes_into_checkout(before, checkout_files(tmp_path)) == []  # the positive control
    (tmp_path / "reports" / "latest").mkdir(parents=True)
    (tmp_path / "reports" / "latest" / "report.jsonl").write_text("{}")
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"")  # a tool's cache: not the checkout's
    os.utime(tmp_path / "changed.txt", ns=(0, 0))
    (tmp_path / "gone.txt").unlink()
    assert writes_into_checkout(before, checkout_files(tmp_path)) == [
        "changed: changed.txt", "gone: gone.txt", f"new: {os.path.join('reports', 'latest', 'report.jsonl')}"]


def test_what_another_host_or_a_running_process_left_is_left_alone(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A container sharing the folder numbers its processes its own way, and a running process may be
    another run into the same folder: neither's folder is cleared; a dead one of this host's is."""
    rep = _rep(tmp_path)
    other_host = tmp_path / f".rep{report_folder.RUN_MARK}{_a_finished_pid()}-0000-{'0' * 8}"
    running = tmp_path / f".rep{report_folder.RUN_MARK}{os.getppid()}-0000-{report_folder._host()}"
    dead = tmp_path / f".rep{report_folder.RUN_MARK}{_a_finished_pid()}-0000-{report_folder._host()}"
    for folder in (other_host, running, dead):
        folder.mkdir()
    assert _run(rep, capsys, "--suite", "memoryai", *ONE_CHECK) == 0
    assert other_host.is_dir() and running.is_dir() and not dead.exists()


def test_a_run_without_report_dir_uses_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCONFORM_REPORT_DIR", str(tmp_path / "env"))
    assert main(["run", "--suite", "memoryai", *ONE_CHECK]) == 0
    assert f"report: {tmp_path / 'env' / 'report.html'} (report.jsonl" in capsys.readouterr().out
    assert (tmp_path / "env" / "junit.xml").is_file()


def test_the_test_suite_points_runs_away_from_the_checkout() -> None:
    from conftest import CHECKOUT_REPORTS

    assert not Path(os.environ["MEMCONFORM_REPORT_DIR"]).resolve().is_relative_to(CHECKOUT_REPORTS.parent.parent)
