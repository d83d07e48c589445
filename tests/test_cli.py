"""The command line: bad input gets one line and exit 2; fixture verdicts agree with the corpus."""

from __future__ import annotations

import json

import pytest
from memconform.cli import main
from memconform.fixtures_loader import iter_cases

CASES = list(iter_cases("memoryai"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,needle", [
    (["validate", "/nonexistent/bundle.json"], "cannot read"),
    (["run", "--suite", "nosuch"], "unknown suite"),
    (["run", "--suite", "memoryai", "--target", "http://127.0.0.1:9"], "does not answer"),
    (["run", "--suite", "memoryai", "--profile", "nosuch"], "unknown profile"),
    (["run", "--suite", "memoryai", "--option", "memoryai.dna_rule=maybe"], "not one of"),
    (["run", "--suite", "memoryai", "--target", "gopher://x"], "cannot tell the kind"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1


def test_validate_not_json_and_unknown_format(capsys, tmp_path):
    (tmp_path / "x.json").write_text("{nope")
    (tmp_path / "y.json").write_text('{"format": "something-else"}')
    assert run(capsys, "validate", str(tmp_path / "x.json"))[0] == 2
    assert run(capsys, "validate", str(tmp_path / "y.json"))[0] == 2


def test_validate_refuses_a_huge_file_early(capsys, tmp_path):
    path = tmp_path / "big.json"
    path.write_text(" " * 2000)
    code, _, err = run(capsys, "validate", str(path), "--max-bytes", "1000")
    assert code == 2 and "over the limit" in err


def test_list_names_every_check(capsys):
    code, out, _ = run(capsys, "list", "--suite", "memoryai", "--json")
    checks = json.loads(out)
    assert code == 0 and len(checks) >= 25
    assert all(c["section"].startswith("§") and c["keyword"] in ("MUST", "SHOULD", "MAY") for c in checks)


@pytest.mark.parametrize("path,case", CASES, ids=[c["id"] for _, c in CASES])
def test_fixture_verdicts(capsys, tmp_path, path, case):
    # a fixture file wraps the document with its expectations: validate the document itself
    doc = tmp_path / f"{case['id']}.json"
    doc.write_text(json.dumps(case["document"], ensure_ascii=False), encoding="utf-8")
    argv = ["validate", str(doc), "--json", "--format", "memoryai"]
    if case.get("profile") == "strict":
        argv += ["--profile", "strict"]
    code, out, _ = run(capsys, *argv)
    verdict = json.loads(out)
    assert verdict["verdict"] == case["verdict"], verdict
    assert code == (0 if case["verdict"] == "valid" else 1)
    assert set(case.get("breaks", [])) <= set(verdict["failed"]), verdict["failed"]
    assert set(case.get("warnings", [])) <= set(verdict["warnings"]) | set(verdict["failed"])


def test_validate_detects_the_format_without_being_told(capsys, tmp_path):
    path, case = next((p, c) for p, c in CASES if c["verdict"] == "valid")
    doc = tmp_path / "b.json"
    doc.write_text(json.dumps(case["document"]), encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(doc))
    assert code == 0 and "memoryai valid" in out


def test_failing_fuzz_example_is_saved_and_replays(capsys, tmp_path):
    target = "python:memconform.mutants.memoryai:RoundtripLosesData"
    code, out, _ = run(capsys, "run", "--suite", "memoryai", "--target", target, "--check", "roundtrip_equivalent",
                       "--report-dir", str(tmp_path))
    assert code == 1 and "replay with: memconform replay" in out
    saved = next((tmp_path / "examples").glob("*.json"))
    code, out, _ = run(capsys, "replay", str(saved), "--target", target)
    assert code == 1 and "reproduced" in out
    code, out, _ = run(capsys, "replay", str(saved))  # the reference has no such bug
    assert code == 0 and "no failure" in out


def test_run_writes_all_three_reports(capsys, tmp_path):
    code, out, _ = run(capsys, "run", "--suite", "memoryai", "--report-dir", str(tmp_path))
    assert code == 0
    assert "Level 2 Consumer: conformant" in out
    assert {p.name for p in tmp_path.iterdir()} >= {"report.jsonl", "junit.xml", "summary.md"}
