"""The HTTP target: one seam, bounds from the first byte, caps on raw and decoded bytes, no cookies,
no redirects, guarded JSON, a fresh connection per check, and the stall note judged on injected figures.

Socket-free where sockets are not the point (httpx.MockTransport); real loopback servers for the
deadline reaching socket reads and for a connection left dirty by the server.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from memconform.core.profile import Limits
from memconform.core.results import HarnessError, TargetError, Unsupported
from memconform.targets import Route, open_target
from memconform.targets.base import MAX_JSON_DEPTH, Reply, Request, parse_json
from memconform.targets.http import HttpTarget
from memconform.targets.nodelay import judge_stall

KEY = "s3cret-key-for-tests"
ROUTES = {
    "ok": Route("POST", "/ok"),
    "get": Route("GET", "/item/{id}", body="none"),
    "missing": Route("POST", "/missing"),
    "reject": Route("POST", "/reject"),
    "boom": Route("POST", "/boom"),
    "garbage": Route("POST", "/garbage"),
    "any": Route("POST", "/any", statuses="returned"),
}


def mock(handler: Callable[[httpx.Request], httpx.Response], **limits: Any) -> HttpTarget:
    return HttpTarget("http://target.test", ROUTES, Limits(**limits), KEY, transport=httpx.MockTransport(handler))


def json_response(status: int, body: Any, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(body).encode(), headers={"content-type": "application/json", **headers})


# ---- one seam, one Reply ------------------------------------------------------------------------

def test_request_object_and_positional_form_are_the_same_call() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(200, {"got": json.loads(request.content)})

    t = mock(handler)
    first = t.call(Request("ok", {"a": "é"}))
    second = t.call("ok", {"a": "é"})
    assert first.body == second.body == {"got": {"a": "é"}}
    assert first.ok and first.status == 200 and first.http_status == 200 and first.method == "POST"
    assert [r.headers["authorization"] for r in seen] == [f"Bearer {KEY}"] * 2
    assert seen[0].headers["content-type"] == "application/json"


def test_path_params_are_quoted_and_auth_can_be_left_out() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(200, {})

    mock(handler).call(Request("get", path_params={"id": "a/b c"}, params={"q": "x y"}, auth=False))
    assert seen[0].url.raw_path == b"/item/a%2Fb%20c?q=x+y"
    assert "authorization" not in seen[0].headers


def test_statuses_judged_by_the_route() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return {"/missing": json_response(404, {}), "/reject": json_response(422, {"success": False}),
                "/boom": httpx.Response(500, content=b"<html>oops</html>"),
                "/garbage": httpx.Response(200, content=b"<html>not json</html>"),
                "/any": httpx.Response(503, content=b"down")}[request.url.path]

    t = mock(handler)
    with pytest.raises(Unsupported):
        t.call("missing", {})
    with pytest.raises(TargetError, match="server error 500"):
        t.call("boom", {})
    with pytest.raises(TargetError, match="not JSON"):
        t.call("garbage", {})
    rejected = t.call("reject", {})
    assert not rejected.ok and rejected.status == 422 and rejected.body == {"success": False}
    returned = t.call("any", {})  # statuses="returned": the check judges a 503 itself
    assert returned.status == 503 and returned.body is None and returned.parse_error


def test_what_a_target_states_is_a_declared_method() -> None:
    t = mock(lambda r: json_response(200, {}))
    assert t.stated_facts("omp") is None
    t.state_facts("omp", {"ai_key_configured": False})
    assert t.stated_facts("omp") == {"ai_key_configured": False} and t.stated_facts("memoryai") is None
    assert mock(lambda r: json_response(200, {})).stated_facts("omp") is None  # not shared between targets


def test_credentials_in_url_refused_and_unknown_kind() -> None:
    with pytest.raises(TargetError):
        open_target("http://user:pw@127.0.0.1:1/", ROUTES)
    with pytest.raises(HarnessError, match="cannot tell the kind"):
        open_target("ftp://example")


# ---- hostile answers ----------------------------------------------------------------------------

def test_redirect_never_followed() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"location": "http://elsewhere.test/steal"})

    with pytest.raises(TargetError, match="redirect"):
        mock(handler).call("ok", {})
    assert seen == ["http://target.test/ok"]


def test_no_cookie_jar() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(200, {}, **{"set-cookie": f"session={KEY}; Path=/"})

    t = mock(handler)
    t.call("ok", {})
    t.call("ok", {})
    assert all("cookie" not in r.headers for r in seen)


def test_raw_size_cap() -> None:
    with pytest.raises(TargetError, match="exceeds the cap of 100000 bytes"):
        mock(lambda r: httpx.Response(200, stream=httpx.ByteStream(b"[" + b"0," * 60_000 + b"0]")),
             max_response_bytes=100_000).call("ok", {})


def test_gzip_bomb_is_cut_at_the_decoded_cap_without_holding_more() -> None:
    """~64 KB of gzip inflating to 64 MB, under a 1 MiB cap: a target error, and the call never holds
    much more than the cap (the old client inflated all of it)."""
    bomb = gzip_bomb(64)
    assert len(bomb) < 1024 * 1024

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(bomb),
                              headers={"content-encoding": "gzip", "content-type": "application/json"})

    t = mock(handler, max_response_bytes=1024 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(TargetError, match="once decoded"):
            t.call("ok", {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, peak


def gzip_bomb(mib: int) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    return b"".join(squeeze.compress(zeros) for _ in range(mib)) + squeeze.flush()


def test_gzip_and_deflate_within_the_cap_are_decoded() -> None:
    body = json.dumps({"n": list(range(1000))}).encode()
    encodings = {"gzip": gzip.compress(body), "deflate": zlib.compress(body),
                 "gzip, gzip": gzip.compress(gzip.compress(body))}
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    encodings["x-raw"] = raw_deflate.compress(body) + raw_deflate.flush()
    for coding, data in encodings.items():
        header = "deflate" if coding == "x-raw" else coding
        t = mock(lambda r, d=data, h=header: httpx.Response(200, stream=httpx.ByteStream(d), headers={"content-encoding": h}))
        assert t.call("ok", {}).body == {"n": list(range(1000))}, coding


def test_unasked_content_encoding_is_a_target_error() -> None:
    with pytest.raises(TargetError, match="did not ask for"):
        mock(lambda r: httpx.Response(200, stream=httpx.ByteStream(b"xx"), headers={"content-encoding": "br"})).call("ok", {})


class Endless(httpx.SyncByteStream):
    """A body that never ends (an endless chunked stream)."""

    def __init__(self) -> None:
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        while True:
            self.sent += 65536
            yield b"[" * 65536


def test_the_probe_takes_any_answer_and_sends_no_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(307, headers={"location": "/docs"})

    mock(handler).preflight()
    assert [r.url.path for r in seen] == ["/"] and "authorization" not in seen[0].headers


def test_endless_body_cut_at_the_cap_and_never_read_by_the_probe() -> None:
    stream = Endless()
    t = mock(lambda r: httpx.Response(200, stream=stream), max_response_bytes=1024 * 1024)
    t.preflight()  # the probe reads the head only
    assert stream.sent == 0
    with pytest.raises(TargetError, match="exceeds the cap"):
        t.call("ok", {})
    assert stream.sent <= 1024 * 1024 + 65536


@pytest.mark.parametrize(("raw", "why"), [
    (b"[" * 10_000 + b"]" * 10_000, "nested deeper"),
    (b'{"a": ' * 10_000 + b"1" + b"}" * 10_000, "nested deeper"),
    (b'{"x": NaN}', "NaN is not JSON"),
    (b'{"x": -Infinity}', "Infinity is not JSON"),
    (b'{"x": "\xff\xfe"}', "UnicodeDecodeError"),
    (b"", "not JSON"),
])
def test_hostile_json_is_a_parse_error_not_a_crash(raw: bytes, why: str) -> None:
    value, error = parse_json(raw)
    assert value is None and error and why in error
    t = mock(lambda r: httpx.Response(200, content=raw, headers={"content-type": "application/json"}))
    if raw:
        with pytest.raises(TargetError, match=why):
            t.call("ok", {})
    reply = t.call("any", {})
    assert reply.body is None
    with pytest.raises(TargetError):
        reply.json()


def test_json_depth_guard_allows_what_answers_need() -> None:
    nested = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert parse_json(nested)[1] is None
    assert parse_json(b'{"s": "' + b"[" * 5000 + b'"}')[1] is None  # brackets inside strings do not count
    wide = json.dumps([[i] for i in range(5000)]).encode()
    assert parse_json(wide)[0] == [[i] for i in range(5000)]
    assert parse_json(b'"\\ud800"')[0] == "\ud800"  # a lone surrogate escape is JSON: the report writer escapes it


def test_a_failed_parse_is_not_repeated() -> None:
    reply = Reply(status=200, raw=b"[" * 10_000)
    with pytest.raises(TargetError, match="nested deeper"):
        reply.json()
    reply.raw = b"[]"  # the cached verdict stands: the body is not parsed a second time
    with pytest.raises(TargetError, match="nested deeper"):
        reply.json()


@pytest.mark.parametrize("request_", [
    Request("g", route=Route("GET", "/memories/\ud800", statuses="returned")),
    Request("get", path_params={"id": "\udc00"}),
    Request("g", params={"q": "\udc00"}, route=Route("GET", "/memories", statuses="returned")),
    Request("g", headers={"Authorization": "Bearer \ud800"}, route=Route("GET", "/", statuses="returned")),
])
def test_data_the_target_handed_out_that_http_cannot_carry_is_a_target_error(request_: Request) -> None:
    """A lone surrogate in an id the target answered, sent back in a path, query or header."""
    with pytest.raises(TargetError, match="cannot"):
        mock(lambda r: json_response(200, {})).call(request_)


def test_run_deadline_refuses_every_call_at_once() -> None:
    calls: list[str] = []
    t = mock(lambda r: calls.append("sent") or json_response(200, {}), run_deadline_s=0.0)
    started = time.monotonic()
    for _ in range(50):
        with pytest.raises(TargetError, match="run budget .* is spent"):
            t.call("ok", {})
    assert calls == [] and time.monotonic() - started < 5


# ---- real sockets: the deadline reaches every read ----------------------------------------------

def raw_server(serve: Callable[[socket.socket], None]) -> tuple[str, Callable[[], None]]:
    """A TCP server on loopback running `serve(conn)` per connection, in threads."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_serve_quietly, args=(serve, conn, stop), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()

    def close() -> None:
        stop.set()
        listener.close()

    return f"http://127.0.0.1:{listener.getsockname()[1]}", close


def _serve_quietly(serve: Callable[[socket.socket], None], conn: socket.socket, stop: threading.Event) -> None:
    with conn:
        try:
            conn.recv(65536)
            serve(conn)
        except OSError:
            pass


def test_a_head_trickled_one_byte_at_a_time_ends_within_the_call_deadline() -> None:
    def trickle(conn: socket.socket) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    url, close = raw_server(trickle)
    try:
        target = HttpTarget(url, ROUTES, Limits(request_timeout_s=10, call_deadline_s=1.5), KEY)
        started = time.monotonic()
        with pytest.raises(TargetError, match="no answer in time"):
            target.call("ok", {})
        assert time.monotonic() - started < 5  # per-read timeouts alone would wait forever
        target.close()
    finally:
        close()


def test_a_server_that_never_answers_fails_the_probe_in_bounded_time() -> None:
    url, close = raw_server(lambda conn: time.sleep(30))
    try:
        target = HttpTarget(url, ROUTES, Limits(request_timeout_s=30, call_deadline_s=1.5), KEY)
        started = time.monotonic()
        with pytest.raises(HarnessError, match="does not answer"):
            target.preflight()
        assert time.monotonic() - started < 10
        target.close()
    finally:
        close()


# ---- the stall note: logic on injected measurements (never on this machine's timing) -----------

def test_stall_note_needs_a_control_to_be_confirmed() -> None:
    small = [0.040] * 25 + [0.043, 0.038]
    confirmed = judge_stall(small, [0.003] * 8)
    assert confirmed is not None and confirmed.confidence == "confirmed" and "confirmed" in confirmed.text()
    unconfirmed = judge_stall(small, [0.003] * 2)  # too few large answers to compare with
    assert unconfirmed is not None and unconfirmed.confidence == "unconfirmed" and "busy machine" in unconfirmed.text()
    assert judge_stall(small, [0.041] * 10) is None  # large answers as slow: the machine, not the peer
    assert judge_stall(small, [0.030] * 10) is None  # only 10 ms apart: no stall pattern
    assert judge_stall([0.040] * 5, [0.003] * 10) is None  # too few small requests
    assert judge_stall([0.002] * 30, [0.003] * 10) is None
    assert judge_stall([0.060] * 30, [0.003] * 10) is None  # slow, but not the 40 ms pattern


# ---- a fresh connection per check ----------------------------------------------------------------

HOOKS = ("/v1/x-memconform/decay", "/v1/x-memconform/delete", "/v1/x-memconform/delete-many")


def keep_alive_front(upstream: str, drains_404: bool) -> tuple[str, Callable[[], None]]:
    """An HTTP/1.1 keep-alive server in front of the MemoryAI reference that lacks the optional hook
    routes. The sloppy one answers their 404 without reading the request body, so the body's bytes
    are read as the start of the next request on that connection; its twin drains the body first."""
    import http.server

    forward = httpx.Client(base_url=upstream, trust_env=False)

    class Front(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if self.path in HOOKS:
                if drains_404:
                    self.rfile.read(length)
                self.answer(404, b'{"detail": "not here"}', "application/json")
                return
            body = self.rfile.read(length)
            got = forward.request("POST", self.path, content=body, headers={"content-type": self.headers.get("content-type", "")})
            self.answer(got.status_code, got.content, got.headers.get("content-type", ""))

        def do_GET(self) -> None:
            got = forward.get(self.path)
            self.answer(got.status_code, got.content, got.headers.get("content-type", ""))

        def answer(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Front)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        forward.close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def memoryai_verdicts(url: str) -> dict[str, str]:
    from memconform.core.profile import Profile
    from memconform.run.session import execute_run

    # each hook check (404 here) followed by checks that would reuse its connection
    around_hooks = ["dna_never_decayed", "core_memory_types_recognized", "embedding_mismatch_dropped",
                    "deleted_not_exported", "counts_accurate_scoped"]
    outcome = execute_run(["memoryai"], url, Profile.named("ci"), None, check_ids=around_hooks)
    return {r.check_id: r.outcome.value for r in outcome.results}


def test_a_404_that_leaves_the_body_unread_does_not_leak_into_the_next_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.brain import ReferenceBrain
    from memconform.suites.memoryai.reference.http_app import make_app

    upstreams = [serve_in_thread(make_app(ReferenceBrain())) for _ in range(4)]
    fronts = [keep_alive_front(upstreams[0][0], drains_404=False), keep_alive_front(upstreams[1][0], drains_404=True)]
    try:
        sloppy, twin = (memoryai_verdicts(url) for url, _ in fronts)
        assert sloppy == twin
        assert any(o == "skipped" for o in twin.values()) and any(o == "passed" for o in twin.values())
        # inside one check too (no fresh pool per check): a 4xx to a request with a body ends its connection
        monkeypatch.setattr(HttpTarget, "begin_check", lambda self: None)
        within = keep_alive_front(upstreams[2][0], drains_404=False)
        fronts.append(within)
        assert memoryai_verdicts(within[0]) == twin
        # the test can tell: on one reused connection the sloppy server's leftovers change verdicts
        monkeypatch.setattr(HttpTarget, "_drop_connections", lambda self, why: None)
        reused = keep_alive_front(upstreams[3][0], drains_404=False)
        fronts.append(reused)
        assert memoryai_verdicts(reused[0]) != twin
    finally:
        for _, stop in fronts + upstreams:
            stop()


# ---- the OMP client goes through the same seam ------------------------------------------------------

def omp_context(handler: Callable[[httpx.Request], httpx.Response]) -> Any:
    from memconform.core.profile import Profile
    from memconform.core.runner import Context
    from memconform.core.suite import get_suite

    target = HttpTarget("http://omp.test", {}, Limits(), KEY, transport=httpx.MockTransport(handler))
    return Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci"))


def test_omp_client_replies_are_the_one_reply_type() -> None:
    from memconform.suites.omp import client as c

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return json_response(404, {"error": "memory_not_found", "message": "m", "details": {}})

    ctx = omp_context(handler)
    reply = c.get(ctx, "mem_1", key="other-key")
    assert isinstance(reply, Reply) and Reply is Reply
    assert (reply.status, reply.ok, reply.body["error"], reply.method, reply.path) == (404, False, "memory_not_found", "GET", "/memories/mem_1")
    assert seen[0].url.path == "/v1/memories/mem_1" and seen[0].headers["authorization"] == "Bearer other-key"
    c.health(ctx)
    assert "authorization" not in seen[1].headers  # health is asked without a key


def test_omp_preflight_timeout_is_a_harness_error() -> None:
    from memconform.suites.omp import client as c

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("silent", request=request)

    with pytest.raises(HarnessError, match="OMP preflight could not reach the target: GET /v1/memories"):
        c.preflight_send(omp_context(handler), "GET", "/memories", params={"limit": "1"}, record=False, quiet=True)
