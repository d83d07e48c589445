"""HTTP targets: bounded time and size on every call, no redirects, API key never logged."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..core.model import TargetError, Unsupported
from ..core.profile import Limits
from .base import Reply, Route, Target


class HttpTarget(Target):
    kind = "http"

    def __init__(self, base_url: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> None:
        parts = urlsplit(base_url)
        if parts.username or parts.password:
            raise TargetError("put credentials in --api-key, not in the target URL")
        self.base_url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self.description = self.base_url
        self.routes = routes
        self.limits = limits
        self.api_key = api_key
        headers = {"User-Agent": "memconform"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.client = httpx.Client(
            timeout=httpx.Timeout(limits.request_timeout_s),
            follow_redirects=False,
            headers=headers,
            trust_env=False,
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        files: dict[str, Any] | None = None,
        auth: bool = True,
    ) -> httpx.Response:
        """One bounded HTTP exchange; the body is read up to the size cap within the call deadline."""
        url = self.base_url + path
        send_headers = dict(headers or {})
        if json_body is not None and content is None and files is None:
            content = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            send_headers.setdefault("Content-Type", "application/json")
        request = self.client.build_request(method, url, content=content, params=params, headers=send_headers, files=files)
        if not auth:
            request.headers.pop("Authorization", None)
        deadline = time.monotonic() + self.limits.call_deadline_s
        try:
            response = self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise TargetError(f"{method} {path}: no answer within {self.limits.request_timeout_s}s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise TargetError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        try:
            buf = bytearray()
            for chunk in response.iter_raw():
                buf += chunk
                if len(buf) > self.limits.max_response_bytes:
                    raise TargetError(f"{method} {path}: response exceeds the cap of {self.limits.max_response_bytes} bytes")
                if time.monotonic() > deadline:
                    raise TargetError(f"{method} {path}: response not complete within the {self.limits.call_deadline_s}s deadline")
            response._content = bytes(buf)
        except httpx.HTTPError as exc:
            raise TargetError(f"{method} {path}: {type(exc).__name__} while reading the body: {exc}") from None
        finally:
            response.close()
        # decode per Content-Encoding after the raw cap was applied
        if response.headers.get("content-encoding"):
            try:
                response._content = httpx.Response(200, content=response._content, headers={"content-encoding": response.headers["content-encoding"]}).read()
            except httpx.DecodingError as exc:
                raise TargetError(f"{method} {path}: bad content-encoding: {exc}") from None
        return response

    def preflight(self) -> None:
        from ..core.model import HarnessError

        try:
            self.client.get(self.base_url + "/", timeout=min(5.0, self.limits.request_timeout_s)).close()
        except httpx.HTTPError as exc:
            raise HarnessError(f"target {self.base_url} does not answer: {type(exc).__name__}: {exc}") from None

    def call(
        self,
        op: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        raw: bytes | None = None,
        filename: str | None = None,
    ) -> Reply:
        route = self.routes.get(op)
        if route is None:
            raise Unsupported(op, "no HTTP route is defined for it")
        started = time.monotonic()
        if route.body == "multipart":
            payload = raw if raw is not None else json.dumps(body, ensure_ascii=False).encode("utf-8")
            field = (params or {}).pop("_field", "file") if params else "file"
            response = self.request(route.method, route.path, files={field: (filename or "bundle.json", payload, "application/json")}, params=params)
        elif route.body == "none":
            response = self.request(route.method, route.path, params=params)
        else:
            response = self.request(route.method, route.path, json_body=body, content=raw, params=params)
        elapsed = time.monotonic() - started
        status = response.status_code
        if 300 <= status < 400:
            raise TargetError(f"{route.method} {route.path}: answered a redirect ({status} to {response.headers.get('location')!r}); redirects are not followed")
        if status in (404, 405) and route.absent_on_404:
            raise Unsupported(op, f"{route.method} {route.path} answered {status}")
        if status >= 500:
            raise TargetError(f"{route.method} {route.path}: server error {status}: {response.content[:200]!r}")
        ctype = response.headers.get("content-type", "")
        reply = Reply(
            status="ok" if status < 300 else "rejected",
            raw=response.content,
            http_status=status,
            content_type=ctype,
            headers=dict(response.headers),
            elapsed_s=elapsed,
        )
        if route.response == "json" and reply.raw:
            try:
                reply.body = json.loads(reply.raw)
            except ValueError:
                if reply.ok:
                    raise TargetError(f"{route.method} {route.path}: answered {status} with a body that is not JSON: {reply.raw[:120]!r}") from None
        return reply

    def close(self) -> None:
        self.client.close()
