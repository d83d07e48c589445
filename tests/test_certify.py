"""certify writes a bundle; verify recomputes the digest and every level verdict; tampering is caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memconform.certify import digest, verify_bundle
from memconform.cli import main

MUTANT = "python:memconform.suites.memoryai.mutants:WrongChecksum"  # Level 1 and 3 not conformant, Level 2 conformant


@pytest.fixture(scope="module")
def bundle_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "bundle.json"
    code = main(["certify", "--suite", "memoryai", "--target", MUTANT, "--out", str(out),
                 "--target-name", "Wrong Checksum Inc. brain", "--target-version", "0.9"])
    assert code == 1  # the run's own exit code: Level 1 is not conformant
    return out


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def _resealed(bundle: dict[str, Any]) -> dict[str, Any]:
    """What a forger does: change something, then recompute the digest."""
    bundle["digest"] = {"algorithm": "sha256", "value": digest(bundle)}
    return bundle


def test_bundle_holds_the_evidence(bundle_path: Path) -> None:
    b = _load(bundle_path)
    assert b["target"] == {"address": MUTANT, "name": "Wrong Checksum Inc. brain", "version": "0.9"}
    assert b["spec_versions"]["memoryai"]["version"] and b["harness_version"] and b["seed"] and b["profile"] == "ci"
    assert {(c["level"], c["status"]) for c in b["claims"]} >= {("1", "not conformant"), ("2", "conformant")}
    assert json.loads(b["report"][0])["type"] == "header" and json.loads(b["report"][-1])["type"] == "footer"
    assert b["digest"]["value"] == digest(b)


def test_an_intact_bundle_verifies(bundle_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(bundle_path)]) == 0
    assert "verified" in capsys.readouterr().out


def test_a_changed_bundle_fails_on_the_digest(bundle_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = _load(bundle_path)
    b["target"]["version"] = "1.0"
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main(["verify", str(tmp_path / "b.json")]) == 1
    assert "digest mismatch" in capsys.readouterr().out


def test_a_resealed_claim_that_the_results_do_not_support_fails(bundle_path: Path) -> None:
    b = _load(bundle_path)
    for c in b["claims"]:
        c["status"] = "conformant"
    footer = json.loads(b["report"][-1])
    for lv in footer["levels"]:
        lv["status"] = "conformant"
    b["report"][-1] = json.dumps(footer)
    problems = verify_bundle(_resealed(b))
    assert any("level 1: claimed 'conformant', the results give 'not conformant'" in p for p in problems), problems


def test_a_resealed_failure_turned_into_a_warning_still_decides(bundle_path: Path) -> None:
    b = _load(bundle_path)
    lines = [json.loads(x) for x in b["report"]]
    for line in lines:
        if line.get("outcome") == "failed":
            line["keyword"], line["in_clause"], line["warning"] = "MAY", False, True
    for lv in lines[-1]["levels"]:
        lv["status"] = "conformant"
    b["report"] = [json.dumps(x) for x in lines]
    b["claims"] = [{**c, "status": "conformant"} for c in b["claims"]]
    problems = verify_bundle(_resealed(b))  # keyword and clause come from the installed suite, not the bundle
    assert any("the results give 'not conformant'" in p for p in problems), problems


def test_a_resealed_truncated_report_fails(bundle_path: Path) -> None:
    b = _load(bundle_path)
    b["report"] = b["report"][:-1]
    problems = verify_bundle(_resealed(b))
    assert any("does not read back" in p and "footer" in p for p in problems), problems


def test_certify_takes_no_expectations_file(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text('{"version": 1}')
    assert main(["certify", "--suite", "memoryai", "--target", MUTANT, "--expect", str(tmp_path / "e.json")]) == 2
