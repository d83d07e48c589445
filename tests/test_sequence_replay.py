"""Replayable sequences (memconform.core.sequence): for each suite a known-broken mutant fails its model-based
check, the shrunk sequence is saved as a JSON file (and a script where the target has one), and
`memconform replay FILE` reproduces the divergence against the mutant (exit 1) and finds none against the
reference (exit 0)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from memconform.cli.main import main
from memconform.core import sequence, sequence_files
from memconform.core.profile import Profile
from memconform.run import replay as sequence_replay
from memconform.run.session import execute_run

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

# suite -> (mutant, the suite's model-based check)
MACHINES = {
    "memoryai": ("DedupAgainstLastImportOnly", "memoryai.model_sequences"),
    "amps": ("ArtifactsReplacedPerImport", "amps.model_sequences"),
    "memorizz": ("SkipMeansAbort", "memorizz.model_sequences"),
    "emp": ("RewritesFromCache", "emp.writer_model_sequences"),
    "omp": ("stale_search_index", "omp.model_based_sequences"),
}


def failing_sequence(suite: str, tmp_path: Path) -> tuple[Path, str]:
    mutant, check = MACHINES[suite]
    target = f"python:memconform.suites.{suite}.mutants:{mutant}"
    outcome = execute_run([suite], target, Profile.named("ci"), report_dir=tmp_path / "report", check_ids=[check])
    (result,) = outcome.results
    assert result.outcome.value == "failed", (result.outcome, result.reason)
    detail = result.failures[0].detail
    assert "Reproduce with: memconform replay " in detail and f"--target {target}" in detail, detail
    files = sorted((tmp_path / "report" / "sequences").glob("*.json"))
    assert len(files) == 1, files
    return files[0], target


@pytest.mark.parametrize("suite", sorted(MACHINES))
def test_saved_sequence_reproduces_on_the_mutant_and_not_on_the_reference(
        suite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, target = failing_sequence(suite, tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    assert doc["format"] == "memconform-sequence" and doc["suite"] == suite and doc["check"] == MACHINES[suite][1]
    assert doc["target"] == {"kind": "python", "string": target} and doc["profile"] == "ci" and isinstance(doc["seed"], int)
    checks = [s for s in doc["steps"] if s["by"] == "check"]
    assert len(checks) == 1 and doc["steps"][-1] is not None and doc["steps"][-1]["by"] == "check"
    assert "expected" in checks[0] and checks[0]["message"]
    assert all("op" in s for s in doc["steps"]) and any(s["by"] == "target" for s in doc["steps"])

    capsys.readouterr()
    assert main(["replay", str(path)]) == 2  # the file's own target is shown, never started
    shown = capsys.readouterr()
    assert target in shown.out and "pass --target" in shown.err
    assert main(["replay", str(path), "--target", target]) == 1
    out = capsys.readouterr().out
    assert "DIVERGED" in out and "the divergence reproduced" in out and "step 1/" in out
    assert main(["replay", str(path), "--target", f"reference:{suite}"]) == 0
    out = capsys.readouterr().out
    assert "no divergence on this target" in out and "DIVERGED" not in out


def test_omp_sequence_has_a_curl_script(tmp_path: Path) -> None:
    path, _ = failing_sequence("omp", tmp_path)
    script = path.with_suffix(".sh").read_text("utf-8")
    assert script.startswith("#!/bin/sh") and "curl -sS -X POST" in script and "Bearer $MEMCONFORM_API_KEY" in script
    assert "/v1/memories/search" in script and "# step" in script


def test_emp_sequence_replays_through_a_command_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reference as one process per operation (cmd:): the same file, the same verdict, the same Target interface."""
    path, _ = failing_sequence("emp", tmp_path)
    cmd = f"cmd:{shlex.quote(sys.executable)} -m memconform.suites.emp.reference {{op}} {{input}} {{output}}"
    assert main(["replay", str(path), "--target", cmd]) == 0
    assert "no divergence on this target" in capsys.readouterr().out


def test_command_script_lists_the_command_lines() -> None:
    from memconform.core.profile import Limits
    from memconform.targets.command import CommandTarget

    target = CommandTarget("impl {op} {input} {output}", Limits())
    ctx = SimpleNamespace(target=target)
    doc = {"check": "emp.writer_model_sequences", "target": {"kind": "cmd", "string": "cmd:impl {op} {input} {output}"},
           "steps": [{"by": "target", "op": "append", "body": {"path": "/tmp/x/memory.jsonl", "entry": {"id": "a"}}},
                     {"by": "check", "op": "reply", "expected": {"ok": True}, "message": "append refused"}]}
    lines = sequence_files.script_lines(ctx, doc)
    text = "\n".join(lines)
    assert "printf '%s\\n' '{\"path\"" in text and '> "$W"/0/input.json' in text and '"entry": {"id": "a"}' in text
    assert 'impl append "$W"/0/input.json "$W"/0/output.json' in text and "# step 1: the model expected here" in text


@pytest.mark.parametrize("doc,words", [
    ({"format": "memconform-sequence", "version": 99, "suite": "emp", "steps": []}, "version"),
    ({"format": "memconform-sequence", "version": 1, "suite": "emp", "steps": [{"by": "target", "op": "resolve"}]},
     "no divergence"),
])
def test_bad_sequence_files_are_usage_errors(doc: dict[str, object], words: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), "utf-8")
    assert main(["replay", str(path), "--target", "reference:emp"]) == 2
    assert words in capsys.readouterr().err


def test_reply_comparator() -> None:
    reply = SimpleNamespace(status=200, ok=True, body={"total": 2, "memories": [{"id": "a"}, {"id": "b"}]})
    assert sequence.reply_differs(None, reply, {"status": 200, "values": {"total": 2},
                                                "lists": {"memories[].id": ["a", "b"]}, "sets": {"memories[].id": ["b", "a"]}}) is None
    assert "total" in (sequence.reply_differs(None, reply, {"values": {"total": 3}}) or "")
    assert "outside" in (sequence.reply_differs(None, reply, {"subsets": {"memories[].id": ["a"]}}) or "")
    refused = SimpleNamespace(status="ok", ok=True, body={"ok": False})
    assert sequence.reply_differs(None, refused, {"refused": True}) is None


def test_renames_follow_ids_and_folders() -> None:
    rp = sequence_replay.Replay(ctx=None, say=print, renames={"mem_old": "mem_new", "/tmp/a": "/tmp/b"})
    assert rp.rename({"id": "mem_old", "path": "/tmp/a/memory.jsonl", "x": ["mem_old", "other"]}) == {
        "id": "mem_new", "path": "/tmp/b/memory.jsonl", "x": ["mem_new", "other"]}
