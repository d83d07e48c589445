"""HTTP targets: every exchange through `HttpTarget.send`, bounded from the first byte.

One deadline per call covers connect, the response head and the body (a socket read never waits past
it, so a head trickled one byte a second ends in a timeout); the run has a deadline too, after which
every call refuses at once. The body is capped in raw bytes and in decoded bytes (gzip and deflate are
inflated a bounded step at a time, never past the cap). No cookie jar (httpx's Client is not used: a
cookie the target sets is never sent back), no redirects followed, no proxy from the environment, the
API key only in the Authorization header. The transport is injectable (`httpx.MockTransport`), so the
harness's tests of this module need no sockets.
"""

from __future__ import annotations

import functools
import json
import ssl
import threading
import time
import zlib
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpcore
import httpx

from ..core.profile import Limits
from ..core.results import HarnessError, TargetError, Unsupported
from .base import Reply, Request, Route, Target, parse_json
from .exchanges import ExchangeLog
from .exchanges import finish as finish_exchange

PROBE_ROUTE = Route("GET", "/", body="none", response="none", statuses="returned")
PROBE_DEADLINE_S = 5.0
READ_CHUNK = 64 * 1024
DEFAULT_HEADERS = {"User-Agent": "memconform", "Accept": "*/*", "Accept-Encoding": "gzip, deflate"}

_CALL = threading.local()  # the deadline of the call running on this thread (read by the socket layer)
# A read that timed out while this process waited for a CPU (an in-process server starved on a busy machine) waits
# again that long: a hanging target leaves us blocked, not waiting for a CPU, so it is cut as before. Waits under a
# starvation sample's gap are not owed; a call is never owed more than OWED_MAX_FACTOR times its own deadline.
MIN_OWED_S = 0.05
OWED_MAX_FACTOR = 20.0


class HttpTarget(Target):
    kind = "http"

    def __init__(self, base_url: str, routes: dict[str, Route] | None = None, limits: Limits | None = None,
                 api_key: str | None = None, *, transport: httpx.BaseTransport | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.username or parts.password:
            raise TargetError("put credentials in --api-key, not in the target URL")
        self.base_url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self.description = self.base_url
        self.routes = routes or {}
        self.limits = limits or Limits()
        self.api_key = api_key
        self._injected = transport
        self._transport = transport or socket_transport()
        self.notes: list[str] = []  # what happened on the connection that a check's transcript should say
        self.exchanges = ExchangeLog()

    # -- the seam --------------------------------------------------------------------------

    def send(self, request: Request) -> Reply:
        """The one HTTP exchange: route, bounded send and read, decoding, then the route's status policy."""
        route = request.route or self.routes.get(request.op)
        if route is None:
            raise Unsupported(request.op, "no HTTP route is defined for it")
        path = route.path
        if request.path_params:
            try:
                path = path.format_map({k: quote(str(v), safe="") for k, v in request.path_params.items()})
            except (ValueError, KeyError) as exc:
                raise TargetError(f"{route.method} {route.path}: cannot fill in the path: {str(exc)[:160]}") from None
        shown = path + (f"?{urlencode(dict(request.params), errors='backslashreplace')}" if request.params else "")
        what = f"{route.method} {shown}"
        now = time.monotonic()
        call_s = PROBE_DEADLINE_S if route.response == "none" else self.limits.call_deadline_s
        deadline = self.clock.deadline(what, min(call_s, self.limits.call_deadline_s))
        outgoing = self._build(route, path, request, deadline)
        sends_body = outgoing.headers.get("content-length", "0") != "0" or "transfer-encoding" in outgoing.headers
        entry = self.exchanges.begin(outgoing)  # for the curl lines and exchanges.har (redacted there)
        try:
            raw, status, headers = self._exchange(outgoing, what, deadline, read_body=route.response != "none",
                                                  sends_body=sends_body)
        except TargetError as exc:
            entry.error = str(exc)
            raise
        finish_exchange(entry, status, headers, raw, time.monotonic() - now)
        reply = Reply(status=status, raw=raw, content_type=headers.get("content-type", ""), headers=headers,
                      elapsed_s=time.monotonic() - now, method=route.method, path=shown)
        return self._judge(route, request.op, reply)

    def _build(self, route: Route, path: str, request: Request, deadline: float) -> httpx.Request:
        headers = httpx.Headers(DEFAULT_HEADERS)
        if self.api_key and request.auth:
            headers["Authorization"] = f"Bearer {self.api_key}"
        content: bytes | None = None
        files = None
        params = dict(request.params or {})
        if route.body == "multipart":
            payload = request.raw if request.raw is not None else json.dumps(request.body, ensure_ascii=False).encode("utf-8")
            field = params.pop("_field", "file")
            files = {field: (request.filename or "bundle.json", payload, "application/json")}
        elif route.body == "json":
            if request.raw is not None:
                content = request.raw
            elif request.body is not None:
                content = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
            if content is not None:
                headers["Content-Type"] = "application/json"
        try:
            headers.update(dict(request.headers or {}))
        except (ValueError, TypeError) as exc:  # a header value the target handed out that HTTP cannot carry
            raise TargetError(f"{route.method} {path[:200]!r}: a header cannot be sent: {str(exc)[:160]}") from None
        step = max(0.001, min(self.limits.request_timeout_s, deadline - time.monotonic()))
        timeout = {"connect": step, "read": step, "write": step, "pool": step}
        try:
            return httpx.Request(route.method, self.base_url + path, params=params or None, headers=headers,
                                 content=content, files=files, extensions={"timeout": timeout})
        except (ValueError, httpx.InvalidURL) as exc:  # UnicodeEncodeError: a lone surrogate the target handed out
            raise TargetError(f"{route.method} {path[:200]!r}: cannot be sent ({type(exc).__name__}: {str(exc)[:160]}); "
                              "the path, query or headers carry data the target answered earlier") from None

    def _exchange(self, outgoing: httpx.Request, what: str, deadline: float,
                  read_body: bool = True, sends_body: bool = False) -> tuple[bytes, int, dict[str, str]]:
        cap = self.limits.max_response_bytes
        _CALL.deadline = deadline
        _CALL.starved = self.clock.starved_s
        _CALL.owed_left = OWED_MAX_FACTOR * max(0.0, deadline - time.monotonic())
        response: httpx.Response | None = None
        clean = False
        try:
            response = self._transport.handle_request(outgoing)
            headers = dict(response.headers)
            raw = _read_capped(response, what, deadline, cap) if read_body else b""
            clean = True
            self.clock.answered()
            if sends_body and response.status_code >= 400:
                self._drop_connections(f"{what} answered {response.status_code} to a request with a body: the "
                                       "target may not have read that body, so the next request goes on a new "
                                       "connection (an unread body left on a kept-alive connection would be read "
                                       "as the start of the next request)")
            return raw, response.status_code, headers
        except (httpx.TimeoutException, _Overdue):
            self.clock.timed_out(what)
            raise TargetError(f"{what}: no answer in time (bounded by "
                              f"{self.clock.cut_short(deadline, self.limits.call_deadline_s)}; "
                              f"{self.limits.request_timeout_s:g} s per step)") from None
        except httpx.HTTPError as exc:
            raise TargetError(f"{what}: {type(exc).__name__}: {str(exc)[:200]}") from None
        finally:
            _CALL.deadline = _CALL.starved = None
            if response is not None:
                response.close()
            if not clean:  # whatever the connection still holds (an unread body, half an answer) dies with it
                self._drop_connections("")

    def _drop_connections(self, why: str) -> None:
        if why and len(self.notes) < 100:  # the runner shows a few per check; a fuzzer may cause thousands
            self.notes.append(why)
        if self._injected is None:
            old, self._transport = self._transport, socket_transport()
            old.close()

    def _judge(self, route: Route, op: str, reply: Reply) -> Reply:
        what = f"{reply.method} {reply.path}"
        status = reply.status
        if route.response == "none":
            return reply  # a probe: any answer at all (a redirect to /docs included) will do
        if 300 <= status < 400:
            raise TargetError(f"{what}: answered a redirect ({status} to {reply.headers.get('location', '')[:200]!r}); "
                              "redirects are not followed")
        if route.response == "json" and reply.raw:
            reply.body, reply.parse_error = parse_json(reply.raw)
        if route.statuses == "returned":
            return reply
        if status in (404, 405) and route.absent_on_404:
            raise Unsupported(op, f"{what} answered {status}")
        if status >= 500:
            raise TargetError(f"{what}: server error {status}: {reply.raw[:200]!r}")
        if reply.parse_error and reply.ok:
            raise TargetError(f"{what}: answered {status} with a body that is {reply.parse_error}: {reply.raw[:120]!r}")
        return reply

    # -- compatibility and lifecycle -------------------------------------------------------

    def request(self, method: str, path: str, *, json_body: Any = None, content: bytes | None = None,
                params: dict[str, str] | None = None, headers: dict[str, str] | None = None, auth: bool = True) -> Reply:
        """A bare exchange (method, path) through the seam; every status comes back as a Reply."""
        return self.send(Request(f"{method} {path}", body=json_body, raw=content, params=params, headers=headers,
                                 route=Route(method, path, statuses="returned"), auth=auth))

    def preflight(self) -> None:
        """`GET /` answers at all (any status), within PROBE_DEADLINE_S; its body is never read."""
        try:
            self.send(Request("probe", route=PROBE_ROUTE, auth=False))
        except TargetError as exc:
            raise HarnessError(f"target {self.base_url} does not answer: {exc}") from None

    def begin_check(self) -> None:
        """A fresh connection pool for each check: nothing one check left on a connection reaches the next."""
        if self._injected is None:
            old, self._transport = self._transport, socket_transport()
            old.close()

    def close(self) -> None:
        self._transport.close()


def _read_capped(response: httpx.Response, what: str, deadline: float, cap: int) -> bytes:
    """The body, decoded per Content-Encoding, with raw and decoded bytes each capped and the deadline kept."""
    if response.is_stream_consumed:  # built in memory (a MockTransport's content=): httpx already decoded it
        if len(response.content) > cap:
            raise TargetError(f"{what}: response exceeds the cap of {cap} bytes")
        return response.content
    decoder = _Decoder(response.headers.get("content-encoding", ""), what)
    out = bytearray()
    received = 0
    for chunk in response.iter_raw(READ_CHUNK):
        received += len(chunk)
        if received > cap:
            raise TargetError(f"{what}: response exceeds the cap of {cap} bytes (raw)")
        out += decoder.feed(chunk, cap - len(out), cap)
        if time.monotonic() > max(deadline, getattr(_CALL, "deadline", None) or deadline):  # moved by waits owed
            raise _Overdue()
    out += decoder.flush(cap - len(out), cap)
    return bytes(out)


class _Overdue(Exception):
    """The body was still arriving when the call's deadline passed (a trickle): a timeout."""


class _Decoder:
    """Inflates gzip/deflate a bounded step at a time: never more than the room left under the cap."""

    def __init__(self, header: str, what: str) -> None:
        self.what = what
        self.stages: list[Any] = []  # zlib decompress objects, in decoding order ("deflate": not yet fed)
        for coding in reversed([c.strip().lower() for c in header.split(",") if c.strip()]):
            if coding in ("gzip", "x-gzip"):
                self.stages.append(zlib.decompressobj(16 + zlib.MAX_WBITS))
            elif coding == "deflate":
                self.stages.append("deflate")  # zlib-wrapped or raw: decided on the first bytes
            elif coding != "identity":
                raise TargetError(f"{what}: answered Content-Encoding {coding[:40]!r}, which the harness did not "
                                  "ask for (it accepts gzip and deflate)")

    def feed(self, data: bytes, room: int, cap: int, start: int = 0) -> bytes:
        for index in range(start, len(self.stages)):
            if not data:
                return b""
            if self.stages[index] == "deflate":
                self.stages[index] = _deflate_for(data)
            stage = self.stages[index]
            try:
                data = stage.decompress(data, room + 1)  # max_length: at most one byte past the room
            except zlib.error as exc:
                raise TargetError(f"{self.what}: bad Content-Encoding data: {exc}") from None
            if len(data) > room or stage.unconsumed_tail:
                raise TargetError(f"{self.what}: response exceeds the cap of {cap} bytes once decoded")
        return data

    def flush(self, room: int, cap: int) -> bytes:
        """What the stages still hold (all input was consumed, so at most a few bytes each)."""
        out = bytearray()
        for index, stage in enumerate(self.stages):
            if stage == "deflate":
                continue  # never fed
            try:
                tail = stage.flush()
            except zlib.error as exc:
                raise TargetError(f"{self.what}: bad Content-Encoding data: {exc}") from None
            out += self.feed(tail, room - len(out), cap, index + 1) if index + 1 < len(self.stages) else tail
            if len(out) > room:
                raise TargetError(f"{self.what}: response exceeds the cap of {cap} bytes once decoded")
        return bytes(out)


def _deflate_for(first: bytes) -> Any:
    """RFC 9110's deflate is zlib-wrapped; some servers send raw deflate (as httpx accepts too)."""
    probe = zlib.decompressobj()
    try:
        probe.decompress(first[:2])
        return zlib.decompressobj()
    except zlib.error:
        return zlib.decompressobj(-zlib.MAX_WBITS)


# -- sockets: the per-call deadline reaches every connect, read and write ---------------------

def _clamped(timeout: float | None, error: type[Exception]) -> float:
    deadline = getattr(_CALL, "deadline", None)
    if deadline is None:
        return timeout if timeout is not None else PROBE_DEADLINE_S
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the call deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        step = _clamped(timeout, httpcore.ReadTimeout)
        starved = getattr(_CALL, "starved", None)
        while True:
            before = starved() if starved is not None else 0.0
            try:
                return self._stream.read(max_bytes, step)
            except httpcore.ReadTimeout:  # nothing was read: the same read may be made again
                owed = starved() - before if starved is not None else 0.0
                room = getattr(_CALL, "owed_left", 0.0)
                if owed < MIN_OWED_S or room <= 0:
                    raise
                step = min(owed, room)
                _CALL.owed_left = room - step
                _CALL.deadline += step

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamped(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname,
                                                      _clamped(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(host, port, _clamped(timeout, httpcore.ConnectTimeout), local_address,
                                           socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_unix_socket(path, _clamped(timeout, httpcore.ConnectTimeout),
                                                                 socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(trust_env=False)  # loading the CA bundle costs: once per process


def socket_transport() -> httpx.HTTPTransport:
    """httpx's transport over a pool whose sockets keep the call deadline (trust_env off: no proxy)."""
    transport = httpx.HTTPTransport(verify=_ssl_context(), trust_env=False)
    transport._pool = httpcore.ConnectionPool(  # the documented pool, given our network backend
        ssl_context=_ssl_context(), max_connections=100, max_keepalive_connections=20,
        keepalive_expiry=5.0, network_backend=_DeadlineBackend(),
    )
    return transport
