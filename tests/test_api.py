"""memconform.api, used only through itself (the bundle verify reads is made the documented way, by
`memconform certify`): run, validate, translate and verify, each returning typed results that agree with the
command line's verdicts."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from memconform import api

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MEMCONFORM = Path(sys.executable).with_name("memconform")
CHECK = "memoryai.envelope_format_literal"


def _valid_bundle() -> dict:
    case = json.loads((FIXTURES / "memoryai" / "valid" / "minimal_envelope.json").read_text("utf-8"))
    return case.get("document", case)


def test_run_against_the_reference_is_conformant_with_typed_results(tmp_path: Path) -> None:
    outcome = api.run(["memoryai"], checks=[CHECK], report_dir=tmp_path / "rep")
    assert isinstance(outcome, api.RunResult) and outcome.conformant and outcome.exit_code == 0
    (result,) = outcome.results
    assert (result.check_id, result.outcome, result.failures) == (CHECK, "passed", ())
    assert outcome.report_dir == tmp_path / "rep" and (tmp_path / "rep" / "report.html").is_file()
    assert {v.status for v in outcome.levels} == {"not assessed"}  # one check decides no level on its own
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.exit_code = 1  # type: ignore[misc]


def test_run_against_a_mutant_names_the_failure() -> None:
    outcome = api.run(["memoryai"], "python:memconform.suites.memoryai.mutants:WrongChecksum",
                      checks=["memoryai.checksum_present_and_valid"])
    assert outcome.exit_code == 1 and not outcome.conformant and outcome.report_dir is None
    (failed,) = outcome.failed
    assert failed.check_id == "memoryai.checksum_present_and_valid" and failed.failures and failed.failures[0].title
    assert any(v.status == "not conformant" for v in outcome.levels)


def test_a_bad_option_is_an_error_not_a_result() -> None:
    with pytest.raises(api.Error, match="unknown profile option"):
        api.run(["memoryai"], options={"memoryai.no_such_option": "x"})
    with pytest.raises(api.Error, match="unknown profile"):
        api.run(["memoryai"], profile="fastest")


def test_validate_a_valid_and_an_invalid_document(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_valid_bundle()), "utf-8")
    checked = api.validate(good)
    assert isinstance(checked, api.ValidationResult) and checked.valid and checked.format == "memoryai"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_valid_bundle(), "format": "not-memoryai"}), "utf-8")
    refused = api.validate(bad, format="memoryai")
    assert refused.verdict == "invalid" and not refused.valid
    assert "memoryai.envelope_format_literal" in {r.check_id for r in refused.failed}
    with pytest.raises(api.Error):
        api.validate(tmp_path / "absent.json")


def test_translate_keeps_a_ledger_and_refuses_what_its_format_rejects() -> None:
    done = api.translate(_valid_bundle(), to="omp")
    assert isinstance(done, api.TranslationResult) and done.translated and done.source == "memoryai"
    assert done.output["omp_version"] and (done.ledger["from"], done.ledger["to"]) == ("memoryai", "omp") and done.summary
    refused = api.translate({**_valid_bundle(), "format": "not-memoryai"}, source="memoryai", to="omp")
    assert not refused.translated and refused.refused and "memoryai" in refused.refused
    with pytest.raises(api.Error):
        api.translate({"nothing": "known"}, to="omp")


def test_verify_a_signed_bundle_a_tampered_one_and_an_unsigned_one(tmp_path: Path) -> None:
    key = tmp_path / "vendor.key"
    assert subprocess.run([str(MEMCONFORM), "keygen", str(key)], capture_output=True, check=False).returncode == 0
    bundle = tmp_path / "bundle.json"
    made = subprocess.run([str(MEMCONFORM), "certify", "--suite", "memoryai", "--target", "reference:memoryai",
                           "--out", str(bundle), "--key", str(key), "--profile", "ci"],
                          capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600)
    assert made.returncode in (0, 1), made.stderr[-2000:]
    checked = api.verify(bundle, key=key.with_name(key.name + ".pub"))
    assert isinstance(checked, api.VerificationResult) and checked.verified and checked.problems == ()
    assert checked.signer.startswith("SHA256:") and checked.profile == "ci" and checked.claims
    import base64

    envelope = json.loads(bundle.read_text("utf-8"))
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["seed"] = int(statement["predicate"]["seed"]) + 1  # a claim changed after signing
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(envelope), "utf-8")
    broken = api.verify(tampered)
    assert not broken.verified and any("signature" in p for p in broken.problems), broken.problems
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text("{}", "utf-8")
    assert api.verify(unsigned) == api.VerificationResult(False, "", api.verify(unsigned).problems)
    assert "not signed" in api.verify(unsigned).problems[0]
