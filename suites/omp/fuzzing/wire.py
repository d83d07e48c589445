"""How the OMP fuzzer's requests travel: schemathesis serializes a case, the target's one seam sends it
(call and run deadlines, byte caps, no redirects, no cookies, the key redacted), and the Reply comes back
in the shape schemathesis checks read. The fuzzer itself is in fuzzer.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from memconform.core.results import TargetError
from memconform.targets.base import Reply, Request, Route

if TYPE_CHECKING:
    from memconform.targets.http import HttpTarget


def send_serialized(target: HttpTarget, redact: Callable[[str], str], data: dict[str, Any], pace: Callable[[], None]) -> Any:
    """Send one serialized case through the target's seam; return it as a schemathesis Response."""
    url: str = data["url"]
    if not url.startswith(target.base_url):
        raise TargetError(f"schemathesis built a URL outside the target: {redact(url)}")
    headers = {str(k): str(v) for k, v in (data.get("headers") or {}).items()
               if str(k).lower() not in ("connection", "content-length")}
    content: bytes | None = None
    if "json" in data:
        content = json.dumps(data["json"], ensure_ascii=False).encode("utf-8")
    elif data.get("data") is not None:
        raw = data["data"]
        content = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    params = data.get("params")
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if v is not None}
    pace()
    path = url[len(target.base_url):]
    route = Route(data["method"], path, body="json", response="text", statuses="returned")
    reply = target.call(Request(f"fuzz {data['method']} {path}", raw=content, params=params or None,
                                headers=headers, route=route, auth=False))
    return as_schemathesis_response(reply, data["method"], url, headers, params or {}, content)


def as_schemathesis_response(reply: Reply, method: str, url: str, headers: dict[str, str], params: dict[str, Any],
                             content: bytes | None) -> Any:
    """A target's Reply in the shape schemathesis checks read (the request as sent, for curl lines)."""
    import requests
    from schemathesis.core.transport import Response

    sent = requests.Request(method=method, url=url, headers=headers, params=params, data=content).prepare()
    charset = reply.content_type.partition("charset=")[2].split(";")[0].strip() or "utf-8"
    try:
        phrase = HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = ""
    return Response(status_code=reply.status, headers={k: [v] for k, v in reply.headers.items()}, content=reply.raw,
                    request=sent, elapsed=reply.elapsed_s, message=phrase, encoding=charset, http_version="1.1",
                    verify=True)


def target_transport(send: Callable[[dict[str, Any]], Any]) -> Any:
    """The schemathesis transport for OMP: requests serialized as schemathesis does, handed to `send`."""
    from schemathesis.transport.requests import REQUESTS_TRANSPORT, RequestsTransport

    class TargetTransport(RequestsTransport):
        def send(self, case: Any, *, session: Any = None, **kwargs: Any) -> Any:
            return send(self.serialize_case(case, **kwargs))

    transport = TargetTransport()
    transport._copy_serializers_from(REQUESTS_TRANSPORT)
    return transport


def bound_schema_class(base: type, transport: Any) -> type:
    """The loaded schema's class with `transport` fixed to ours: probes and stateful steps use it too."""
    return type(f"Omp{base.__name__}", (base,), {"transport": property(lambda self: transport)})
