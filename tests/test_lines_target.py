"""The long-lived command target (`cmd-lines:`, harness/targets/lines.py): one process for the run,
JSON lines both ways, and the bounds of `cmd:` (deadline, reply cap, the process tree ended, secrets
masked). The wall-clock gain over `cmd:` is measured in bench/bench_cmd_lines.py, never here."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from contract_kit import reference_run
from made_once import shared_folder
from memconform.core.profile import Limits
from memconform.core.results import HarnessError, TargetError, Unsupported
from memconform.targets import TARGET_KINDS, open_target
from memconform.targets.lines import LineCommandTarget

ADAPTER = r'''
import json, os, subprocess, sys, time
out = os.fdopen(os.dup(1), "w", buffering=1)
def say(obj): out.write(json.dumps(obj) + "\n"); out.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m["cmd"] == "start":
        say({"ready": os.environ.get("BAD_START") is None, "version": 1}); continue
    if m["cmd"] == "stop":
        break
    op, seq, body = m["op"], m["seq"], m.get("body")
    if op == "echo":
        say({"seq": seq, "status": "ok", "body": {"body": body, "params": m.get("params"), "pid": os.getpid(),
                                                   "raw": m.get("raw"), "key": os.environ.get("MEMCONFORM_API_KEY")}})
    elif op == "reject":
        say({"seq": seq, "status": "rejected", "body": {"error": "no"}})
    elif op == "text":
        say({"seq": seq, "status": "ok", "raw": "eyJhIjoxfQp7ImEiOjJ9Cg==", "content_type": "application/x-ndjson"})
    elif op == "unsupported":
        say({"seq": seq, "status": "unsupported"})
    elif op == "fail":
        say({"seq": seq, "status": "error", "message": "disk full"})
    elif op == "slow":
        time.sleep(60)
    elif op == "big":
        say({"seq": seq, "status": "ok", "body": "x" * 100000})
    elif op == "noise":
        out.write("starting up...\n"); out.flush()
    elif op == "badseq":
        say({"seq": seq + 5, "status": "ok", "body": 1})
    elif op == "crash":
        sys.stderr.write("fatal: key " + os.environ.get("MEMCONFORM_API_KEY", "") + " rejected\n"); sys.stderr.flush()
        os._exit(3)
    elif op == "spawn":  # a grandchild in a session of its own, which must not outlive the run
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", body["marker"]], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        say({"seq": seq, "status": "ok", "body": "spawned"})
'''

KEY = "sk-test-" + "9" * 24


@pytest.fixture
def adapter(tmp_path: Path) -> str:
    path = tmp_path / "adapter.py"
    path.write_text(ADAPTER)
    return f"{sys.executable} {path}"


def opened(adapter: str, **limits: float) -> LineCommandTarget:
    target = open_target(f"cmd-lines:{adapter}", limits=Limits(**limits), api_key=KEY)  # type: ignore[arg-type]
    assert isinstance(target, LineCommandTarget)
    target.preflight()
    return target


def test_the_kind_is_registered() -> None:
    assert "cmd-lines:" in TARGET_KINDS


def test_one_process_answers_every_call_in_order(adapter: str) -> None:
    target = opened(adapter)
    try:
        pids = set()
        for i in range(5):
            reply = target.call("echo", {"n": i, "text": "é\n\u2028"}, params={"limit": "3"})
            assert reply.ok and reply.body["body"] == {"n": i, "text": "é\n\u2028"}
            assert reply.body["params"] == {"limit": "3"} and reply.body["key"] == KEY
            pids.add(reply.body["pid"])
        assert len(pids) == 1 and target.starts == 1 and target.calls == 5
        raw = target.call("echo", raw=b"\xff\x00 not json")
        assert base64.b64decode(raw.body["raw"]) == b"\xff\x00 not json"  # the bytes as sent
        lines = target.call("text", {})  # a reply that is not one JSON text comes as its bytes
        assert lines.raw == b'{"a":1}\n{"a":2}\n' and lines.content_type == "application/x-ndjson"
        assert lines.parse_error is not None
        rejected = target.call("reject", {})
        assert rejected.status == "rejected" and rejected.body == {"error": "no"}
        with pytest.raises(Unsupported):
            target.call("unsupported", {})
        with pytest.raises(TargetError, match="disk full"):
            target.call("fail", {})
        assert target.call("echo", {}).ok  # an error reply leaves the protocol in step
    finally:
        target.close()


def test_a_call_past_its_deadline_errors_and_so_does_every_later_one(adapter: str) -> None:
    target = opened(adapter, call_deadline_s=1.0)
    try:
        with pytest.raises(TargetError, match="no reply within"):
            target.call("slow", {})
        with pytest.raises(TargetError, match="not sent"):
            target.call("echo", {})
    finally:
        target.close()


def test_a_reply_over_the_cap_errors(adapter: str) -> None:
    target = opened(adapter, max_response_bytes=10_000)
    try:
        with pytest.raises(TargetError, match="over the cap"):
            target.call("big", {})
        with pytest.raises(TargetError):
            target.call("echo", {})
    finally:
        target.close()


@pytest.mark.parametrize("op, words", [("badseq", "out of step"), ("noise", "not a JSON object|reply line")])
def test_a_reply_out_of_step_errors(adapter: str, op: str, words: str) -> None:
    target = opened(adapter)
    try:
        with pytest.raises(TargetError, match=words):
            target.call(op, {})
        with pytest.raises(TargetError):
            target.call("echo", {})
    finally:
        target.close()


def test_a_crash_mid_run_errors_never_passes_and_the_key_is_masked(adapter: str) -> None:
    target = opened(adapter)
    try:
        assert target.call("echo", {}).ok
        with pytest.raises(TargetError) as crashed:
            target.call("crash", {})
        assert KEY not in str(crashed.value) and "***" in str(crashed.value)
        with pytest.raises(TargetError, match="not sent"):
            target.call("echo", {})
    finally:
        target.close()


def test_a_bad_start_answer_stops_the_run(adapter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BAD_START", "1")
    target = open_target(f"cmd-lines:{adapter}", limits=Limits())
    with pytest.raises(HarnessError, match="cannot start"):
        target.preflight()
    target.close()


def marked(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(int(name))
            except OSError:
                pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_close_ends_the_command_and_every_process_it_started(adapter: str) -> None:
    marker = f"memconform-lines-test-{uuid.uuid4().hex}"
    target = opened(adapter)
    try:
        assert target.call("spawn", {"marker": marker}).ok
        for _ in range(100):  # the grandchild has started (it is seen before close, so its absence after means something)
            if marked(marker):
                break
            time.sleep(0.05)
        assert marked(marker), "the grandchild never started: the test proves nothing"
    finally:
        target.close()
    assert marked(marker) == [] and target.left_pids == []
    with pytest.raises(TargetError, match="closed"):
        target.call("echo", {})


def test_a_suite_runs_the_same_against_its_reference_served_long_lived(tmp_path: Path,
                                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    """A `ci` run of the EMP suite against its reference served over cmd-lines: (starting 300 ms late,
    as a slow product would) has every outcome of the same run in process (the contract's, made once per
    session: tests/contract_kit.py); the footer counts its calls, from one process."""
    serve = f"{sys.executable} -m memconform.targets.lines_serve reference:emp --sleep-at-start 0.3"
    folder = tmp_path / "long-lived"
    subprocess.run([sys.executable, "-m", "memconform", "run", "--suite", "emp", "--profile", "ci",
                    "--target", f"cmd-lines:{serve}", "--report-dir", str(folder)], capture_output=True, text=True, timeout=600)
    records = [json.loads(line) for line in (folder / "report.jsonl").read_text().splitlines()]
    long_lived = {r["check_id"]: r["outcome"] for r in records if r.get("type") == "result"}
    calls = records[-1]["calls"]
    assert [c["suite"] for c in calls] == ["emp"] and calls[0]["calls"] > 0, calls
    assert calls[0]["processes"] == 1  # one start for the whole run
    print("long-lived", calls[0])
    in_process = {check: outcome for check, (outcome, _, _) in reference_run("emp", shared_folder(tmp_path_factory)).items()}
    assert long_lived == in_process
    assert "passed" in long_lived.values()


def test_a_template_naming_per_call_files_is_refused(adapter: str) -> None:
    with pytest.raises(HarnessError, match="workdir"):
        open_target(f"cmd-lines:{adapter} {{op}} {{input}}", limits=Limits())
