"""Every target kind: bounded time and size, no redirects, process groups killed, errors not passes."""

from __future__ import annotations

import http.server
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from memconform.core.profile import Limits
from memconform.core.results import HarnessError, TargetError, Unsupported
from memconform.targets import Route, open_target

ROUTES = {
    "ok": Route("POST", "/ok"),
    "big": Route("POST", "/big"),
    "slow": Route("POST", "/slow"),
    "redirect": Route("POST", "/redirect"),
    "missing": Route("POST", "/missing"),
    "boom": Route("POST", "/boom"),
    "garbage": Route("POST", "/garbage"),
    "reject": Route("POST", "/reject"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.server.seen.append((self.path, dict(self.headers), body))
        if self.path == "/ok":
            self._send(200, json.dumps({"auth": self.headers.get("Authorization")}).encode())
        elif self.path == "/big":
            self._send(200, b"[" + b"0," * 600_000 + b"0]")
        elif self.path == "/slow":
            time.sleep(2)
            self._send(200, b"{}")
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/boom":
            self._send(500, b"<html>oops</html>")
        elif self.path == "/garbage":
            self._send(200, b"<html>not json</html>")
        elif self.path == "/reject":
            self._send(422, b'{"success": false}')
        else:
            self._send(404, b"{}")

    def _send(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.seen = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()


def http_target(server, **limits):
    return open_target(f"http://127.0.0.1:{server.server_address[1]}", ROUTES, Limits(**limits), api_key="s3cret-key")


def test_http_sends_bearer_and_parses_json(server):
    with http_target(server) as t:
        reply = t.call("ok", {"a": 1})
    assert reply.ok and reply.body == {"auth": "Bearer s3cret-key"}


def test_http_size_cap_is_an_error(server):
    with http_target(server, max_response_bytes=100_000) as t, pytest.raises(TargetError, match="exceeds the cap"):
        t.call("big", {})


def test_http_timeout_is_an_error(server):
    with http_target(server, request_timeout_s=0.3) as t, pytest.raises(TargetError, match="no answer"):
        t.call("slow", {})


def test_http_redirect_not_followed(server):
    with http_target(server) as t, pytest.raises(TargetError, match="redirect"):
        t.call("redirect", {})


def test_http_404_route_is_unsupported_and_500_an_error(server):
    with http_target(server) as t:
        with pytest.raises(Unsupported):
            t.call("missing", {})
        with pytest.raises(TargetError, match="server error 500"):
            t.call("boom", {})
        with pytest.raises(TargetError, match="not JSON"):
            t.call("garbage", {})
        assert not t.call("reject", {}).ok  # an HTTP Reply's status is the status code (422)


def test_http_credentials_in_url_refused():
    with pytest.raises(TargetError):
        open_target("http://user:pw@127.0.0.1:1/", ROUTES)


def test_unknown_target_kind_is_a_harness_error():
    with pytest.raises(HarnessError, match="cannot tell the kind"):
        open_target("ftp://example")


SCRIPT = """
import json, os, sys, time
op, inp, out = sys.argv[1], sys.argv[2], sys.argv[3]
if op == "echo":
    json.dump({"got": json.load(open(inp)), "key": os.environ.get("MEMCONFORM_API_KEY")}, open(out, "w"))
elif op == "reject":
    json.dump({"success": False}, open(out, "w")); sys.exit(3)
elif op == "nope":
    sys.exit(4)
elif op == "crash":
    sys.exit(7)
elif op == "hang":
    import subprocess
    subprocess.Popen([sys.executable, "-c", "import time; open(sys.argv[1], 'w').write(str(__import__('os').getpid())); time.sleep(60)".replace("sys.argv[1]", repr(out + ".child"))])
    time.sleep(60)
"""


def cmd_target(tmp_path: Path, timeout: float = 20):
    script = tmp_path / "impl.py"
    script.write_text(SCRIPT)
    config = tmp_path / "target.json"
    config.write_text(json.dumps({"default": f"{sys.executable} {script} {{op}} {{input}} {{output}}", "timeout_s": timeout}))
    return open_target(f"cmd:@{config}", api_key="k3y")


def test_cmd_protocol_exit_codes(tmp_path):
    t = cmd_target(tmp_path)
    assert t.call("echo", {"x": "é"}).body == {"got": {"x": "é"}, "key": "k3y"}
    assert t.call("reject", {}).status == "rejected"
    with pytest.raises(Unsupported):
        t.call("nope", {})
    with pytest.raises(TargetError, match="exited 7"):
        t.call("crash", {})


def test_cmd_timeout_kills_the_process_group(tmp_path):
    import os

    t = cmd_target(tmp_path, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(TargetError, match="every process it started were killed"):
        t.call("hang", {})
    assert time.monotonic() - started < 30  # far below the hang it bounds: unboundedness, not speed
    # the grandchild was in the same group: it is gone too (its pid file lived in the call's workdir,
    # so we look for any leftover sleeper of ours instead)
    time.sleep(0.2)
    leftovers = [p for p in os.listdir("/proc") if p.isdigit() and b"time.sleep(60)" in _cmdline(p)]
    assert leftovers == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_dir_target_round_trip_and_timeout(tmp_path):
    (tmp_path / "inbox").mkdir()
    (tmp_path / "outbox").mkdir()
    stop = threading.Event()

    def responder():
        while not stop.is_set():
            for f in (tmp_path / "inbox").glob("*.json"):
                request_id, op, _ = f.name.split(".")
                req = json.loads(f.read_text())
                f.unlink()
                if op == "echo":
                    reply = {"status": "ok", "body": req["body"]}
                else:
                    continue  # never answers: the harness must time out
                (tmp_path / "outbox" / f"{request_id}.json").write_text(json.dumps(reply))
            time.sleep(0.01)

    thread = threading.Thread(target=responder, daemon=True)
    thread.start()
    try:
        t = open_target(f"dir:{tmp_path}", limits=Limits(dir_wait_s=0.5))
        assert t.call("echo", {"n": 1}).body == {"n": 1}
        with pytest.raises(TargetError, match="no reply"):
            t.call("silent", {})
    finally:
        stop.set()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inbox", "outbox"]


def test_dir_target_needs_its_folders(tmp_path):
    with pytest.raises(HarnessError, match="inbox"):
        open_target(f"dir:{tmp_path}")


# ---- cmd: processes and files ------------------------------------------

HOSTILE_CMD = Path(__file__).parent / "hostile" / "cmd_impl.py"


def hostile_cmd(tmp_path: Path, mode: str, timeout: float = 20, **limits) -> tuple:
    track = tmp_path / f"track-{mode}-{uuid.uuid4().hex[:8]}"  # the token in the processes' command lines:
    track.mkdir()  # unique, or a test of the same mode on another xdist worker finds this one's processes
    config = tmp_path / f"{mode}.json"
    config.write_text(json.dumps({"default": f"{sys.executable} {HOSTILE_CMD} {mode} {track} {{op}} {{input}} {{output}}",
                                  "timeout_s": timeout}))
    return open_target(f"cmd:@{config}", limits=Limits(**limits), api_key="k3y-canary"), track


def survivors(track: Path) -> list[str]:
    """Processes whose command line carries the test's token: none may outlive a call."""
    token = f"memconform-hostile-{track.name}".encode()
    return [p for p in os.listdir("/proc") if p.isdigit() and token in _cmdline(p)]


@pytest.mark.parametrize("mode", ["fork", "daemon"])
def test_cmd_descendants_are_killed_after_every_call(tmp_path, mode):
    # "daemon" double-forks and calls setsid(): no process-group kill reaches it, the subreaper does
    t, track = hostile_cmd(tmp_path, mode)
    with pytest.raises(TargetError, match="exited 7"):
        t.call("export", {})
    assert survivors(track) == []


def test_cmd_hang_with_children_ends_at_the_deadline(tmp_path):
    t, track = hostile_cmd(tmp_path, "hang", timeout=1.0)
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"did not finish within 1(\.0)?s"):
        t.call("export", {})
    assert time.monotonic() - started < 30  # far below the hang it bounds: unboundedness, not speed
    assert survivors(track) == []


def test_cmd_flooding_stdout_costs_bounded_memory(tmp_path):
    import resource

    t, track = hostile_cmd(tmp_path, "flood")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reply = t.call("export", {})  # exits 0 with no {output}: an empty reply, not a crash
    assert reply.raw == b""
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB: far below 512 MiB flooded
    assert "bytes not kept]" in t.last_stderr and t.last_stderr.endswith("x")


@pytest.mark.parametrize("mode,why", [
    ("fifo", "is a FIFO"), ("symlink-passwd", "symbolic link"), ("symlink-zero", "symbolic link"),
    ("huge", "exceeds the cap"),
])
def test_cmd_output_must_be_a_regular_file_within_the_cap(tmp_path, mode, why):
    t, _ = hostile_cmd(tmp_path, mode, max_response_bytes=1024 * 1024)
    started = time.monotonic()
    with pytest.raises(TargetError, match=why) as err:
        t.call("export", {})
    assert time.monotonic() - started < 30  # far below the hang it bounds: unboundedness, not speed
    assert "root:" not in str(err.value)


def test_cmd_trickle_ends_at_the_deadline(tmp_path):
    t, track = hostile_cmd(tmp_path, "trickle", timeout=1.5)
    with pytest.raises(TargetError, match="did not finish"):
        t.call("export", {})
    assert survivors(track) == []


@pytest.mark.parametrize("template,why", [
    ("no-such-program-memconform {op}", "not found on PATH"),
    ("./missing.sh {op}", "does not exist"),
    ("./plain.txt {op}", "not executable"),
])
def test_cmd_that_cannot_start_is_one_startup_error(tmp_path, monkeypatch, template, why):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.txt").write_text("echo hi")
    t = open_target(f"cmd:{template}")
    with pytest.raises(HarnessError, match=why):
        t.preflight()


@pytest.mark.parametrize("template", ["tool {nope}", "tool {op", "tool 'unclosed"])
def test_cmd_bad_template_is_a_startup_error(template):
    with pytest.raises(HarnessError, match="bad command template"):
        open_target(f"cmd:{template}")


def test_cmd_relative_paths_resolve_against_the_callers_folder(tmp_path, monkeypatch):
    (tmp_path / "impl").mkdir()
    script = tmp_path / "impl" / "run.py"
    script.write_text("import json, os, sys\njson.dump({'cwd': os.getcwd(), 'op': sys.argv[1]}, open(sys.argv[2], 'w'))\n")
    (tmp_path / "impl" / "run.sh").write_text(f"#!/bin/sh\nexec {sys.executable} \"$(dirname \"$0\")/run.py\" \"$@\"\n")
    (tmp_path / "impl" / "run.sh").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    for spec in (f"cmd:{sys.executable} impl/run.py {{op}} {{output}}", "cmd:./impl/run.sh {op} {output}"):
        t = open_target(spec)
        t.preflight()
        body = t.call("export", {}).body
        assert body["op"] == "export"
        assert body["cwd"] != str(tmp_path)  # it ran in its private work folder, as documented


# ---- dir: replies that are not plain files, folders swapped for symlinks ------------------------

HOSTILE_DIR = Path(__file__).parent / "hostile" / "dir_impl.py"


@pytest.fixture()
def hostile_dir(tmp_path):
    started = []

    def start(mode: str, *extra: str) -> Path:
        root = tmp_path / f"drop-{mode}"
        (root / "inbox").mkdir(parents=True)
        (root / "outbox").mkdir()
        import subprocess

        started.append(subprocess.Popen([sys.executable, str(HOSTILE_DIR), mode, str(root), *extra]))
        return root

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("mode,why", [
    ("symlink-passwd", "symbolic link"), ("symlink-zero", "symbolic link"), ("fifo", "is a FIFO"),
    ("huge", "exceeds the cap"), ("silent", "no reply"),
])
def test_dir_hostile_replies_are_errors_in_bounded_time(hostile_dir, mode, why):
    root = hostile_dir(mode)
    # the wait is the verdict only for the silent one; the others answer once their process is up, which on a
    # busy machine took longer than 1.5 s (a huge reply then ended "no reply", not "exceeds the cap")
    wait = 1.5 if mode == "silent" else 60.0
    t = open_target(f"dir:{root}", limits=Limits(dir_wait_s=wait, max_response_bytes=1024 * 1024))
    started = time.monotonic()
    with pytest.raises(TargetError, match=why) as err:
        t.call("export", {"a": 1})
    assert time.monotonic() - started < wait + 30  # far below the hang it bounds: unboundedness, not speed
    assert "root:" not in str(err.value)
    t.close()
    assert not (root / "outbox").exists() or list((root / "outbox").iterdir()) == []  # the planted reply is removed


def test_dir_inbox_swapped_for_a_symlink_writes_nothing_elsewhere(hostile_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = hostile_dir("swap-inbox", str(elsewhere))
    t = open_target(f"dir:{root}", limits=Limits(dir_wait_s=0.5))
    for _ in range(2):  # the first request makes it swap the inbox; the second is written after the swap
        with pytest.raises(TargetError, match="no reply"):
            t.call("export", {"a": 1})
    assert (root / "inbox").is_symlink()
    assert list(elsewhere.iterdir()) == []


def test_dir_raw_bytes_are_spliced_verbatim(tmp_path):
    (tmp_path / "inbox").mkdir()
    (tmp_path / "outbox").mkdir()
    t = open_target(f"dir:{tmp_path}", limits=Limits(dir_wait_s=0.2))
    with pytest.raises(TargetError):
        t.call("import", raw=b'{"a": 1, "a": 2}')
    t.close()
    # the request was taken back when nobody picked it up; drop one and look at it before that
    t = open_target(f"dir:{tmp_path}", limits=Limits(dir_wait_s=5))
    seen = []

    def responder():
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            for f in (tmp_path / "inbox").glob("*.json"):
                seen.append(f.read_bytes())
                (tmp_path / "outbox" / (f.name.split(".")[0] + ".json")).write_text('{"status": "rejected", "body": null}')
            time.sleep(0.01)

    thread = threading.Thread(target=responder)
    thread.start()
    assert t.call("import", raw=b'{"a": 1, "a": 2}').status == "rejected"
    thread.join()
    assert seen[0].endswith(b'"body": {"a": 1, "a": 2}}')


# ---- python: bounded calls, replies that are not JSON data ---------------------------------------

class _Hostile:
    def __init__(self) -> None:
        self.release = threading.Event()

    def hang(self, body, **params):
        self.release.wait(30)
        return {}

    def exits(self, body, **params):
        raise SystemExit(3)

    def not_json(self, body, **params):
        return {"when": object()}

    def cycle(self, body, **params):
        loop: list = []
        loop.append(loop)
        return loop

    def surrogate(self, body, **params):
        return {"text": "\ud800 lone"}

    def echo(self, body, **params):
        return {"got": body.decode() if isinstance(body, bytes) else body}


def test_python_hang_is_bounded_and_marks_the_target_hung():
    from memconform.targets.pyobj import PythonTarget

    impl = _Hostile()
    t = PythonTarget(impl, "hostile", Limits(call_deadline_s=0.3))
    started = time.monotonic()
    with pytest.raises(TargetError, match="did not return within 0.3s"):
        t.call("hang", {})
    with pytest.raises(TargetError, match="not sent: the target was marked hung"):
        t.call("echo", {})  # at once: the run stays bounded
    assert time.monotonic() - started < 20  # far below the hang it bounds: unboundedness, not speed
    impl.release.set()


def test_a_python_call_cut_by_the_check_budget_that_then_returns_does_not_hang_the_target():
    from memconform.targets.pyobj import PythonTarget

    impl = _Hostile()
    t = PythonTarget(impl, "hostile", Limits(call_deadline_s=30, check_deadline_s=0.2))
    t.clock.start_check()
    threading.Timer(0.6, impl.release.set).start()  # returns after the check budget, within its own deadline
    with pytest.raises(TargetError, match="the check's budget ran out during this call"):
        t.call("hang", {})
    assert t.clock.hung is None
    t.clock.start_check()  # the next check: the target answers
    assert t.call("echo", {"a": 1}).body == {"got": {"a": 1}}


@pytest.mark.parametrize("op,why", [("exits", "SystemExit"), ("not_json", "not JSON data"), ("cycle", "not JSON data")])
def test_python_crashes_and_non_json_replies_are_errors(op, why):
    from memconform.targets.pyobj import PythonTarget

    with pytest.raises(TargetError, match=why):
        PythonTarget(_Hostile(), "hostile").call(op, {})


def test_python_replies_with_lone_surrogates_stay_valid_utf8_and_raw_bytes_reach_the_method():
    from memconform.targets.pyobj import PythonTarget

    t = PythonTarget(_Hostile(), "hostile")
    reply = t.call("surrogate", {})
    reply.raw.decode("utf-8")
    assert t.call("echo", raw=b'{"a": 1, "a": 2}').body == {"got": '{"a": 1, "a": 2}'}


def test_every_kind_stops_calling_at_the_run_deadline(tmp_path):
    from memconform.targets.pyobj import PythonTarget

    t, track = hostile_cmd(tmp_path, "hang", timeout=30, run_deadline_s=1.0)
    started = time.monotonic()
    with pytest.raises(TargetError, match="within"):
        t.call("export", {})  # the run deadline cuts the 30 s timeout short
    with pytest.raises(TargetError, match="run budget"):
        t.call("export", {})
    assert time.monotonic() - started < 30  # far below the hang it bounds: unboundedness, not speed
    assert survivors(track) == []
    (tmp_path / "inbox").mkdir()
    (tmp_path / "outbox").mkdir()
    with pytest.raises(TargetError, match="run budget"):
        open_target(f"dir:{tmp_path}", limits=Limits(run_deadline_s=0)).call("export", {})
    with pytest.raises(TargetError, match="run budget"):
        PythonTarget(_Hostile(), "hostile", Limits(run_deadline_s=0)).call("echo", {})
