"""certify writes a bundle; verify recomputes the digest and every level verdict; tampering is caught."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.evidence.certify import digest, verify_bundle

MUTANT = "python:memconform.suites.memoryai.mutants:WrongChecksum"  # Level 1 and 3 not conformant, Level 2 conformant


@pytest.fixture(scope="module")
def vendor_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    key = tmp_path_factory.mktemp("keys") / "vendor.key"
    assert main(["keygen", str(key)]) == 0
    return key


@pytest.fixture(scope="module")
def envelope_path(tmp_path_factory: pytest.TempPathFactory, vendor_key: Path) -> Path:
    import contextlib
    import io

    out = tmp_path_factory.mktemp("cert") / "bundle.json"
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = main(["certify", "--suite", "memoryai", "--target", MUTANT, "--out", str(out), "--key", str(vendor_key),
                     "--profile", "ci", "--seed", "11", "--option", "memoryai.dna_rule=union",
                     "--target-name", "Wrong Checksum Inc. brain", "--target-version", "0.9"])
    out.with_suffix(".said").write_text(said.getvalue(), "utf-8")
    assert code == 1  # the run's own exit code: Level 1 is not conformant
    return out


def test_certify_says_its_bound_and_shows_progress(envelope_path: Path) -> None:
    said = envelope_path.with_suffix(".said").read_text("utf-8")
    assert "memconform certify: suites memoryai" in said and "the profile's run budget" in said
    assert "progress with what is left below" in said and "certification bundle:" in said


def test_certify_estimates_its_time_from_the_checks_it_plans(envelope_path: Path) -> None:
    """Before the run: the checks planned times the measured seconds per check of the suite under the profile;
    during it: every check's line says what is left at the mean time per check so far."""
    from memconform.core.registry import select_checks
    from memconform.run.estimate import MEASURED, estimate

    said = envelope_path.with_suffix(".said").read_text("utf-8")
    planned = len(select_checks("memoryai", None))
    expected = estimate({"memoryai": planned}, "ci")
    seconds, measured_checks = MEASURED["memoryai"]["ci"]
    assert expected.checks == planned and not expected.extrapolated
    assert expected.seconds == pytest.approx(seconds / measured_checks * planned) and expected.seconds > 0
    assert f"; estimate: {expected.text()}; at most " in said
    found = re.search(r"estimate: about (?:(\d+)m)?(\d+)s for (\d+) checks \(measured against", said)
    assert found is not None and int(found[3]) == planned
    assert 60 * int(found[1] or 0) + int(found[2]) == int(expected.seconds)
    lines = [x for x in said.splitlines() if re.match(r"\[\d+/\d+\] \S+ (passed|failed|warning|errored|skipped) \(", x)]
    assert len(lines) == planned and all(f"/{planned}] " in x for x in lines)
    assert all(re.search(r", about (\d+m)?\d+s left\)$", x) for x in lines[:-1]), lines[:3]
    assert lines[-1].endswith("s)")  # nothing left after the last check


def test_the_estimate_grows_with_the_profile_and_says_what_it_does_not_know() -> None:
    from memconform.run.estimate import estimate

    ci, default, thorough = (estimate({"memoryai": 50, "omp": 90}, p) for p in ("ci", "default", "thorough"))
    assert 0 < ci.seconds < default.seconds < thorough.seconds
    assert thorough.extrapolated and "(extrapolated: the default profile's time measured against" in thorough.text()
    assert thorough.seconds == pytest.approx(default.seconds * 8)  # 200 examples per property against 25
    assert not default.extrapolated and "(measured against" in default.text()
    elsewhere = estimate({"memoryai": 50, "example": 3}, "ci")
    assert elsewhere.unknown == ("example",) and elsewhere.checks == 53 and "no figure for example" in elsewhere.text()
    assert estimate({"example": 3}, "ci").text() == "3 checks, no measured time"


@pytest.fixture(scope="module")
def bundle_path(envelope_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle (the Statement's predicate) alone, for the tests of what verify_bundle recomputes."""
    out = tmp_path_factory.mktemp("plain") / "bundle.json"
    out.write_text(json.dumps(_statement(envelope_path)["predicate"]))
    return out


def _statement(path: Path) -> dict[str, Any]:
    envelope = json.loads(path.read_text("utf-8"))
    data: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return data


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


def test_a_bundle_without_a_signature_is_not_verified(bundle_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert verify_bundle(_load(bundle_path)) == []  # intact: the digest and every verdict check out
    assert main(["verify", str(bundle_path)]) == 1  # ... but nobody vouches for it
    assert "not signed" in capsys.readouterr().out


def test_a_changed_bundle_fails_on_the_digest(bundle_path: Path) -> None:
    b = _load(bundle_path)
    b["target"]["version"] = "1.0"
    assert any("digest mismatch" in p for p in verify_bundle(b))


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


# --- signed bundles: in-toto Statement in a DSSE envelope, Ed25519 ---------------------------------

def test_a_genuine_bundle_verifies_and_names_its_key(envelope_path: Path, vendor_key: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from memconform.evidence.attest import fingerprint, load_private

    named = fingerprint(load_private(vendor_key).public_key())
    assert main(["verify", str(envelope_path), "--key", f"{vendor_key}.pub"]) == 0
    out = capsys.readouterr().out
    assert f"signed by key {named} (the key you gave" in out and "verified" in out
    assert "profile ci, seed 11; options given: memoryai.dna_rule=union" in out
    # no --key: the signature checks against the key inside, which vouches for nothing: not 0
    assert main(["verify", str(envelope_path)]) == 1
    out = capsys.readouterr().out
    assert f"signed by key {named} (the key inside the bundle" in out
    assert "signature valid, signer unverified" in out and ": verified" not in out
    assert main(["verify", str(envelope_path), "--fingerprint", named]) == 0  # the fingerprint its vendor publishes
    assert f"signed by key {named} (the fingerprint you named)" in capsys.readouterr().out


def test_the_statement_is_in_toto_with_the_report_as_subject(envelope_path: Path) -> None:
    import hashlib

    envelope = _load(envelope_path)
    assert envelope["payloadType"] == "application/vnd.in-toto+json" and envelope["signatures"][0]["keyid"].startswith("SHA256:")
    st = _statement(envelope_path)
    assert st["_type"] == "https://in-toto.io/Statement/v1" and st["predicateType"].startswith("https://memconform.dev/")
    report = (envelope_path.parent / "bundle.json.report" / "report.jsonl").read_text("utf-8")
    assert st["subject"] == [{"name": "report.jsonl", "digest": {"sha256": hashlib.sha256(report.encode()).hexdigest()}}]
    b = st["predicate"]
    header = json.loads(b["report"][0])
    assert b["profile"] == header["profile"] == "ci" and b["seed"] == header["seed"] == 11
    assert b["options"] == header["options"] and b["options"]["memoryai.dna_rule"] == "union"  # every option, as run
    assert b["options_given"] == {"memoryai.dna_rule": "union"}


def _forge(envelope_path: Path, tmp_path: Path, sign_with: Path | None) -> Path:
    """What a forger does: change the target's name, recompute the digest, and re-sign with their own key
    (or leave the vendor's signature on the changed payload)."""
    from memconform.evidence.attest import fingerprint, load_private, public_pem, sign

    st = _statement(envelope_path)
    st["predicate"]["target"]["name"] = "Someone Else's brain"
    if sign_with is not None:
        public = load_private(sign_with).public_key()
        st["predicate"]["signer"] = {"keyid": fingerprint(public), "public_key": public_pem(public)}
    st["predicate"] = _resealed(st["predicate"])
    if sign_with is not None:
        envelope = sign(st, load_private(sign_with))
    else:
        envelope = _load(envelope_path)
        envelope["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
    out = tmp_path / "forged.json"
    out.write_text(json.dumps(envelope))
    return out


def test_a_forged_bundle_with_the_old_signature_fails(envelope_path: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    forged = _forge(envelope_path, tmp_path, None)
    assert main(["verify", str(forged)]) == 1
    assert "no signature by key SHA256:" in capsys.readouterr().out


def test_a_forged_bundle_signed_by_another_key_fails_against_the_vendors_key(
        envelope_path: Path, vendor_key: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forger = tmp_path / "forger.key"
    assert main(["keygen", str(forger)]) == 0
    forged = _forge(envelope_path, tmp_path, forger)
    capsys.readouterr()
    assert main(["verify", str(forged), "--key", f"{vendor_key}.pub"]) == 1
    assert "NOT verified" in capsys.readouterr().out
    # without --key: the forger's own signature is valid, but nobody named the forger: not verified, not 0
    from memconform.evidence.attest import fingerprint, load_private

    assert main(["verify", str(forged)]) == 1
    out = capsys.readouterr().out
    assert fingerprint(load_private(forger).public_key()) in out and "signer unverified" in out
    assert fingerprint(load_private(vendor_key).public_key()) not in out
    # naming the vendor's fingerprint refuses it
    assert main(["verify", str(forged), "--fingerprint", fingerprint(load_private(vendor_key).public_key())]) == 1
    assert "NOT verified" in capsys.readouterr().out


def test_certify_needs_a_key_and_runs_thorough_by_default(tmp_path: Path) -> None:
    from memconform.cli.main import build_parser

    args = build_parser().parse_args(["certify", "--suite", "memoryai", "--target", MUTANT, "--key", "k"])
    assert args.profile == "thorough"
    assert main(["certify", "--suite", "memoryai", "--target", MUTANT]) == 2  # no --key: a usage error
    assert main(["certify", "--suite", "memoryai", "--target", MUTANT, "--key", str(tmp_path / "none.key"),
                 "--out", str(tmp_path / "b.json")]) == 2
    assert not (tmp_path / "b.json").exists()


def test_keygen_never_overwrites_and_keeps_the_private_key_private(tmp_path: Path) -> None:
    key = tmp_path / "k.key"
    assert main(["keygen", str(key)]) == 0
    assert key.stat().st_mode & 0o077 == 0
    before = key.read_bytes()
    assert main(["keygen", str(key)]) == 2 and key.read_bytes() == before
