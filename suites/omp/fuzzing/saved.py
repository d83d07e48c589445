"""A failing fuzz request saved as a replayable sequence file beside its curl line, and the comparator that
judges the reply to it again.

`examples/omp-<check>-<n>-<run>.json` is a memconform sequence (core/sequence_files.py): one target step,
the request as it was sent (method, path, query, body, headers but the key), and one check step naming
the schemathesis checks that failed on the answer. `memconform replay FILE --target T --api-key KEY`
sends the request again and judges the new answer with the same checks against the same description
(comparator `omp.fuzz`), excusing what an accepted reading excuses, as the run did.

Only checks that judge the answer by the route alone (status code, response schema, content type, no
server error) are saved so: the others (negative and positive data, ignored auth) judge by how
schemathesis generated the case, which a file cannot carry; their failures keep their curl lines.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from memconform.core import sequence_files
from memconform.core.check_context import CheckContext

COMPARATOR = "omp.fuzz"
# the checks a saved request is judged by again: each names only the route and the answer
RESPONSE_CHECKS = {"not_a_server_error": "schemathesis.checks",
                   "status_code_conformance": "schemathesis.specs.openapi.checks",
                   "response_schema_conformance": "schemathesis.specs.openapi.checks",
                   "content_type_conformance": "schemathesis.specs.openapi.checks"}
_NOT_SENT_AGAIN = ("authorization", "content-length", "connection", "x-schemathesis-testcaseid", "accept-encoding",
                   "user-agent")


def check_names(check_fn: Any) -> list[str]:
    return [getattr(f, "__name__", str(f)) for f in (check_fn if isinstance(check_fn, list | tuple) else [check_fn])]


def _json_or_absent(value: Any) -> tuple[bool, Any]:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False, None
    return True, value


def sequence_of(ctx: CheckContext, fuzz: Any, exchange: Any, names: list[str], accept_readings: bool,
                title: str) -> dict[str, Any] | None:
    """The sequence file's content for one failing exchange; None when it cannot be replayed from a file."""
    if not names or any(n not in RESPONSE_CHECKS for n in names):
        return None
    sent = exchange.response.request
    url, base = urlsplit(str(sent.url)), urlsplit(fuzz.target.base_url)
    if (url.scheme, url.netloc) != (base.scheme, base.netloc) or not url.path.startswith(base.path.rstrip("/")):
        return None
    path = url.path[len(base.path.rstrip("/")):] or "/"
    query = parse_qsl(url.query, keep_blank_values=True)
    if len({k for k, _ in query}) != len(query):
        return None  # a repeated query parameter: a request's params are one value per name
    case = exchange.case
    shape: dict[str, Any] = {"path_parameters": case.path_parameters or {}, "query": case.query or {},
                             "media_type": case.media_type}
    ok, body = _json_or_absent(case.body) if type(case.body).__name__ != "NotSet" else (False, None)
    if ok:
        shape["body"] = body
    if not all(_json_or_absent(v)[0] for v in shape.values()):
        return None
    header = sent.headers.get("Authorization")
    headers = {str(k): str(v) for k, v in sent.headers.items() if str(k).lower() not in _NOT_SENT_AGAIN}
    with_key = header == fuzz.auth["Authorization"]
    if header is not None and not with_key:
        headers["Authorization"] = str(header)  # a probe's wrong key: no secret, and what made the answer
    step: dict[str, Any] = {"by": "target", "op": f"fuzz {sent.method} {path}",
                            "route": {"method": str(sent.method), "path": path, "body": "json", "response": "text",
                                      "statuses": "returned"},
                            "auth": with_key}
    if headers:
        step["headers"] = headers
    if query:
        step["params"] = dict(query)
    content = sent.body.encode("utf-8") if isinstance(sent.body, str) else sent.body
    if content:
        try:
            step["raw_text"] = content.decode("utf-8")
        except UnicodeDecodeError:
            step["raw_base64"] = base64.b64encode(content).decode("ascii")
    check = {"by": "check", "op": COMPARATOR, "message": title[:1000],
             "expected": {"checks": names, "operation": [str(case.method).upper(), case.operation.path], "case": shape,
                          "accept_readings": accept_readings, "negative": bool(exchange.negative)}}
    spec = sequence_files.target_string(ctx)
    return {  # ctx.attach redacts the file's text (every form of the key) when it writes it
        "format": sequence_files.FORMAT, "version": sequence_files.VERSION, "suite": "omp", "check": ctx.check_id,
        "target": {"kind": sequence_files.target_kind(spec), "string": spec}, "profile": ctx.profile.name,
        "seed": ctx.profile.seed, "options": dict(ctx.profile.options), "steps": [step, check], "diverged_at": 1}


def save(ctx: CheckContext, fuzz: Any, name: str, n: int, exchange: Any, check_fn: Any, accept_readings: bool,
         title: str) -> Path | None:
    """Write the sequence file under examples/ (ctx.attach: redacted); None when not saved."""
    doc = sequence_of(ctx, fuzz, exchange, check_names(check_fn), accept_readings, title)
    if doc is None:
        return None
    return ctx.attach(f"omp-{name}-{n}-{ctx.run_id}.json", json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8"))
