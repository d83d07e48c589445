"""Open Memory Protocol v0.1 (+0.2 extract/compress) second-opinion server, standard library only.

python server.py --port 0 --credentials FILE
writes FILE (mode 0600) with the keys, then prints http://127.0.0.1:PORT and serves /v1 until SIGTERM/SIGINT.
"""

import argparse
import hmac
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import Api, ApiError, Call, Reply  # noqa: E402
from bugs import UnknownBug, bugs_from_environment  # noqa: E402
from store import Principal, Store  # noqa: E402

MAX_BODY_BYTES = 5 * 1024 * 1024
MEMORY_PATH = re.compile(r"/v1/memories/([^/]+)")


def routes(api: Api) -> dict:
    """(method, path) -> handler for the fixed paths; /v1/memories/:id is matched separately."""
    return {
        ("POST", "/v1/memories"): api.create,
        ("GET", "/v1/memories"): api.list,
        ("POST", "/v1/memories/search"): api.search,
        ("GET", "/v1/export"): api.export,
        ("POST", "/v1/import"): api.import_,
        ("POST", "/v1/extract"): api.extract,
        ("POST", "/v1/compress"): api.compress,
    }


def generate_keys() -> dict:
    """Keys of 32 random bytes each (43 URL-safe characters), well over §7's 32 characters."""
    return {
        "api_key": secrets.token_urlsafe(32),
        "tool_keys": {"claude": secrets.token_urlsafe(32), "cursor": secrets.token_urlsafe(32)},
        "other_user_key": secrets.token_urlsafe(32),
    }


def principals_for(keys: dict) -> dict:
    table = {keys["api_key"]: Principal("user-1"), keys["other_user_key"]: Principal("user-2")}
    for tool, key in keys["tool_keys"].items():
        table[key] = Principal("user-1", tool)
    return table


def write_credentials(path: str, keys: dict) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(keys, handle)


class RateLimiter:
    """A fixed one-minute window per API key (§7 SHOULD); 0 turns it off."""

    def __init__(self, per_minute: int):
        self.per_minute = per_minute
        self.lock = threading.Lock()
        self.windows: dict[str, tuple[int, int]] = {}

    def allow(self, key: str) -> bool:
        if self.per_minute <= 0:
            return True
        minute = int(time.time() // 60)
        with self.lock:
            window, count = self.windows.get(key, (minute, 0))
            if window != minute:
                window, count = minute, 0
            self.windows[key] = (window, count + 1)
            return count < self.per_minute


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "omp2-second-opinion"

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self):
        self.handle_call("GET")

    def do_POST(self):
        self.handle_call("POST")

    def do_PUT(self):
        self.handle_call("PUT")

    def do_DELETE(self):
        self.handle_call("DELETE")

    def do_PATCH(self):
        self.handle_call("PATCH")

    def do_HEAD(self):
        self.handle_call("HEAD")

    def do_OPTIONS(self):
        self.handle_call("OPTIONS")

    def log_message(self, format, *args):
        """No access log: request lines could carry query text, and content must stay out of logs."""

    def handle_call(self, method: str) -> None:
        try:
            reply = self.dispatch(method)
        except ApiError as error:
            reply = Reply(
                error.status, {"error": error.code, "message": error.message, "details": error.details}
            )
        except Exception as error:  # noqa: BLE001 - any fault must still answer in the §4 envelope
            print(f"internal error: {type(error).__name__}", file=sys.stderr, flush=True)
            reply = Reply(500, {"error": "internal_error", "message": "server-side failure", "details": {}})
        self.send(reply)

    def dispatch(self, method: str) -> Reply:
        api: Api = self.server.api
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        if path == "/v1/health":
            if method != "GET":
                raise ApiError(405, "method_not_allowed", "health answers GET only")
            return api.health()
        # The body is read before authenticating so that a refused request leaves nothing unread on the connection.
        raw = self.read_raw_body() if method in ("POST", "PUT", "PATCH") else b""
        principal = self.authenticate()
        body = parse_json_body(raw)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        call = Call(method, path, query, body, principal)
        table = routes(api)
        if (method, path) in table:
            return table[(method, path)](call)
        match = MEMORY_PATH.fullmatch(path)
        if match and path != "/v1/memories/search":
            handlers = {"GET": api.get, "PUT": api.update, "DELETE": api.delete}
            if method in handlers:
                return handlers[method](call, unquote(match.group(1)))
            raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}")
        if any(known == path for _, known in table):
            raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}")
        raise ApiError(404, "not_found", f"no endpoint {path}")

    def authenticate(self) -> Principal:
        header = self.headers.get("Authorization", "")
        scheme, _, key = header.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            raise ApiError(401, "unauthorized", "missing bearer API key")
        principal = None
        for known, holder in self.server.principals.items():
            if hmac.compare_digest(known.encode(), key.encode()):
                principal = holder
        if principal is None:
            raise ApiError(401, "unauthorized", "invalid API key")
        if not self.server.limiter.allow(key):
            raise ApiError(429, "rate_limited", "too many requests for this key", {"retry_after_seconds": 60})
        return principal

    def read_raw_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise ApiError(411, "length_required", "send the body with a Content-Length")
        try:
            length = int(self.headers.get("Content-Length", "0") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            raise ApiError(413, "payload_too_large", f"bodies are limited to {MAX_BODY_BYTES} bytes")
        return self.rfile.read(length) if length else b""

    def send(self, reply: Reply) -> None:
        payload = b"" if reply.body is None else json.dumps(reply.body, ensure_ascii=False).encode("utf-8")
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="omp"')
        if reply.status == 429:
            self.send_header("Retry-After", "60")
        if reply.status != 204:
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if reply.status != 204 and self.command != "HEAD":
            self.wfile.write(payload)


def parse_json_body(raw: bytes) -> object:
    if not raw.strip():
        return None
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
    except (UnicodeDecodeError, ValueError) as error:
        raise ApiError(
            422, "validation_error", f"the body is not valid JSON: {error}", {"field": "body"}
        ) from None


def reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class OmpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False


def parse_arguments(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free port)")
    parser.add_argument(
        "--credentials", required=True, help="file to write the API keys to (JSON, mode 0600)"
    )
    parser.add_argument(
        "--rate-limit", type=int, default=6000, help="requests per minute per key; 0 turns it off"
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        bugs = bugs_from_environment()
    except UnknownBug as error:
        print(f"refusing to start: {error}", file=sys.stderr)
        return 2
    httpd = OmpServer(("127.0.0.1", arguments.port), Handler)
    keys = generate_keys()
    httpd.api = Api(Store(), bugs)
    httpd.principals = principals_for(keys)
    httpd.limiter = RateLimiter(arguments.rate_limit)
    write_credentials(arguments.credentials, keys)
    print(f"http://127.0.0.1:{httpd.server_address[1]}", flush=True)
    if bugs:
        print(f"bugs on: {', '.join(sorted(bugs))}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=httpd.shutdown, daemon=True).start())
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
