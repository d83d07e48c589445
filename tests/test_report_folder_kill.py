"""A `memconform run` killed mid-run with SIGKILL leaves the last good report folder whole, byte for byte,
and the next run clears what it left beside the folder. The run is stopped by its own target once it
has written a result (tests/stop_mid_run.py), so no timing decides where the kill falls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # three memconform processes

HERE = Path(__file__).resolve().parent
MEMCONFORM = Path(sys.executable).with_name("memconform")
MAX_RUN_S = 120


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    env["PYTHONPATH"] = str(HERE)
    return env


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMCONFORM), "run", "--report-dir", "rep", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=MAX_RUN_S)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _killed_mid_run(cwd: Path) -> None:
    proc = subprocess.Popen([str(MEMCONFORM), "run", "--report-dir", "rep", "--suite", "amps",
                             "--target", "python:stop_mid_run:StopsMidRun"], cwd=cwd, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)  # returns when the target has stopped the run
        assert os.WIFSTOPPED(status), f"the run ended instead of stopping: {status}"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        os.waitpid(proc.pid, 0)
        proc.returncode = -9  # reaped here; Popen must not wait on it again


def test_a_run_killed_mid_run_leaves_the_last_good_folder_whole(tmp_path: Path) -> None:
    good = _run(tmp_path, "--suite", "amps", "--check", "amps.schema_valid", "--seed", "1")
    assert good.returncode == 0, good.stderr
    (tmp_path / "rep" / "notes.txt").write_text("mine")
    before = _files(tmp_path / "rep")

    _killed_mid_run(tmp_path)

    assert _files(tmp_path / "rep") == before  # the last good run, the user's file: untouched
    (left,) = [p for p in tmp_path.iterdir() if p.name not in ("rep", ".rep.lock")]  # the lock dies with its run
    assert left.name.startswith(".rep.run-")  # the killed run's own folder, with the result it wrote
    assert '"type": "result"' in (left / "report.jsonl").read_text("utf-8")

    after = _run(tmp_path, "--suite", "amps", "--check", "amps.schema_valid", "--seed", "2")
    assert after.returncode == 0, after.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # the killed run's folder cleared
    assert _files(tmp_path / "rep" / "previous") == {k: v for k, v in before.items() if k != "notes.txt"}
    assert (tmp_path / "rep" / "notes.txt").read_text() == "mine"
    assert '"seed": 2' in (tmp_path / "rep" / "report.jsonl").read_text("utf-8").splitlines()[0]
