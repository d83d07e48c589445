"""The MemoryAI HTTP profile (§4) over the reference brain, as a Starlette app."""

from __future__ import annotations

from typing import Any

from memconform.core.results import Unsupported
from memconform.kit.hostile import strict_loads
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.targets.base import Rejected
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

MAX_BODY = 64 * 1024 * 1024


async def _body(request: Request) -> bytes | Response:
    raw = bytearray()
    async for part in request.stream():
        raw += part
        if len(raw) > MAX_BODY:
            return JSONResponse({"success": False, "report": {"warnings": ["request body over 64 MiB"]}}, status_code=413)
    return bytes(raw)


def make_app(brain: ReferenceBrain, multipart_field: str = "file", rejection_status: int = 422) -> Starlette:
    def call(op: str, body: Any) -> Response:
        try:
            result = getattr(brain, op)(body)
        except Rejected as exc:
            return JSONResponse(exc.body, status_code=rejection_status)
        except Unsupported as exc:  # an operation this brain does not offer: the route is absent
            return JSONResponse({"detail": exc.reason}, status_code=404)
        if isinstance(result, bytes):
            media = "application/x-ndjson" if op == "export_stream" else "text/markdown; charset=utf-8"
            return Response(result, media_type=media)
        if op == "export":  # §6: bundle filenames SHOULD use the .json extension
            return JSONResponse(result, headers={"Content-Disposition": f'attachment; filename="{brain.export_filename}"'})
        return JSONResponse(result)

    def json_route(op: str) -> Any:
        async def endpoint(request: Request) -> Response:
            raw = await _body(request)
            if isinstance(raw, Response):
                return raw
            try:
                body = strict_loads(raw) if raw else {}  # strict: the hostile-JSON battery is refused
            except ValueError as exc:
                return JSONResponse({"success": False, "report": {"warnings": [f"body is not JSON: {exc}"]}}, status_code=400)
            return call(op, body)
        return endpoint

    async def import_file(request: Request) -> Response:
        form = await request.form(max_files=1, max_fields=10)
        upload = form.get(multipart_field)
        if upload is None or isinstance(upload, str):
            return JSONResponse({"success": False, "report": {"warnings": [f"multipart field {multipart_field!r} is missing"]}},
                                status_code=400)
        data = await upload.read(MAX_BODY + 1)
        if len(data) > MAX_BODY:
            return JSONResponse({"success": False, "report": {"warnings": ["file over 64 MiB"]}}, status_code=413)
        return call("import_file", data)

    async def spec(request: Request) -> Response:
        try:
            return PlainTextResponse(brain.spec(None).decode(), media_type="text/markdown")
        except Unsupported as exc:
            return JSONResponse({"detail": exc.reason}, status_code=404)

    async def root(request: Request) -> Response:
        return JSONResponse({"service": "memconform MemoryAI reference", "spec": "/v1/spec"})

    return Starlette(routes=[
        Route("/", root),
        Route("/v1/brain/export", json_route("export"), methods=["POST"]),
        Route("/v1/brain/export/stream", json_route("export_stream"), methods=["POST"]),
        Route("/v1/brain/import", json_route("import_bundle"), methods=["POST"]),
        Route("/v1/brain/import/file", import_file, methods=["POST"]),
        Route("/v1/spec", spec),
        Route("/v1/x-memconform/decay", json_route("decay"), methods=["POST"]),
        Route("/v1/x-memconform/delete", json_route("delete_chunk"), methods=["POST"]),
        Route("/v1/x-memconform/delete-many", json_route("delete_chunks"), methods=["POST"]),
    ])


def serve_reference(host: str = "127.0.0.1", port: int = 8765, db: str = ":memory:") -> None:
    from memconform.kit.loopback import bind, serve_forever, url_of

    sock = bind(host, port)
    print(f"memconform: MemoryAI reference on {url_of(sock)} (SQLite {db})", flush=True)
    serve_forever(make_app(ReferenceBrain(db)), host, port, sock)
