"""Hostile implementations that attack the harness itself, each run end to end through `memconform
run` with the survival criteria of tests/zoo_support.py: a command that kills or stops its
supervisor (its strays must not outlive the call), stops itself or floods stdout forever; targets
that echo the key url-encoded, JSON-escaped, \\u-escaped or cut at the edge of a buffer."""

from __future__ import annotations

import json
import os
import sys

import pytest
from hostile import http_zoo
from zoo_support import HERE, KEY, assert_survived, key_leaks, run_cli, strict_lines, survivors

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

WITHIN_S = 60


def escaping_command(tmp_path, mode: str, timeout_s: float = 30) -> str:
    track = tmp_path / f"track-{mode}"
    track.mkdir()
    (tmp_path / "target.json").write_text(json.dumps({
        "default": f"{sys.executable} {HERE / 'hostile' / 'cmd_escape.py'} {mode} {track} {{op}} {{input}} {{output}}",
        "timeout_s": timeout_s,
    }))
    return track.name


@pytest.mark.parametrize("mode", ["kill-supervisor", "stop-supervisor"])
def test_a_command_that_kills_or_stops_its_supervisor_leaves_no_process(tmp_path, mode):
    """Without a PID namespace (asked for, as where none can be had); tests/test_pid_namespace.py with one."""
    track = escaping_command(tmp_path, mode)
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "20"],
                  extra_env={"MEMCONFORM_CONTAINMENT": "subreaper"})
    results = assert_survived(tmp_path, run, {"target.json", track}, WITHIN_S)
    assert survivors(tmp_path / track) == []
    reasons = " ".join(r.get("reason", "") for r in results)
    assert "did not let its supervisor report" in reasons, reasons[:1500]
    assert "none is left" in reasons  # what was verified, said as such
    header = strict_lines(tmp_path / "rep" / "report.jsonl")[0]
    assert header["containment"].startswith("subreaper (the command can signal memconform: no PID namespace here:")


@pytest.mark.parametrize("mode", ["stop-self", "flood-forever"])
def test_a_command_that_stops_itself_or_floods_forever_is_bounded(tmp_path, mode):
    track = escaping_command(tmp_path, mode)
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "5"])
    assert_survived(tmp_path, run, {"target.json", track}, WITHIN_S)
    assert survivors(tmp_path / track) == []


def test_a_command_that_echoes_the_key_encoded_and_cut_leaks_no_form_of_it(tmp_path):
    track = escaping_command(tmp_path, "echo-key-encoded", timeout_s=10)
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "30"])
    results = assert_survived(tmp_path, run, {"target.json", track}, WITHIN_S)
    assert any(r["outcome"] == "errored" for r in results)


def test_an_http_target_that_echoes_the_key_encoded_and_cut_leaks_no_form_of_it(tmp_path):
    with http_zoo.serve("echo-key") as url:
        run = run_cli(tmp_path, ["run", "--suite", "memoryai", "--target", url, "--run-budget", "30"])
    assert_survived(tmp_path, run, set(), WITHIN_S, answers_json=True)


def test_the_leak_detector_sees_every_form_it_is_meant_to(tmp_path):
    """A negative control: the survival criterion would catch each form the fakes send."""
    forms = http_zoo.key_forms(KEY) + [KEY[3:3 + 16], KEY[-16:], KEY.replace("/", "&#x2F;")]
    for form in forms:
        assert key_leaks({"x": f"..{form}.."}) != [], form
    assert key_leaks({"x": KEY[:15] + "***" + KEY[15:28]}) == []


ORPHAN = """
import os, sys, time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
time.sleep(0.3)
"""


def test_a_sweep_ends_the_orphans_of_a_supervisor_that_is_gone(tmp_path):
    import subprocess
    import uuid

    from memconform.targets import contain
    from memconform.targets.supervise import below, process_table

    if not contain.available() or not contain.become_subreaper():
        pytest.skip("needs Linux /proc and prctl(PR_SET_CHILD_SUBREAPER)")
    token = uuid.uuid4().hex
    env = {**os.environ, contain.TOKEN_VARIABLE: token}
    stand_in = subprocess.Popen([sys.executable, "-c", ORPHAN], env=env, start_new_session=True)
    stand_in.wait()  # the "supervisor" is gone; its double-forked grandchild was re-parented to this process
    tagged = f"{contain.TOKEN_VARIABLE}={token}".encode()
    orphans = [pid for pid in below(process_table(), os.getpid()) if contain.carries(pid, tagged)]
    assert orphans, "the orphan should be this process's descendant (subreaper)"
    killed, left = contain.sweep(contain.Call(supervisor=stand_in.pid, token=token))
    assert killed >= 1 and left == []
    assert not [pid for pid in process_table() if contain.carries(pid, tagged)]
