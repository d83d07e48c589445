"""Every target kind: bounded time and size, no redirects, process groups killed, errors not passes."""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
from pathlib import Path

import pytest
from memconform.core.model import HarnessError, TargetError, Unsupported
from memconform.core.profile import Limits
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
        assert t.call("reject", {}).status == "rejected"


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
    with pytest.raises(TargetError, match="process group was killed"):
        t.call("hang", {})
    assert time.monotonic() - started < 10
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
