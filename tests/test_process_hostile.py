"""The hostile zoo for cmd:, dir: and python: targets, each run through `memconform run` in a subprocess.

Every case must end in bounded time and memory with a complete report (footer, junit.xml,
summary.md, strict JSON), no check passed (errored; inconclusive where the suite could not even seed
the target; failed only where the fake answers well-formed but wrong JSON), the canary
key nowhere (terminal included), no process of the target left, nothing written outside the
report folder (no .hypothesis/ in the working directory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

HERE = Path(__file__).parent
HOSTILE = HERE / "hostile"
MEMCONFORM = Path(sys.executable).with_name("memconform")
CANARY = "mc-canary-7d1f0b2e9c4a4e55b0c3d9e8a1f2b3c4"
CHECKS = ["amps.schema_valid", "amps.sensitivity_travels"]  # one through export, one through import_export
MAX_RUN_S = 90
MAX_RSS_KIB = 600 * 1024


def run_memconform(cwd: Path, target: str, checks: list[str] = CHECKS) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    env["MEMCONFORM_CANARY"] = CANARY  # the fake implementations find it here too
    env["PYTHONPATH"] = str(HERE)
    argv = [str(MEMCONFORM), "run", "--suite", "amps", "--target", target, "--api-key", CANARY,
            "--report-dir", "rep", *[a for c in checks for a in ("--check", c)]]
    started = time.monotonic()
    with open(cwd / "out.txt", "wb") as out, open(cwd / "err.txt", "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        try:
            status, peak_kib = _wait_watching_memory(proc, MAX_RUN_S)
        except TimeoutError:
            proc.kill()
            proc.wait()
            raise AssertionError(f"memconform run against {target} did not end within {MAX_RUN_S}s") from None
    return {"code": os.waitstatus_to_exitcode(status), "seconds": time.monotonic() - started, "maxrss_kib": peak_kib,
            "out": (cwd / "out.txt").read_text("utf-8", "replace"), "err": (cwd / "err.txt").read_text("utf-8", "replace")}


def _wait_watching_memory(proc: subprocess.Popen, timeout: float) -> tuple[int, int]:
    """The exit status and memconform's own peak resident memory (KiB).

    The peak is the VmHWM of its address space, read while it runs: wait4's ru_maxrss would start
    from the size of this pytest process (Linux carries the forked copy's high-water mark across
    exec), so it measured the test runner, not memconform."""
    deadline = time.monotonic() + timeout
    peak = 0
    while time.monotonic() < deadline:
        peak = max(peak, _high_water_kib(proc.pid))
        pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, peak
        time.sleep(0.02)
    raise TimeoutError


def _high_water_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def strict(line: str):
    def no_constant(name):
        raise ValueError(f"bare {name} in the report")

    return json.loads(line, parse_constant=no_constant)


def assert_survived(cwd: Path, run: dict, expected_files: set[str], answers_json: bool = False) -> None:
    """`answers_json`: the fake answers well-formed (if wrong) JSON, so a check may fail on it; never pass."""
    context = f"\nstdout:\n{run['out'][-3000:]}\nstderr:\n{run['err'][-2000:]}"
    assert run["code"] == 1, f"exit {run['code']}" + context
    assert "internal error" not in run["err"] + run["out"], context
    assert 0 < run["maxrss_kib"] < MAX_RSS_KIB, run["maxrss_kib"]  # 0: never observed running
    lines = [strict(line) for line in (cwd / "rep" / "report.jsonl").read_text("utf-8").splitlines()]
    results = [line for line in lines if line.get("type") == "result"]
    assert lines[-1].get("type") == "footer", "the report has no footer" + context
    assert (cwd / "rep" / "junit.xml").is_file() and (cwd / "rep" / "summary.md").is_file()
    # errored, or inconclusive where the suite could not even seed the target; never passed
    allowed = {"errored", "skipped", "failed"} if answers_json else {"errored", "skipped"}
    outcomes = [(r["check_id"], r["outcome"], r.get("reason", "")[:200]) for r in results]
    assert results and all(r["outcome"] in allowed for r in results), outcomes
    assert all(r.get("inconclusive") or not r.get("not_applicable") for r in results if r["outcome"] == "skipped"), outcomes
    assert answers_json or any(r["outcome"] == "errored" for r in results), outcomes
    verdicts = [v["verdict"] for v in lines[-1]["levels"]]
    assert not any(v.partition(": ")[2].startswith("conformant") for v in verdicts), verdicts
    # the canary nowhere: not whole, not either half (a value cut before redaction leaves one)
    pieces = (CANARY, CANARY[:20], CANARY[20:])
    texts = {"terminal": run["out"] + run["err"]}
    for path in (cwd / "rep").rglob("*"):
        if path.is_file():
            texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
    leaks = [(where, piece) for where, text in texts.items() for piece in pieces if piece in text]
    assert leaks == [], leaks
    assert not any("root:x:0:0" in text for text in texts.values())  # nothing read through a symlink to /etc/passwd
    assert {p.name for p in cwd.iterdir()} == expected_files | {"rep", "out.txt", "err.txt"}  # no .hypothesis/ here


def survivors(track: Path) -> list[str]:
    token = f"memconform-hostile-{track.name}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
    return found


CMD_MODES = ["hang", "trickle", "flood", "fifo", "symlink-passwd", "symlink-zero", "huge", "fork", "daemon", "echo-key"]


@pytest.mark.parametrize("mode", CMD_MODES)
def test_hostile_command(tmp_path, mode):
    track = tmp_path / f"track-{mode}-{uuid.uuid4().hex[:8]}"  # unique: see survivors()
    track.mkdir()
    (tmp_path / "target.json").write_text(json.dumps({
        "default": f"{sys.executable} {HOSTILE / 'cmd_impl.py'} {mode} {track} {{op}} {{input}} {{output}}",
        "timeout_s": 1.5,
    }))
    run = run_memconform(tmp_path, "cmd:@target.json")
    assert_survived(tmp_path, run, {"target.json", track.name})
    assert survivors(track) == []


def test_command_that_cannot_start_is_one_startup_error(tmp_path):
    run = run_memconform(tmp_path, "cmd:./not-there.sh {op} {input} {output}")
    assert run["code"] == 2, run
    assert run["err"].strip().count("\n") == 0 and run["err"].startswith("memconform: error:"), run["err"]
    assert "does not exist" in run["err"]


DIR_MODES = ["silent", "symlink-passwd", "symlink-zero", "fifo", "huge", "swap-inbox", "echo-key"]


@pytest.mark.parametrize("mode", DIR_MODES)
def test_hostile_drop_folder(tmp_path, mode):
    root = tmp_path / "drop"
    (root / "inbox").mkdir(parents=True)
    (root / "outbox").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "target.json").write_text(json.dumps({"path": "drop", "wait_s": 1.0}))
    env = dict(os.environ, MEMCONFORM_CANARY=CANARY)
    impl = subprocess.Popen([sys.executable, str(HOSTILE / "dir_impl.py"), mode, str(root), str(elsewhere)], env=env)
    try:
        run = run_memconform(tmp_path, "dir:@target.json")
    finally:
        impl.kill()
        impl.wait()
    assert_survived(tmp_path, run, {"target.json", "drop", "elsewhere"}, answers_json=mode == "echo-key")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("attr", ["EchoKey", "NotJson", "DeepAndOdd", "Exits"])
def test_hostile_python_object(tmp_path, attr):
    run = run_memconform(tmp_path, f"python:hostile.py_impl:{attr}")
    assert_survived(tmp_path, run, set(), answers_json=attr == "EchoKey")


def test_hypothesis_files_go_to_the_report_folder_not_the_working_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    proc = subprocess.run([str(MEMCONFORM), "run", "--suite", "memoryai", "--check", "memoryai.roundtrip_equivalent",
                           "--report-dir", "rep"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=MAX_RUN_S)
    assert proc.returncode in (0, 1), proc.stderr
    assert (tmp_path / "rep" / ".hypothesis").is_dir()  # hypothesis did write (its Unicode table cache) ...
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # ... and only inside the report folder
