"""Serving the OMP reference: the Starlette app, the in-process target, `memconform serve omp`."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.core.profile import Limits
from memconform.suites.omp.format import (
    TargetFacts,
)
from memconform.suites.omp.reference.api import OmpApi
from memconform.suites.omp.reference.parts import (
    MAX_BODY,
    ApiError,
    KeySet,
    OfflineProvider,
    Out,
    Provider,
    RateLimit,
    Req,
)
from memconform.suites.omp.reference.store import OmpStore
from memconform.targets.http import HttpTarget
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def _response(out: Out) -> Response:
    status, body, headers = out
    if body is None:
        return Response(status_code=status, headers=headers)
    return JSONResponse(body, status_code=status, headers=headers)


async def _read_body(request: Request) -> bytes | None:
    raw = bytearray()
    async for part in request.stream():
        raw += part
        if len(raw) > MAX_BODY:
            return None
    return bytes(raw)


def make_app(api: OmpApi) -> Any:
    def endpoint(op: str) -> Callable[[Request], Any]:
        handler = getattr(api, f"op_{op}")

        async def serve(request: Request) -> Response:
            raw = await _read_body(request)
            if raw is None:
                err = ApiError("payload_too_large", f"the request body is over {MAX_BODY} bytes", status=413)
                return _response(api.error_out(err))
            req = Req(request.query_params, dict(request.path_params), raw, request.headers)
            return _response(await run_in_threadpool(api.dispatch, op, handler, req))

        return serve

    by_path: dict[str, dict[str, str]] = {}
    for path, method, op in api.ROUTES:
        by_path.setdefault(path, {})[method] = op
    literal = {path: sorted(methods) for path, methods in by_path.items() if "{" not in path}

    def route_for(methods: dict[str, str]) -> Callable[[Request], Any]:
        """One route per path, so a 405 names every method of the path in Allow; a path parameter never
        captures a literal sibling (`PUT /v1/memories/search` is 405, not "no memory 'search'")."""
        served = {method: endpoint(op) for method, op in methods.items()}

        async def serve(request: Request) -> Response:
            allowed = literal.get(request.url.path)
            if allowed is not None and request.method not in allowed and request.path_params:
                raise HTTPException(405, headers={"Allow": ", ".join(allowed)})
            return await served.get(request.method, served.get("GET", served[next(iter(served))]))(request)

        return serve

    routes = [Route(path, route_for(methods), methods=list(methods)) for path, methods in by_path.items()]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        if status == 405:
            err = ApiError("method_not_allowed", f"{request.method} is not allowed on {request.url.path}", status=405,
                           headers=dict(getattr(exc, "headers", None) or {}))
        elif status == 404:
            err = ApiError("not_found", f"no route {request.method} {request.url.path}", status=404)
        else:
            err = ApiError("internal_error" if status >= 500 else "bad_request", str(getattr(exc, "detail", exc)), status=status)
        return _response(api.error_out(err))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.router.redirect_slashes = False  # a redirect is never followed by clients; answer 404 instead
    return api.asgi(app)


# --- serving ---------------------------------------------------------------------------------------


class ServedTarget(HttpTarget):
    """An OMP server started in this process on loopback; close() stops it."""

    def __init__(self, base_url: str, stop: Callable[[], None], api: OmpApi, label: str, limits: Limits | None = None) -> None:
        super().__init__(base_url, {}, limits or Limits(), api.keys.global_key)
        self.description = f"{label} at {base_url}"
        self.api = api
        self._log_folder = Path(tempfile.mkdtemp(prefix="memconform-omp-log-"))
        self.omp_facts = TargetFacts(ai_key_configured=api.provider is not None, credentials=api.keys.credentials(),
                                     server_log=str(api.log_audit_to(self._log_folder)))
        self.state_facts("omp", self.omp_facts)
        self._stop = stop

    def close(self) -> None:
        super().close()
        self._stop()
        self.api.store.close()
        shutil.rmtree(self._log_folder, ignore_errors=True)


@dataclass
class ServerSpec:
    """How to build one server: the API class (a mutant overrides it), storage, provider, limits."""

    api_class: type[OmpApi] = OmpApi
    store_class: type[OmpStore] = OmpStore
    db: str = ":memory:"
    provider: Provider | None = None
    rate_limits: Mapping[str, RateLimit] | None = None
    keys: KeySet | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def build(self) -> OmpApi:
        return self.api_class(self.store_class(self.db), self.keys or KeySet.generate(), provider=self.provider,
                              rate_limits=self.rate_limits, **self.options)


def serve_target(spec: ServerSpec, label: str = "reference:omp") -> ServedTarget:
    from memconform.kit.loopback import serve_in_thread

    api = spec.build()
    base_url, stop = serve_in_thread(make_app(api))
    return ServedTarget(base_url, stop, api, label)


def reference_target(provider: Provider | None = None, rate_limits: Mapping[str, RateLimit] | None = None) -> ServedTarget:
    """`reference:omp`: the reference on 127.0.0.1:<ephemeral> with fresh keys and no AI key configured."""
    return serve_target(ServerSpec(provider=provider, rate_limits=rate_limits))


def serve_reference(host: str = "127.0.0.1", port: int = 8765, db: str = ":memory:", ai: str | None = None) -> None:
    """`memconform serve omp`: print the base URL and every key once, then serve in the foreground.
    `ai="offline"`: extract/compress answered by OfflineProvider (deterministic, local) instead of no_api_key."""
    from memconform.kit.loopback import bind, serve_forever, url_of

    keys = KeySet.generate()
    provider = OfflineProvider() if ai == "offline" else None
    api = ServerSpec(db=db, keys=keys, provider=provider).build()
    folder = Path(tempfile.mkdtemp(prefix="memconform-omp-"))
    credentials = folder / "credentials.json"
    credentials.write_text(json.dumps({"tool_keys": keys.tool_keys, "other_user_key": keys.other_user_key}, indent=1),
                           encoding="utf-8")
    credentials.chmod(0o600)
    audit_log = api.log_audit_to(folder)  # §7 writes are logged without content: the run command checks it
    sock = bind(host, port)  # before the banner: --port 0 prints the port bound
    base = url_of(sock)
    ai_said = "extract/compress by the offline stand-in" if provider else "no AI key configured"
    print(f"memconform: OMP reference (OMP-Full) on {base}/v1 (SQLite {db}; {ai_said})", flush=True)
    print(f"  global key:                    {keys.global_key}", flush=True)
    for tool, key in keys.tool_keys.items():
        print(f"  {'tool key (' + tool + '):':<30} {key}", flush=True)
    print(f"  other-user key:                {keys.other_user_key}", flush=True)
    print(f"  credentials file:              {credentials}", flush=True)
    print(f"  audit log:                     {audit_log}", flush=True)
    print(f"  run: memconform run --suite omp --target {base} --api-key={keys.global_key} "
          f"--option omp.credentials={credentials} --option omp.ai_endpoints={'skip' if provider else 'no-key'} "
          f"--option omp.server_log={audit_log} --report-dir /tmp/omp-report",
          flush=True)
    try:
        serve_forever(make_app(api), host, port, sock)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
