"""Evidence nobody can forge (issue 31): what a target does to the run's folder, what a handed bundle
says, and where a run's files go.

- a `cmd:` target that rewrites the folder the run writes into, or the report folder, during the run:
  the run ends "tampered with" (exit 2), nothing is swapped in; certify writes no bundle from a run a
  library forged into; where the platform can hide the folder (a mount namespace), the command sees it
  empty and cannot write it;
- the footer's digest chain: `report`, `diff` and `verify` name a report changed after it was written;
- `verify` trusts only the key the verifier names, refuses duplicate members anywhere, and shows every
  control character of a bundle visibly;
- the report folder: refused before the run when it is a file, read-only, or holds files no run wrote;
  a symlinked one resolved once, the user's files kept; two runs on one folder never mix;
- a key in the target URL (userinfo, path, query) in no output and not in the bundle.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.evidence.attest import fingerprint, load_private, sign
from memconform.evidence.certify import digest

HERE = Path(__file__).parent
MEMCONFORM = Path(sys.executable).with_name("memconform")
TAMPER = HERE / "hostile" / "tamper_impl.py"
FAST = ["--suite", "emp", "--check", "emp.writer_version_1x", "--profile", "ci"]  # one check, a few calls
MUTANT = "python:memconform.suites.memoryai.mutants:WrongChecksum"


def run_cli(cwd: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """The installed `memconform`, in a process of its own (its containment probed afresh)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    return subprocess.run([str(MEMCONFORM), *argv], cwd=cwd, env={**base, **env}, capture_output=True, text=True,
                          timeout=300, check=False)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".hypothesis" not in p.parts}


def tamper_target(mode: str, folder: Path, seen: Path) -> str:
    return f"cmd:{sys.executable} {TAMPER} {mode} {folder} {seen} {{op}} {{input}} {{output}}"


# --- a target that rewrites the run's folder --------------------------------------------------------

@pytest.mark.parametrize("mode", ["rename-in", "modify", "remove", "place-rename-in", "place-modify", "rename-in-escape"])
def test_a_command_that_rewrites_the_runs_folder_ends_the_run_tampered_with(tmp_path: Path, mode: str) -> None:
    rep, seen = tmp_path / "rep", tmp_path / "seen.txt"
    good = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep"])
    assert good.returncode == 0, good.stderr
    before = files_of(rep)
    # no PID or mount namespace: the command can reach the folder, so only detection stands between it and the report
    run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep", "--target", tamper_target(mode, rep, seen)],
                  MEMCONFORM_CONTAINMENT="subreaper")
    did = seen.read_text("utf-8")
    assert f"{mode} done" in did, did  # the attack happened (a positive control for the detection below)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr
    assert run.stderr.count("memconform: error:") == 1 and "tampered with" in run.stderr, run.stderr
    assert "internal error" not in run.stdout + run.stderr
    assert "\x1b" not in run.stdout + run.stderr  # a name the target chose is shown, never obeyed
    if mode == "rename-in-escape":
        assert "\\x1b]0;pwned\\x07forged.jsonl appeared" in run.stderr, run.stderr
    if mode.startswith("place-"):
        assert "rep/" in run.stderr  # the report folder named as what changed
    else:
        assert files_of(rep) == before  # nothing swapped in: the last good run, whole
    kept = tmp_path / ".rep.tampered"
    assert kept.is_dir() and (kept / "report.jsonl").exists() != (mode == "remove")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".rep.tampered", "rep", "seen.txt"]  # the lock gone too


def test_certify_signs_nothing_from_a_tampered_run(tmp_path: Path, vendor: Path) -> None:
    """certify runs whole suites (no --check): a library forging into the run's folder once, then serving as
    the reference, keeps that run short (MemoryAI in process; EMP as a command took 60 CPU s for the same
    verdict). A command's forgery is caught by the same session check (the `run` tests above)."""
    out = tmp_path / "bundle.json"
    run = run_cli(tmp_path, ["certify", "--suite", "memoryai", "--profile", "ci", "--out", str(out), "--key", str(vendor),
                             "--target", "python:tamper_pyobj:ForgesOnce"],
                  PYTHONPATH=str(HERE / "hostile"), TAMPER_FOLDER=str(tmp_path / "bundle.json.report"))
    assert run.returncode == 2 and "tampered with" in run.stderr, run.stderr[-2000:]
    assert "badges/memoryai-level-1.svg appeared" in run.stderr  # the forgery happened, and was what was seen
    assert not out.exists()


def test_where_a_mount_namespace_can_be_had_the_command_cannot_see_the_folder(tmp_path: Path) -> None:
    from memconform.targets.contain import hide_probe

    if hide_probe() != "hidden":
        pytest.skip(f"no mount namespace here: {hide_probe()}")
    rep, seen = tmp_path / "rep", tmp_path / "seen.txt"
    assert run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep"]).returncode == 0
    before = files_of(rep)
    run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep", "--target", tamper_target("rename-in", rep, seen)])
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    did = seen.read_text("utf-8").splitlines()
    assert did and all(line.startswith("listed ") and line.endswith(": []") or " refused in " in line for line in did), did
    assert any(" refused in " in line for line in did)  # it tried, and could not write
    header = json.loads((rep / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert header["folder_view"] == "hidden (mount namespace)" and header["containment"] == "pid-namespace"
    assert files_of(rep / "previous") == before  # the run went in, the last one became previous/


def test_the_header_says_when_the_folder_is_in_view(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep", "--target", tamper_target("listing", tmp_path / "rep", seen)],
                  MEMCONFORM_CONTAINMENT="subreaper")
    assert run.returncode == 0, run.stderr
    header = json.loads((tmp_path / "rep" / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert header["folder_view"].startswith("visible to the command (no PID namespace")
    assert header["folder_view"].endswith("a change to it is still detected")


# --- the digest chain ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def a_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chain") / "rep"
    assert main(["run", "--suite", "memoryai", "--target", MUTANT, "--profile", "ci", "--seed", "3",
                 "--report-dir", str(folder), "--check", "memoryai.checksum_present_and_valid", "--check",
                 "memoryai.envelope_format_literal"]) == 1
    return folder / "report.jsonl"


def test_the_footer_chain_is_the_sha256_of_the_lines_before_it(a_report: Path) -> None:
    import hashlib

    from memconform.core.report import Report

    text = a_report.read_bytes()
    before_footer = text[: text.rstrip(b"\n").rfind(b"\n") + 1]
    footer = json.loads(text.splitlines()[-1])
    assert footer["chain"] == {"algorithm": "sha256", "lines": before_footer.count(b"\n"),
                               "value": hashlib.sha256(before_footer).hexdigest()}
    assert Report.from_path(a_report).verify_chain(required=True) is None


def _changed(a_report: Path, tmp_path: Path, how: str) -> Path:
    lines = a_report.read_text("utf-8").splitlines()
    results = [i for i, x in enumerate(lines) if json.loads(x)["type"] == "result"]
    if how == "outcome":  # a failure turned into a pass, the footer left as it was
        (failed,) = [i for i in results if json.loads(lines[i])["outcome"] == "failed"]
        line = json.loads(lines[failed])
        line.update(outcome="passed", failures=[])
        lines[failed] = json.dumps(line, ensure_ascii=False)
    elif how == "dropped":
        del lines[results[-1]]
    elif how == "spaced":  # the same JSON, other bytes
        lines[0] = lines[0].replace(", ", ",  ", 1)
    out = tmp_path / f"{how}.jsonl"
    out.write_text("\n".join(lines) + "\n", "utf-8")
    return out


@pytest.mark.parametrize("how", ["outcome", "dropped", "spaced"])
def test_report_and_diff_name_a_report_changed_after_it_was_written(a_report: Path, tmp_path: Path, how: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    changed = _changed(a_report, tmp_path, how)
    assert main(["report", str(changed), "--md", str(tmp_path / "s.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("memconform: error:") == 1 and f"{changed} was changed after it was written" in err
    assert not (tmp_path / "s.md").exists()
    assert main(["diff", str(a_report), str(changed)]) == 2
    assert "was changed after it was written" in capsys.readouterr().err
    # the untouched report renders and compares (the positive control)
    assert main(["report", str(a_report), "--md", str(tmp_path / "s.md")]) == 0
    assert main(["diff", str(a_report), str(a_report)]) == 0


# --- verify -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vendor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    key = tmp_path_factory.mktemp("vendor") / "vendor.key"
    assert main(["keygen", str(key)]) == 0
    return key


ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2K\r\x9b31m\u202e"  # OSC 52 clipboard, erase line, CR, C1 CSI, RLO


@pytest.fixture(scope="module")
def envelope(tmp_path_factory: pytest.TempPathFactory, vendor: Path) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "bundle.json"
    assert main(["certify", "--suite", "memoryai", "--target", MUTANT, "--out", str(out), "--key", str(vendor),
                 "--profile", "ci", "--seed", "5", "--target-name", f"brain{ESCAPES}signed by key SHA256:00",
                 "--target-version", f"1{ESCAPES}"]) == 1
    return out


def _statement(envelope: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(base64.b64decode(json.loads(envelope.read_text("utf-8"))["payload"]))
    return data


def test_verify_without_a_named_key_is_never_0(envelope: Path, vendor: Path, capsys: pytest.CaptureFixture[str]) -> None:
    named = fingerprint(load_private(vendor).public_key())
    assert main(["verify", str(envelope)]) == 1
    out = capsys.readouterr().out
    assert "signature valid, signer unverified" in out and "verified (signature" not in out
    assert main(["verify", str(envelope), "--key", f"{vendor}.pub"]) == 0
    assert main(["verify", str(envelope), "--fingerprint", named]) == 0
    assert main(["verify", str(envelope), "--fingerprint", "SHA256:" + "0" * 64]) == 1
    assert main(["verify", str(envelope), "--fingerprint", "not-a-fingerprint"]) == 2


def test_verify_shows_every_control_character_of_a_bundle_visibly(envelope: Path, vendor: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(envelope), "--key", f"{vendor}.pub"]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2K\\x0d\\x9b31m\\u202e" in out  # shown, not obeyed
    controls = [ch for ch in out if ch != "\n" and (ord(ch) < 0x20 or 0x7f <= ord(ch) <= 0x9f or ch == "\u202e")]
    assert controls == []


def _signed(statement: dict[str, Any], vendor: Path, payload: bytes | None = None) -> dict[str, Any]:
    """The vendor's own signature over a statement (or over raw payload bytes): only the duplicate decides."""
    from memconform.evidence.attest import PAYLOAD_TYPE, pae

    key = load_private(vendor)
    if payload is None:
        return sign(statement, key)
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": fingerprint(key.public_key()), "sig": base64.b64encode(key.sign(pae(PAYLOAD_TYPE, payload))).decode()}]}


def test_verify_refuses_a_member_named_twice_anywhere(envelope: Path, vendor: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    pub = f"{vendor}.pub"
    genuine = json.loads(envelope.read_text("utf-8"))
    # in the envelope: a second payload member a first-wins reader would take
    text = envelope.read_text("utf-8")
    doubled = text.replace('"payloadType"', '"payload": "e30=", "payloadType"', 1)
    (tmp_path / "envelope.json").write_text(doubled)
    assert main(["verify", str(tmp_path / "envelope.json"), "--key", pub]) == 1
    assert "names a member twice" in capsys.readouterr().out
    # in the signed Statement: a second predicate, signed by the vendor's own key
    st = _statement(envelope)
    raw = json.dumps(st, sort_keys=True, separators=(",", ":"))
    forged_predicate = json.dumps({**st["predicate"], "claims": []}, sort_keys=True, separators=(",", ":"))
    payload = raw.replace('"predicate":', f'"predicate":{forged_predicate},"predicate":', 1).encode()
    (tmp_path / "statement.json").write_text(json.dumps(_signed(st, vendor, payload)))
    assert main(["verify", str(tmp_path / "statement.json"), "--key", pub]) == 1
    assert "the signed Statement names a member twice" in capsys.readouterr().out
    # in a report line: an outcome named twice, resealed and signed by the vendor's key
    bundle = st["predicate"]
    index = next(i for i, x in enumerate(bundle["report"]) if json.loads(x)["type"] == "result")
    bundle["report"][index] = bundle["report"][index].replace('"outcome": ', '"outcome": "passed", "outcome": ', 1)
    bundle["digest"] = {"algorithm": "sha256", "value": digest(bundle)}
    import hashlib

    text = "\n".join(bundle["report"]) + "\n"
    st["subject"] = [{"name": "report.jsonl", "digest": {"sha256": hashlib.sha256(text.encode()).hexdigest()}}]
    (tmp_path / "line.json").write_text(json.dumps(_signed(st, vendor)))
    assert main(["verify", str(tmp_path / "line.json"), "--key", pub]) == 1
    assert "duplicate name 'outcome'" in capsys.readouterr().out  # the one bounded reader's words
    # the genuine bundle still verifies (the positive control)
    (tmp_path / "genuine.json").write_text(json.dumps(genuine))
    assert main(["verify", str(tmp_path / "genuine.json"), "--key", pub]) == 0


def test_verify_recomputes_the_chain_of_the_signed_report(envelope: Path, vendor: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A vendor's own bundle whose report lines were changed under their chain: the signature is good,
    the report is not the one the run wrote."""
    import hashlib

    st = _statement(envelope)
    bundle = st["predicate"]
    bundle["report"][0] = bundle["report"][0].replace(", ", ",  ", 1)  # the same JSON, other bytes
    bundle["digest"] = {"algorithm": "sha256", "value": digest(bundle)}
    text = "\n".join(bundle["report"]) + "\n"
    st["subject"] = [{"name": "report.jsonl", "digest": {"sha256": hashlib.sha256(text.encode()).hexdigest()}}]
    (tmp_path / "b.json").write_text(json.dumps(_signed(st, vendor)))
    assert main(["verify", str(tmp_path / "b.json"), "--key", f"{vendor}.pub"]) == 1
    assert "the bundle's report was changed after it was written" in capsys.readouterr().out


# --- the report folder ----------------------------------------------------------------------------------

def test_a_file_as_the_report_folder_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rep").write_text("my notes")
    assert main(["run", *FAST, "--report-dir", str(tmp_path / "rep")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("memconform: error:") == 1 and "is not a folder" in captured.err
    assert "[1/1]" not in captured.out  # refused before any check ran
    assert (tmp_path / "rep").read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_a_read_only_parent_is_refused_before_the_run(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) here to mount a folder read-only")
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no user and mount namespace here: {probe.stderr.decode()[:200]}")
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    script = (f"mount --bind {frozen} {frozen} && mount -o remount,bind,ro {frozen} && "
              f"exec {MEMCONFORM} run {' '.join(FAST)} --report-dir {frozen}/rep")
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("memconform: error:") == 1 and "cannot be written" in done.stderr, done.stderr
    assert "[1/1]" not in done.stdout and "internal error" not in done.stderr
    assert list(frozen.iterdir()) == []


def test_a_folder_holding_files_no_run_wrote_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "site"
    (mine / "examples").mkdir(parents=True)
    (mine / "examples" / "demo.json").write_text("{}")
    (mine / "badges").mkdir()
    assert main(["run", *FAST, "--report-dir", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "holds badges, examples that no memconform run wrote" in err
    assert (mine / "examples" / "demo.json").read_text() == "{}" and (mine / "badges").is_dir()


def test_a_symlinked_report_folder_keeps_the_users_files(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "latest"
    link = tmp_path / "rep"
    assert run_cli(tmp_path, ["run", *FAST, "--report-dir", str(real), "--seed", "1"]).returncode == 0
    (real / "notes.txt").write_text("mine")
    (real / "mine").mkdir()
    (real / "mine" / "keep.txt").write_text("keep")
    link.symlink_to(real, target_is_directory=True)
    for seed in ("2", "3"):
        run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep", "--seed", seed])
        assert run.returncode == 0, run.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert (real / "notes.txt").read_text() == "mine" and (real / "mine" / "keep.txt").read_text() == "keep"
    assert '"seed": 3' in (real / "report.jsonl").read_text().splitlines()[0]
    assert '"seed": 2' in (real / "previous" / "report.jsonl").read_text().splitlines()[0]
    # a symlink to the user's own site folder (examples/ and badges/ of theirs): refused, nothing lost
    site = tmp_path / "site"
    (site / "examples").mkdir(parents=True)
    (site / "examples" / "a.json").write_text("{}")
    (site / "badges").mkdir()
    (site / "badges" / "b.svg").write_text("<svg/>")
    (tmp_path / "rep2").symlink_to(site, target_is_directory=True)
    run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep2"])
    assert run.returncode == 2 and "no memconform run wrote" in run.stderr
    assert files_of(site) == {"examples/a.json": b"{}", "badges/b.svg": b"<svg/>"}


def test_two_runs_on_one_folder_never_mix_20_times(tmp_path: Path) -> None:
    """Two runs started together on one folder, 20 times: both end 0, the later one in place and the
    other as previous/, each whole (its own chain, its own junit.xml); nothing else beside the folder."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    for repeat in range(20):
        procs = [subprocess.Popen([str(MEMCONFORM), "run", "--suite", "amps", "--check", "amps.schema_valid",
                                   "--profile", "ci", "--seed", str(100 * repeat + n), "--report-dir", "rep"],
                                  cwd=tmp_path, env=base, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for n in (1, 2)]
        errors = [p.communicate(timeout=300)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], (repeat, errors)
        seeds = {_seed_of_amps(tmp_path / "rep"), _seed_of_amps(tmp_path / "rep" / "previous")}
        assert seeds == {100 * repeat + 1, 100 * repeat + 2}, (repeat, seeds)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"], repeat


def _seed_of_amps(folder: Path) -> int:
    from memconform.core.report import Report

    report = Report.from_path(folder / "report.jsonl")
    assert report.verify_chain(str(folder), required=True) is None
    assert [r["check_id"] for r in report.results] == ["amps.schema_valid"]
    assert "amps.schema_valid" in (folder / "junit.xml").read_text()
    return int(report.header["seed"])


def test_a_second_run_that_cannot_wait_names_the_first(tmp_path: Path) -> None:
    from memconform.run.report_folder import take_lock

    held = take_lock(tmp_path / "rep")
    assert held is not None
    try:
        run = run_cli(tmp_path, ["run", *FAST, "--report-dir", "rep"], MEMCONFORM_LOCK_WAIT_S="0.2")
    finally:
        held.close()
    assert run.returncode == 2 and run.stderr.count("memconform: error:") == 1, run.stderr
    assert f"in use by memconform process {os.getpid()}" in run.stderr and "waited 0.2 s" in run.stderr
    assert not (tmp_path / "rep" / "report.jsonl").exists()


# --- secrets in the target URL --------------------------------------------------------------------------

URL_SECRETS = ("userpass-Secret", "sk-pathsecret0123456789", "querysecret-0123", "plainpathkey42")


def test_a_key_in_the_target_url_is_in_no_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on: the start-up check fails, the report is written
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = (f"http://127.0.0.1:{port}/v1/sk-pathsecret0123456789/api_key/plainpathkey42/"
              "?api_key=querysecret-0123&limit=10")
    assert main(["run", "--suite", "memoryai", "--profile", "ci", "--target", target,
                 "--report-dir", str(tmp_path / "rep")]) == 2
    captured = capsys.readouterr()
    texts = {"terminal": captured.out + captured.err,
             **{str(p): p.read_text("utf-8") for p in (tmp_path / "rep").rglob("*") if p.is_file()}}
    assert any(f"127.0.0.1:{port}/v1/" in t and "limit=10" in t for t in texts.values())  # named, its secrets not
    assert [(where, s) for where, t in texts.items() for s in URL_SECRETS if s in t] == []
    target = f"http://someone:userpass-Secret@127.0.0.1:{port}/"
    assert main(["run", "--suite", "memoryai", "--profile", "ci", "--target", target,
                 "--report-dir", str(tmp_path / "rep2")]) == 2
    captured = capsys.readouterr()
    texts = {"terminal": captured.out + captured.err,
             **{str(p): p.read_text("utf-8") for p in (tmp_path / "rep2").rglob("*") if p.is_file()}}
    assert [(where, s) for where, t in texts.items() for s in URL_SECRETS if s in t] == []


def test_a_key_in_the_target_url_is_not_in_the_signed_bundle(tmp_path: Path, vendor: Path) -> None:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.brain import ReferenceBrain
    from memconform.suites.memoryai.reference.http_app import make_app

    url, stop = serve_in_thread(make_app(ReferenceBrain()))
    try:
        out = tmp_path / "bundle.json"
        target = f"{url.rstrip('/')}/?token=querysecret-0123"
        code = main(["certify", "--suite", "memoryai", "--target", target, "--out", str(out), "--key", str(vendor),
                     "--profile", "ci", "--seed", "2"])
    finally:
        stop()
    assert code in (0, 1)
    st = _statement(out)
    assert "querysecret-0123" not in json.dumps(st) and "querysecret-0123" not in out.read_text()
    assert st["predicate"]["target"]["address"].startswith(url.rstrip("/")) and "token=" in st["predicate"]["target"]["address"]
    assert main(["verify", str(out), "--key", f"{vendor}.pub"]) == code


def test_an_in_process_target_that_writes_into_the_runs_folder_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Not only commands: any target that reaches the folder (here a library in memconform's own process)."""
    monkeypatch.setenv("TAMPER_FOLDER", str(tmp_path / "rep"))
    monkeypatch.syspath_prepend(str(HERE / "hostile"))
    import tamper_pyobj  # type: ignore[import-not-found]

    code = main(["run", "--suite", "memoryai", "--target", "python:tamper_pyobj:ForgesIntoTheRunsFolder", "--profile",
                 "ci", "--report-dir", str(tmp_path / "rep"), "--check", "memoryai.envelope_format_literal"])
    err = capsys.readouterr().err
    assert tamper_pyobj.ForgesIntoTheRunsFolder.forged  # the forgery happened
    assert code == 2 and "tampered with" in err and "badges/memoryai-level-1.svg" in err, err
    assert not (tmp_path / "rep" / "report.jsonl").exists()  # nothing swapped in
    assert "summary.md appeared (a symlink)" in err and not (tmp_path / "outside.txt").exists()  # not written through
