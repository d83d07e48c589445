"""The command line: bad input gets one line and exit 2; fixture verdicts agree with the corpus."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from memconform.cli.main import main
from memconform.kit.fixtures_loader import iter_cases

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
    checks = json.loads(out)["checks"]
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
    target = "python:memconform.suites.memoryai.mutants:RoundtripLosesData"
    code, out, _ = run(capsys, "run", "--suite", "memoryai", "--target", target, "--check", "roundtrip_equivalent",
                       "--report-dir", str(tmp_path))
    assert code == 1 and "replay with: memconform replay" in out
    printed = re.search(r"replay with: (memconform replay [^\n;]*)", out).group(1)
    argv = shlex.split(printed)[1:]
    assert "--target" in argv  # run as printed, it replays against the same target
    code, out, _ = run(capsys, *argv)
    assert code == 1 and "reproduced" in out
    code, out, _ = run(capsys, "replay", argv[1], "--target", "reference:memoryai")  # the reference has no such bug
    assert code == 0 and "no failure" in out


def test_run_writes_all_three_reports(capsys, tmp_path):
    code, out, _ = run(capsys, "run", "--suite", "memoryai", "--report-dir", str(tmp_path))
    assert code == 0
    assert "Level 2 Consumer: conformant" in out
    assert {p.name for p in tmp_path.iterdir()} >= {"report.jsonl", "junit.xml", "summary.md"}


# ---- the first five minutes ------------------------------------------------------

AMPS = {"export_version": "0.1", "exported_at": "2026-01-01T00:00:00Z", "subject": {"id": "s"}, "atoms": [],
        "artifacts": []}
INTERNALS = ("Traceback", "RecursionError", "set_int_max_str_digits", "utf-8-sig", "JSONDecodeError", "internal error")


def test_validate_shows_received_expected_and_path(capsys, tmp_path):
    doc = tmp_path / "export.json"
    doc.write_text(json.dumps({k: v for k, v in AMPS.items() if k != "export_version"}))  # a near-miss of AMPS
    code, out, _ = run(capsys, "validate", str(doc))
    assert code == 1 and "amps (named by near-miss of its envelope) invalid" in out
    assert "'export_version' is a required property" in out and "at $" in out and "received {" in out


@pytest.mark.parametrize("name,content,where", [
    ("bom", b"\xef\xbb\xbf" + json.dumps(AMPS).encode(), "byte 0"),
    ("nan", json.dumps(dict(AMPS, atoms=[{"confidence": 0.5}])).replace("0.5", "NaN").encode(), "$.atoms[0].confidence"),
    ("deep", json.dumps(dict(AMPS, artifacts="X")).replace('"X"', "[" * 100_000 + "]" * 100_000).encode(), "line 1"),
    ("digits", json.dumps(dict(AMPS, atoms=[{"confidence": 7}])).replace("7", "9" * 5000).encode(), "$.atoms[0].confidence"),
    ("truncated", json.dumps(AMPS).encode()[:40], "line 1 column"),
    ("not-utf8", json.dumps(AMPS).replace("s", "\udcff", 1).encode("utf-8", "surrogateescape"), "byte"),
])
def test_a_document_not_well_formed_is_one_named_failure(capsys, tmp_path, name, content, where):
    doc = tmp_path / f"{name}.amps.json"  # named by its envelope or, when unreadable, by its file name
    doc.write_bytes(content)
    code, out, err = run(capsys, "validate", str(doc), "--json")
    verdict = json.loads(out)
    assert code == 1 and verdict["verdict"] == "invalid" and verdict["failed"] == ["amps.well_formed"]
    (result,) = verdict["results"]
    assert result["failures"][0]["path"].startswith(where)
    code, text, err = run(capsys, "validate", str(doc))
    assert code == 1 and "FAIL  amps.well_formed" in text and where in text
    assert not any(s in text + err for s in INTERNALS)


def test_a_truncated_streamed_archive_is_one_failure_not_many_errors(capsys, tmp_path):
    path, case = next((p, c) for p, c in iter_cases("memorizz") if c.get("verdict") == "valid")
    doc = tmp_path / "cut.json"
    raw = json.dumps(case["document"])
    doc.write_text(raw[: len(raw) // 2])
    code, out, _ = run(capsys, "validate", str(doc), "--json")
    verdict = json.loads(out)
    assert code == 1 and verdict["failed"] == ["memorizz.well_formed"] and verdict["errored"] == []


def test_exit_2_only_when_unreadable_or_unnamed(capsys, tmp_path):
    (tmp_path / "plain.json").write_text('{"hello": 1}')
    (tmp_path / "cut.memorizz.json").write_text('{"format": "memorizz.mem')
    assert run(capsys, "validate", str(tmp_path / "plain.json"))[0] == 2
    assert run(capsys, "validate", str(tmp_path / "nothing.json"))[0] == 2
    code, out, _ = run(capsys, "validate", str(tmp_path / "cut.memorizz.json"))
    assert code == 1 and "memorizz.well_formed" in out


def test_errored_stays_errored_in_every_output(capsys, tmp_path, monkeypatch):
    import dataclasses

    from memconform.core.registry import REGISTRY
    from memconform.core.suite import get_suite

    def boom(doc, ctx):
        raise RuntimeError("simulated harness bug")
        yield

    check = REGISTRY.get("amps.schema_valid")
    monkeypatch.setitem(get_suite("amps").registered(), check.id, dataclasses.replace(check, fn=boom))
    doc = tmp_path / "ok.json"
    doc.write_text(json.dumps(AMPS))
    code, out, _ = run(capsys, "validate", str(doc), "--json")
    verdict = json.loads(out)
    assert verdict["errored"] == ["amps.schema_valid"] and "amps.schema_valid" not in verdict["failed"]
    assert verdict["verdict"] == "not assessed" and code == 1
    code, out, _ = run(capsys, "validate", str(doc))
    assert "ERROR amps.schema_valid" in out and "not assessed" in out and "1 errored" in out


def test_json_always_prints_json(capsys, tmp_path):
    for argv in (["validate", str(tmp_path / "absent.json"), "--json"], ["list", "--suite", "nosuch", "--json"],
                 ["coverage", "--suite", "nosuch", "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and json.loads(out)["exit_code"] == 2 and err.startswith("memconform: error:")


def test_list_into_a_closed_pipe_is_quiet():
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "memconform"
    done = subprocess.run(f"'{exe}' list --options | head -1; exit ${{PIPESTATUS[0]}}", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "" and len(done.stdout.splitlines()) == 1


def test_run_without_suite_runs_what_the_target_speaks(capsys, tmp_path):
    code, out, _ = run(capsys, "run", "--target", "python:memconform.suites.memoryai.reference.brain:ReferenceBrain",
                       "--report-dir", str(tmp_path))
    assert code == 0 and "the target speaks memoryai" in out and "suites memoryai;" in out
    code, out, _ = run(capsys, "run", "--target", "python:memconform.suites.amps.reference:ReferenceAmpsStore",
                       "--report-dir", str(tmp_path))
    assert code == 0 and "the target speaks amps" in out
    code, _, err = run(capsys, "run", "--target", "python:builtins:object", "--report-dir", str(tmp_path))
    assert code == 2 and "speaks none of the suites that can be probed" in err


def test_serve_omp_prints_a_run_line_argparse_accepts():
    import queue
    import socket
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).parent / "memconform"
    proc = subprocess.Popen([str(exe), "serve", "omp", "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True)
    reader.start()
    try:
        line, deadline = "", time.monotonic() + 60
        while "run: memconform run" not in line and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                pass
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=10)  # the pipe is at its end once the server is gone
        proc.stdout.close()
    assert "run: memconform run" in line
    argv = shlex.split(line.split("run: ", 1)[1])
    key = next(a for a in argv if a.startswith("--api-key"))
    assert key.startswith("--api-key=") and len(key) > len("--api-key=")  # a key starting with "-" still parses


def test_reproduce_lines_name_the_key_variable_never_the_key(capsys, tmp_path):
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.mutants import http_app

    url, stop = serve_in_thread(http_app("VersionNotRejected"))
    key = "canary-key-7f3a9c1e"
    try:
        code, out, err = run(capsys, "run", "--suite", "memoryai", "--target", url, "--api-key", key,
                             "--check", "rejects_newer_version", "--report-dir", str(tmp_path))
    finally:
        stop()
    assert code == 1 and 'rerun: memconform run' in out and '--api-key "$MEMCONFORM_API_KEY"' in out
    assert key not in out + err and key not in (tmp_path / "report.jsonl").read_text()


def test_a_cmd_template_with_relative_paths_runs_from_the_callers_folder(capsys, tmp_path, monkeypatch):
    """Each call runs in a private folder; ./impl.sh is resolved against the folder memconform was run from."""
    import stat
    import sys

    impl = tmp_path / "impl.sh"
    impl.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memconform.suites.emp.reference "$@"\n')
    impl.chmod(impl.stat().st_mode | stat.S_IXUSR)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "run", "--suite", "emp", "--target", "cmd:./impl.sh {op} {input} {output}",
                         "--check", "reader_newest_ts_wins", "--report-dir", str(tmp_path / "r"))
    assert code == 0 and "1 passed" in out, out + err


def test_run_without_suite_finds_an_omp_server(capsys):
    """`GET /v1/health` tells an OMP server; a MemoryAI server is not one, nor an OMP one a MemoryAI one."""
    from memconform.cli.run import probe_suites
    from memconform.core.profile import Profile
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.brain import ReferenceBrain
    from memconform.suites.memoryai.reference.http_app import make_app
    from memconform.suites.omp.reference.serve import reference_target

    omp = reference_target()
    try:
        assert probe_suites(omp.base_url, Profile.named("ci"), omp.api_key) == ["omp"]
        assert probe_suites(omp.base_url + "/v1", Profile.named("ci"), omp.api_key) == ["omp"]
    finally:
        omp.close()
    url, stop = serve_in_thread(make_app(ReferenceBrain()))
    try:
        assert probe_suites(url, Profile.named("ci"), None) == ["memoryai"]
    finally:
        stop()
    assert "the target speaks omp" in capsys.readouterr().out
