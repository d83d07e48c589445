"""A `cmd:` command in its own PID namespace cannot signal memconform, and nothing it starts escapes.

Hostile commands (tests/hostile/cmd_escape.py) stop and kill every process above them that /proc
shows, kill whoever is their parent again and again (and every process they may signal), or fork,
double-fork and setsid() and exit at once. Each is run end to end through `memconform run`: the run
ends, the report is complete and names the containment, no process of the command is left, and
every signal the command aimed at memconform was refused (the command logs each attempt). Where no
PID namespace can be had these tests skip, saying why; the hostile commands refuse to attack
outside a namespace (they would reach the test runner's own ancestors), and tests/test_hostile_zoo.py
covers the subreaper containment used there.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys

import pytest
from zoo_support import HERE, assert_survived, run_cli, strict_lines, survivors

pytestmark = [pytest.mark.mutants, pytest.mark.slow]

WITHIN_S = 60


def namespace_or_skip() -> None:
    from memconform.targets import contain

    answer = contain.namespace_probe()
    if answer != "pid-namespace":
        pytest.skip(f"no PID namespace here: {answer}")


def hostile(tmp_path, mode: str) -> str:
    track = tmp_path / f"track-{mode}"
    track.mkdir()
    (track / "ceiling").write_text(str(os.getpid()))  # the attacks stop below the test runner
    (tmp_path / "target.json").write_text(json.dumps({
        "default": f"{sys.executable} {HERE / 'hostile' / 'cmd_escape.py'} {mode} {track} {{op}} {{input}} {{output}}",
        "timeout_s": 5,
    }))
    return track.name


def attacks(track) -> list[tuple[int, int, str]]:
    lines = (track / "attacks.log").read_text().splitlines()
    assert not any(line.startswith("refused:") for line in lines), lines[:3]
    return [(int(pid), int(sig), result) for pid, sig, result in (line.split(" ", 2) for line in lines)]


def run_hostile(tmp_path, mode: str) -> tuple[dict, list[dict], list[tuple[int, int, str]]]:
    namespace_or_skip()
    track = hostile(tmp_path, mode)
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "30"])
    results = assert_survived(tmp_path, run, {"target.json", track}, WITHIN_S)
    assert survivors(tmp_path / track) == []
    assert strict_lines(tmp_path / "rep" / "report.jsonl")[0]["containment"] == "pid-namespace"
    reasons = " ".join(r.get("reason", "") for r in results)
    assert "command exited 7" in reasons, reasons[:1500]  # each call ran to its end, under a supervisor that reported
    assert "did not let its supervisor report" not in reasons
    return run, results, attacks(tmp_path / track)


def test_a_command_that_stops_and_kills_every_process_above_it_cannot_reach_memconform(tmp_path):
    run, _, tried = run_hostile(tmp_path, "kill-parent-chain")
    at_memconform = [(sig, result) for pid, sig, result in tried if pid == run["pid"]]
    # the command saw memconform's pid in /proc and aimed both signals at it, every time in vain
    assert {sig for sig, _ in at_memconform} == {int(signal.SIGSTOP), int(signal.SIGKILL)}
    assert all(result == f"refused {errno.ESRCH}" for _, result in at_memconform), at_memconform


def test_a_command_that_kills_its_parent_again_and_again_ends_nothing_outside(tmp_path):
    run, _, tried = run_hostile(tmp_path, "kill-ppid-repeatedly")
    parents = {pid for pid, _, _ in tried if pid != -1}
    assert parents == {1}  # its parent is the namespace's init, whatever it does: never memconform
    assert run["pid"] not in parents
    assert len(tried) >= 150  # every attack was made (50 rounds of three), and the call still reported


@pytest.mark.parametrize("containment", ["pid-namespace", "subreaper"])
def test_a_command_that_forks_double_forks_and_setsids_leaves_nothing(tmp_path, containment):
    """It attacks no process, so it runs under either containment (the subreaper one asked for)."""
    if containment == "pid-namespace":
        namespace_or_skip()
    track = hostile(tmp_path, "fork-setsid-and-exit")
    run = run_cli(tmp_path, ["run", "--suite", "amps", "--target", "cmd:@target.json", "--run-budget", "30"],
                  extra_env={"MEMCONFORM_CONTAINMENT": "subreaper"} if containment == "subreaper" else None)
    results = assert_survived(tmp_path, run, {"target.json", track}, WITHIN_S)
    assert survivors(tmp_path / track) == []
    assert strict_lines(tmp_path / "rep" / "report.jsonl")[0]["containment"].startswith(containment)
    reasons = " ".join(r.get("reason", "") for r in results)
    assert "command exited 7" in reasons, reasons[:1500]


def test_the_hostile_commands_refuse_to_attack_outside_a_namespace(tmp_path):
    """A control for the two above: run directly (no namespace) the command makes no attack at all."""
    import subprocess

    track = tmp_path / "track"
    track.mkdir()
    (track / "ceiling").write_text(str(os.getpid()))
    done = subprocess.run([sys.executable, str(HERE / "hostile" / "cmd_escape.py"), "kill-parent-chain", str(track),
                           "export", "in", "out"], capture_output=True, timeout=30, check=False)
    assert done.returncode == 98
    assert (track / "attacks.log").read_text() == "refused: not in a PID namespace\n"


def test_the_containment_names_the_namespace_or_why_there_is_none():
    from memconform.targets import contain

    answer = contain.containment()
    if contain.namespaced():
        assert answer == "pid-namespace"
    else:
        assert answer.startswith("subreaper (the command can signal memconform: no PID namespace here: ")
        assert answer.endswith(")") and len(answer) > 80  # the reason is named
