"""MemoryAI Protocol v1 HTTP profile (§4) over the brain in so_memoryai_brain.

    python tests/second_opinion/memoryai/server.py --port 0 [--host 127.0.0.1] [--state FILE] [--verbose]

prints its base URL (http://127.0.0.1:PORT) as the first line of stdout and serves until killed.
Bugs are switched on with SECOND_OPINION_BUGS (comma-separated names, see bugs.json), read at start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import so_memoryai_brain as brain  # noqa: E402

MAX_BODY = 64 * 1024 * 1024
SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.md")

ROUTES = {
    "/": {"GET"},
    "/v1/spec": {"GET"},
    "/v1/brain/export": {"POST"},
    "/v1/brain/export/stream": {"POST"},
    "/v1/brain/import": {"POST"},
    "/v1/brain/import/file": {"POST"},
    "/v1/x-memconform/decay": {"POST"},
    "/v1/x-memconform/delete": {"POST"},
}


class HttpError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def parse_json_bytes(raw: bytes, what: str = "body") -> Any:
    """Strict JSON from UTF-8 bytes: no BOM, no NaN/Infinity, bounded nesting."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpError(400, "invalid_json", f"{what} is not UTF-8: {exc}") from None
    return parse_json_text(text, what)


def parse_json_text(text: str, what: str = "body") -> Any:
    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")
    try:
        return json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise HttpError(400, "invalid_json", f"{what} is nested too deeply") from None
    except ValueError as exc:
        raise HttpError(400, "invalid_json", f"{what} is not valid JSON: {exc}") from None


def parse_multipart(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """The parts of a multipart/form-data body: [{"name", "filename", "content_type", "data"}]."""
    boundary = None
    for param in content_type.split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "boundary":
            boundary = value.strip().strip('"')
    if not boundary:
        raise HttpError(400, "bad_multipart", "multipart body without a boundary")
    delim = b"--" + boundary.encode("latin-1")
    pieces = body.split(delim)
    if len(pieces) < 3:
        raise HttpError(400, "bad_multipart", "multipart body has no complete part")
    parts = []
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            break  # the closing delimiter
        if piece.startswith(b"\r\n"):
            piece = piece[2:]
        head, sep, data = piece.partition(b"\r\n\r\n")
        if not sep:
            raise HttpError(400, "bad_multipart", "a multipart part has no header block")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        headers = {}
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        disposition = headers.get("content-disposition", "")
        params = {}
        for item in disposition.split(";")[1:]:
            k, _, v = item.strip().partition("=")
            params[k.strip().lower()] = v.strip().strip('"')
        parts.append({"name": params.get("name"), "filename": params.get("filename"),
                      "content_type": headers.get("content-type", ""), "data": data})
    return parts


def rejected_body(bundle: Any, errors: list[str]) -> dict[str, Any]:
    report = brain.empty_report(bundle)
    report["warnings"] = list(errors)
    return {"success": False, "error": "; ".join(errors), "report": report}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "memoryai-second-opinion/1.0"
    store: dict[str, Any]  # set on the subclass made by make_server
    verbose = False

    # -- plumbing ------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.verbose:
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", headers)

    def _error(self, exc: HttpError) -> None:
        self._json(exc.status, {"error": {"code": exc.code, "message": exc.message}}, exc.headers)

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._chunked_body()
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise HttpError(400, "bad_request", "Content-Length is not a number") from None
        if n < 0:
            raise HttpError(400, "bad_request", "negative Content-Length")
        if n > MAX_BODY:
            self.close_connection = True
            raise HttpError(413, "too_large", f"body over {MAX_BODY} bytes")
        return self.rfile.read(n)

    def _chunked_body(self) -> bytes:
        out = bytearray()
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise HttpError(400, "bad_request", "malformed chunked body") from None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(out)
            if len(out) + size > MAX_BODY:
                self.close_connection = True
                raise HttpError(413, "too_large", f"body over {MAX_BODY} bytes")
            out += self.rfile.read(size)
            self.rfile.readline(1024)

    def _dispatch(self) -> None:
        path = urlsplit(self.path).path
        if len(path) > 1:
            path = path.rstrip("/")
        try:
            methods = ROUTES.get(path)
            if methods is None:
                body = self._body()  # drain, so a kept-alive connection stays in step
                del body
                raise HttpError(404, "not_found", f"no route {path}")
            if self.command not in methods and not (self.command == "HEAD" and "GET" in methods):
                self._body()
                raise HttpError(405, "method_not_allowed", f"{path} accepts {', '.join(sorted(methods))}",
                                {"Allow": ", ".join(sorted(methods))})
            getattr(self, "route_" + (path.strip("/").replace("/", "_").replace("-", "_") or "root"))()
        except HttpError as exc:
            self._error(exc)
        except Exception as exc:  # a bug of ours: answer 500, keep serving
            self.close_connection = True
            self._json(500, {"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _dispatch

    def _json_body(self, empty_ok: bool = False) -> Any:
        raw = self._body()
        if not raw.strip():
            if empty_ok:
                return None
            raise HttpError(400, "invalid_json", "the request needs a JSON body")
        return parse_json_bytes(raw)

    # -- routes --------------------------------------------------------------------------------

    def route_root(self) -> None:
        self._json(200, {"service": brain.GENERATOR, "protocol": "MemoryAI Protocol v1",
                         "compatibility": "MemoryAI-Protocol-compatible", "levels": [1, 2, 3],
                         "endpoints": sorted(p for p in ROUTES if p != "/")})

    def route_v1_spec(self) -> None:
        with open(SPEC_PATH, "rb") as fh:
            text = fh.read()
        self._send(200, text, "text/markdown; charset=utf-8")

    def _export_args(self) -> tuple[str, str | None]:
        body = self._json_body(empty_ok=True)
        try:
            scope, since, _ = brain.validate_export_request(body)
        except ValueError as exc:
            raise HttpError(400, "invalid_request", str(exc)) from None
        return scope, since

    def route_v1_brain_export(self) -> None:
        scope, since = self._export_args()
        bundle = brain.export_bundle(self.store, scope, since)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self._json(200, bundle, {"Content-Disposition": f'attachment; filename="memoryai-brain-{stamp}.json"'})

    def route_v1_brain_export_stream(self) -> None:
        scope, since = self._export_args()
        lines = brain.export_stream(self.store, scope, since)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        for line in lines:
            data = json.dumps(line, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")

    def _import(self, bundle: Any, extra_warnings: list[str] | None = None) -> None:
        try:
            report = brain.import_bundle(self.store, bundle)
        except brain.BundleRejected as exc:
            self._json(422, rejected_body(bundle, exc.errors))
            return
        report["warnings"].extend(extra_warnings or [])
        self._json(200, {"success": True, "report": report})

    def route_v1_brain_import(self) -> None:
        bundle = self._json_body()
        if not isinstance(bundle, dict):
            self._json(422, rejected_body(bundle, ["a bundle must be a JSON object"]))
            return
        self._import(bundle)

    def route_v1_brain_import_file(self) -> None:
        ctype = self.headers.get("Content-Type", "")
        raw = self._body()
        warnings = []
        if ctype.lower().startswith("multipart/form-data"):
            parts = parse_multipart(raw, ctype)
            chosen = (next((p for p in parts if p["name"] == "file"), None)
                      or next((p for p in parts if p["filename"]), None)
                      or (parts[0] if parts else None))
            if chosen is None:
                raise HttpError(400, "bad_multipart", "no file part in the upload")
            payload, filename = chosen["data"], chosen["filename"] or ""
            if filename and not filename.lower().endswith(".json"):
                warnings.append(f"bundle file name {filename!r} does not use the .json extension")
        elif ctype.lower().split(";")[0].strip() in ("application/json", ""):
            payload = raw
        else:
            raise HttpError(415, "unsupported_media_type", "upload the bundle as multipart/form-data (field 'file')")
        if "file_upload_latin1" in self.store["bugs"]:
            bundle = parse_json_text(payload.decode("latin-1"), "the uploaded file")
        else:
            bundle = parse_json_bytes(payload, "the uploaded file")
        if not isinstance(bundle, dict):
            self._json(422, rejected_body(bundle, ["a bundle must be a JSON object"]))
            return
        self._import(bundle, warnings)

    def route_v1_x_memconform_decay(self) -> None:
        self._body()
        self._json(200, brain.decay_pass(self.store))

    def route_v1_x_memconform_delete(self) -> None:
        body = self._json_body()
        h = body.get("content_hash") if isinstance(body, dict) else None
        if not isinstance(h, str) or not h:
            raise HttpError(400, "invalid_request", "send {\"content_hash\": \"<sha256 hex>\"}")
        self._json(200, {"deleted": brain.delete_chunk(self.store, h)})


def make_server(host: str = "127.0.0.1", port: int = 0, store: dict[str, Any] | None = None,
                verbose: bool = False) -> ThreadingHTTPServer:
    """A server bound to (host, port) over `store` (a fresh in-memory brain when None)."""
    handler = type("BoundHandler", (Handler,), {"store": store or brain.open_store(), "verbose": verbose})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    parser.add_argument("--state", help="persist the brain to this JSON file (default: in memory)")
    parser.add_argument("--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)
    try:
        bugs = brain.bugs_from_env()
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    server = make_server(args.host, args.port, brain.open_store(args.state, bugs), args.verbose)
    host, port = server.server_address[:2]
    print(f"http://{host}:{port}", flush=True)
    if bugs:
        print(f"bugs on: {', '.join(sorted(bugs))}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
