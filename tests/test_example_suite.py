"""A sixth spec shipped by a third party: tests/example_suite is its own distribution, found only
through its `memconform.suites` entry point, and runs through `memconform run`, `list`,
`coverage`, `validate` and the pytest plugin.

Installing it is what pip does for a pure package: a `*.dist-info` folder (METADATA,
entry_points.txt) on sys.path beside the code. The entry points are read from the example's own
pyproject.toml, so the recipe in ARCHITECTURE.md is what is tested.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

EXAMPLE = Path(__file__).resolve().parent / "example_suite"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text("utf-8"))["project"]
    site = tmp_path_factory.mktemp("site")
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in eps.items()) for group, eps in groups.items()))
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(site), str(EXAMPLE)])
    out.pop("MEMCONFORM_API_KEY", None)
    return out


def memconform(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "memconform"), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_list_shows_the_sixth_suite_beside_the_five(env, tmp_path):
    done = memconform(env, tmp_path, "list", "--json")
    assert done.returncode == 0, done.stderr
    suites = {c["suite"] for c in json.loads(done.stdout)["checks"]}
    assert suites == {"memoryai", "omp", "memorizz", "amps", "emp", "toy"}
    toy = memconform(env, tmp_path, "list", "--suite", "toy")
    assert "toy.add_increases_by_k" in toy.stdout and toy.stdout.rstrip().endswith("3 checks")


def test_run_against_its_reference_passes(env, tmp_path):
    done = memconform(env, tmp_path, "run", "--suite", "toy", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(line) for line in (tmp_path / "r" / "report.jsonl").read_text().splitlines()]
    outcomes = {r["check_id"]: r["outcome"] for r in results if r.get("type") == "result"}
    assert outcomes == {"toy.count_non_negative": "passed", "toy.add_increases_by_k": "passed",
                        "toy.rejects_negative_k": "passed"}


@pytest.mark.parametrize("mutant,killed", [("AddsOneTooMany", "toy.add_increases_by_k"),
                                           ("AcceptsNegative", "toy.rejects_negative_k"),
                                           ("NegativeCount", "toy.count_non_negative")])
def test_run_against_a_mutant_fails_its_check(env, tmp_path, mutant, killed):
    done = memconform(env, tmp_path, "run", "--suite", "toy", "--target", f"python:toy_suite.reference:{mutant}",
                      "--report-dir", str(tmp_path / "r"))
    results = [json.loads(line) for line in (tmp_path / "r" / "report.jsonl").read_text().splitlines()]
    failed = {r["check_id"] for r in results if r.get("type") == "result" and r["outcome"] == "failed"}
    assert failed == {killed}, done.stdout + done.stderr
    # a MUST failure fails the run; the SHOULD one no level's clause lists is a warning (exit 0)
    assert done.returncode == (0 if killed == "toy.rejects_negative_k" else 1)


def test_coverage_reads_its_requirement_map(env, tmp_path):
    done = memconform(env, tmp_path, "coverage", "--suite", "toy", "--json")
    assert done.returncode == 0, done.stderr
    (toy,) = json.loads(done.stdout)["suites"]
    assert (toy["covered"], toy["testable"]) == (3, 3)
    assert toy["by_keyword"]["MUST"] == {"covered": 1, "testable": 1}
    assert [s["id"] for s in toy["unobservable"]] == ["TOY-OPS-03"]
    assert toy["unmapped_checks"] == [] and toy["unknown_checks"] == [] and toy["problems"] == []


def test_requirement_quotes_are_in_its_spec_text():
    text = " ".join((EXAMPLE / "toy_suite" / "SPEC.md").read_text("utf-8").split())
    doc = json.loads((EXAMPLE / "toy_suite" / "requirements.json").read_text("utf-8"))
    assert [s["id"] for s in doc["statements"] if " ".join(s["quote"].split()) not in text] == []


def test_validate_detects_its_documents(env, tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"toy": "counter", "count": 3}')
    bad.write_text('{"toy": "counter", "count": -3}')
    assert memconform(env, tmp_path, "validate", str(good)).returncode == 0
    done = memconform(env, tmp_path, "validate", str(bad))
    assert done.returncode == 1 and "toy.count_non_negative" in done.stdout


def test_the_pytest_plugin_runs_it(env, tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "toy_suite"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
