"""Open Memory Protocol v0.1 (+0.2) HTTP server: the REST API of §3 over `omp_store`.

    python tests/second_opinion/omp/server.py --port 0 --credentials FILE

writes FILE (JSON: api_key, tool_keys, other_user_key), prints the base URL as the first line of
stdout and serves until killed. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import omp_store as store  # noqa: E402
from omp_store import OmpError, Principal  # noqa: E402

MAX_BODY = 1 * 1024 * 1024          # every request but import
MAX_IMPORT_BODY = 64 * 1024 * 1024  # an export file can be large
DEFAULT_TOOLS = ("claude", "cursor")
JSON_TYPE = "application/json"

_METHODS = {
    "/v1/memories": ("GET", "POST"),
    "/v1/memories/search": ("POST",),
    "/v1/memories/{id}": ("GET", "PUT", "DELETE"),
    "/v1/export": ("GET",),
    "/v1/import": ("POST",),
    "/v1/extract": ("POST",),
    "/v1/compress": ("POST",),
    "/v1/health": ("GET",),
}


# ---------------------------------------------------------------------------------------------
# rate limiting (§7 SHOULD): a token bucket per API key

class RateLimiter:
    def __init__(self, per_second: float, burst: int) -> None:
        self.rate = per_second
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key_id: str) -> None:
        if self.rate <= 0:
            return
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                wait = max(1, int((1.0 - tokens) / self.rate + 0.999))
                raise OmpError(429, "rate_limited", "Too many requests for this API key",
                               {"retry_after_s": wait}, headers={"Retry-After": str(wait)})
            self._buckets[key_id] = (tokens - 1.0, now)


LIMITER = RateLimiter(per_second=1000.0, burst=2000)


# ---------------------------------------------------------------------------------------------
# routing

def _route(path: str) -> tuple[str, str | None]:
    """The route template for a path (after /v1 normalisation) and the memory id in it, if any."""
    if path != "/" and path.endswith("/"):
        path = path.rstrip("/")
    if path in _METHODS:
        return path, None
    prefix = "/v1/memories/"
    if path.startswith(prefix) and "/" not in path[len(prefix):]:
        return "/v1/memories/{id}", unquote(path[len(prefix):])
    return path, None


class Handler(BaseHTTPRequestHandler):
    server_version = "omp-second-opinion/0.1"

    def version_string(self) -> str:
        return self.server_version
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stalls mid-request does not hold a thread forever

    # -- plumbing --------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # access logs would carry query strings; audit logging is done in omp_store, without content

    def _send(self, status: int, payload: Any | None, headers: dict[str, str] | None = None) -> None:
        body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", JSON_TYPE + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _send_error(self, err: OmpError) -> None:
        self._send(err.status, err.envelope(), err.headers)

    def _read_raw(self, cap: int) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks, size = [], 0
            while True:
                line = self.rfile.readline(1024)
                try:
                    n = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    self.close_connection = True
                    raise store.invalid("malformed chunked body") from None
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                size += n
                if size > cap:
                    self.close_connection = True
                    raise OmpError(413, "payload_too_large", f"request body over {cap} bytes", {"max_bytes": cap})
                chunks.append(self.rfile.read(n))
                self.rfile.readline(1024)
        raw_len = self.headers.get("Content-Length")
        if raw_len is None:
            return b""
        try:
            length = int(raw_len)
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            raise store.invalid("invalid Content-Length") from None
        if length > cap:
            self.close_connection = True  # the unread body would corrupt the next request on this connection
            raise OmpError(413, "payload_too_large", f"request body over {cap} bytes", {"max_bytes": cap})
        return self.rfile.read(length)

    def _json_body(self, cap: int = MAX_BODY) -> Any:
        raw = self._read_raw(cap)
        self._body_read = True
        if not raw.strip():
            raise store.invalid("a JSON request body is required")
        try:
            text = raw.decode("utf-8")
            if text.startswith("\ufeff"):
                raise ValueError("byte order mark")
            value = json.loads(text, parse_constant=_refuse_constant)
            if not store.bug("stores_lone_surrogates"):
                # added after memconform's run found it (not planted): a lone surrogate escape was stored,
                # then every list and export of the user failed to encode (500)
                json.dumps(value, ensure_ascii=False).encode("utf-8")
            return value
        except (UnicodeDecodeError, UnicodeEncodeError, ValueError, RecursionError) as exc:
            raise store.invalid("the request body is not valid JSON", None, reason=str(exc)[:200]) from None

    def _drain(self) -> None:
        """Consume an unread body so the connection stays usable (or close it when that is unsafe)."""
        if getattr(self, "_body_read", False):
            return
        try:
            self._read_raw(MAX_IMPORT_BODY)
        except OmpError:
            self.close_connection = True

    # -- dispatch ----------------------------------------------------------------------------

    def _handle(self) -> None:
        self._body_read = False
        try:
            split = urlsplit(self.path)
            path = split.path
            if not path.startswith("/v1/") and path != "/v1":
                raise OmpError(404, "not_found", "No such endpoint: the API lives under /v1", {"path": path[:200]})
            route, memory_id = _route(path)
            allowed = _METHODS.get(route)
            if allowed is None:
                raise OmpError(404, "not_found", "No such endpoint", {"path": path[:200]})
            method = "GET" if self.command == "HEAD" else self.command
            if method not in allowed:
                raise OmpError(405, "method_not_allowed", f"{self.command} is not allowed on {route}",
                               {"allowed": list(allowed)}, headers={"Allow": ", ".join(allowed)})
            if route == "/v1/health":  # no authentication required
                self._send(200, store.health())
                return
            who = store.authenticate(self.headers.get("Authorization"))
            LIMITER.check(who.key_id)
            query = dict(parse_qsl(split.query, keep_blank_values=True))
            self._dispatch(who, method, route, memory_id, query)
        except OmpError as err:
            self._drain()
            self._send_error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception:  # never a stack trace (or memory content) to the client
            logging.getLogger("omp.server").exception("internal error on %s %s", self.command, route_name(self.path))
            self._drain()
            self._send_error(OmpError(500, "internal_error", "Server-side failure"))

    def _dispatch(self, who: Principal, method: str, route: str, memory_id: str | None,
                  query: dict[str, str]) -> None:
        if route == "/v1/memories":
            if method == "GET":
                self._send(200, store.list_memories(who, query))
            else:
                self._send(201, store.create_memory(who, self._json_body()))
        elif route == "/v1/memories/search":
            self._send(200, store.search_memories(who, self._json_body()))
        elif route == "/v1/memories/{id}":
            assert memory_id is not None
            if method == "GET":
                self._send(200, store.get_memory(who, memory_id))
            elif method == "PUT":
                self._send(200, store.update_memory(who, memory_id, self._json_body()))
            else:
                store.delete_memory(who, memory_id)
                self._send(204, None)
        elif route == "/v1/export":
            self._send(200, store.export_memories(who))
        elif route == "/v1/import":
            self._send(200, store.import_memories(who, self._json_body(MAX_IMPORT_BODY), query.get("conflict")))
        elif route == "/v1/extract":
            self._send(201, store.extract(who, self._json_body()))
        elif route == "/v1/compress":
            self._send(201, store.compress(who, self._json_body()))
        else:  # pragma: no cover - _METHODS and this table agree
            raise OmpError(404, "not_found", "No such endpoint")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def route_name(path: str) -> str:
    route, _ = _route(urlsplit(path).path)
    return route


# ---------------------------------------------------------------------------------------------
# start-up

def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _setup_audit(path: Path) -> None:
    logger = logging.getLogger("omp.audit")
    logger.propagate = False
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def sink(op: str, who: Principal, info: dict[str, Any]) -> None:
        logger.info(json.dumps({"op": op, "user": who.user, "key": who.key_id, "tool_key": who.tool, **info},
                               sort_keys=True))

    store.add_audit_sink(sink)


def _setup_state(path: Path) -> None:
    if path.exists():
        store.restore(json.loads(path.read_text(encoding="utf-8")))
    lock = threading.Lock()

    def save() -> None:
        with lock:
            _write_private(path, json.dumps(store.snapshot()))

    store.add_persist_hook(save)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="OMP v0.1 (+0.2) second-opinion server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks an ephemeral port")
    parser.add_argument("--credentials", required=True, type=Path, help="where to write the generated keys (JSON)")
    parser.add_argument("--tools", default=",".join(DEFAULT_TOOLS), help="tools that get a per-tool key")
    parser.add_argument("--audit-log", type=Path, default=None,
                        help="audit log of write operations (default: a file in the temp folder)")
    parser.add_argument("--state", type=Path, default=None, help="persist memories to this JSON file")
    parser.add_argument("--rate", type=float, default=1000.0, help="requests per second per key (0: off)")
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--tls-cert", type=Path, default=None)
    parser.add_argument("--tls-key", type=Path, default=None)
    args = parser.parse_args(argv)

    LIMITER.rate, LIMITER.burst = args.rate, args.burst
    audit = args.audit_log or Path(tempfile.gettempdir()) / f"omp-second-opinion-audit-{os.getpid()}.log"
    _setup_audit(audit)
    if args.state is not None:
        _setup_state(args.state)

    main_key, other_key = store.new_api_key(), store.new_api_key()
    store.register_key(main_key, "user-main")
    store.register_key(other_key, "user-other")
    tool_keys = {}
    for tool in (t.strip() for t in args.tools.split(",") if t.strip()):
        tool_keys[tool] = store.new_api_key()
        store.register_key(tool_keys[tool], "user-main", tool=tool)

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    scheme = "http"
    if args.tls_cert is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    _write_private(args.credentials, json.dumps(
        {"api_key": main_key, "tool_keys": tool_keys, "other_user_key": other_key}, indent=2))
    host = args.host if ":" not in args.host else f"[{args.host}]"
    print(f"{scheme}://{host}:{server.server_address[1]}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
