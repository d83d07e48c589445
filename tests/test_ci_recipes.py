"""The CI recipes in docs/ci/ run as written: the GitHub Actions workflow's `run:` steps, in order, in
a shell on this machine (against memconform's reference server on a loopback port), and the
pytest-only command. "Install memconform" is the one step not run: it needs the network, and the
memconform under test is already installed in this environment (its bin folder is put first on PATH).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from memconform.core.report import Report

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs" / "ci" / "github-actions.yml"
PYTEST_ONLY = ROOT / "docs" / "ci" / "pytest-only.md"
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCONFORM_")}
    env.update({"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "CI": "true", **extra})
    return env


def test_github_actions_workflow_steps_run_locally(tmp_path: Path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    job = workflow["jobs"]["conformance"]
    steps = [s for s in job["steps"] if "run" in s]
    assert [s.get("id") for s in steps].count("install") == 1
    port = _free_port()
    summary = tmp_path / "step-summary.md"
    env = _env(tmp_path, **{**{k: str(v) for k, v in job["env"].items()}, "MEMCONFORM_PORT": str(port),
                            "GITHUB_STEP_SUMMARY": str(summary)})
    ran = []
    try:
        for step in steps:
            if step.get("id") == "install":
                continue
            proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=300, check=False)
            ran.append(step["name"])
            assert proc.returncode == 0, f"step {step['name']!r} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    finally:
        _kill_listener(port)
    assert ran == [s["name"] for s in steps if s.get("id") != "install"]
    reports = tmp_path / "reports" / "latest"
    report = Report.from_path(reports / "report.jsonl")
    assert report.footer is not None and report.footer["exit_code"] == 0
    assert report.header["target"] == f"http://127.0.0.1:{port}"
    assert {r["outcome"] for r in report.results} <= {"passed", "skipped"}
    ET.parse(reports / "junit.xml")
    assert (reports / "report.html").exists() and list((reports / "badges").glob("*.svg"))
    assert "## Verdicts" in summary.read_text("utf-8")
    assert json.loads((tmp_path / ".memconform" / "expectations.json").read_text())["version"] == 1


def _kill_listener(port: int) -> None:
    """Stop the server the workflow started (found by the loopback port it listens on)."""
    out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=False).stdout
    for pid in {int(p) for p in re.findall(r"pid=(\d+)", out)}:
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            pass


def _pytest_only_command() -> str:
    text = PYTEST_ONLY.read_text("utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    return block.group(1).replace("\\\n", " ")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[int]:
    port = _free_port()
    proc = subprocess.Popen([str(BIN / "memconform"), "serve", "memoryai", "--port", str(port)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):  # readiness only: no verdict depends on this wait
            if proc.poll() is not None:
                raise RuntimeError(f"memconform serve exited {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def _run_pytest_only(tmp_path: Path, port: int, report_dir: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(_pytest_only_command().replace("8765", str(port)).replace("reports/latest", report_dir))
    assert argv[:3] == ["python", "-m", "pytest"]
    argv = [sys.executable, *argv[1:], *extra]
    return subprocess.run(argv, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600, check=False)


def test_pytest_only_recipe_runs_as_written(tmp_path: Path, served: int) -> None:
    proc = _run_pytest_only(tmp_path, served, "reports/latest")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = Report.from_path(tmp_path / "reports" / "latest" / "report.jsonl")
    assert report.footer is not None and report.footer["exit_code"] == 0
    names = {c.get("name") for c in ET.parse(tmp_path / "reports" / "latest" / "junit.xml").iter("testcase")}
    assert names == {r["check_id"] for r in report.results}  # the check id, as the CLI names them


def test_pytest_xdist_gives_the_same_report_as_serial(tmp_path: Path, served: int) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is not installed in this environment")
    serial = _run_pytest_only(tmp_path, served, "serial")
    parallel = _run_pytest_only(tmp_path, served, "parallel", "-p", "xdist", "-n", "2")
    assert serial.returncode == parallel.returncode
    a = Report.from_path(tmp_path / "serial" / "report.jsonl")
    b = Report.from_path(tmp_path / "parallel" / "report.jsonl")
    outcome = {r["check_id"]: r["outcome"] for r in a.results}
    assert outcome == {r["check_id"]: r["outcome"] for r in b.results}
    assert a.footer is not None and b.footer is not None
    assert [lv["status"] for lv in a.footer["levels"]] == [lv["status"] for lv in b.footer["levels"]]
