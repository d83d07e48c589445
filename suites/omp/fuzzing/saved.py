"""A failing fuzz request saved as a replayable sequence file beside its curl line.

`examples/omp-<check>-<n>-<run>.json` is a memconform sequence (core/sequence_files.py): one target step,
the request as it was sent (method, path, query, body bytes, headers, the key written as
`Bearer $MEMCONFORM_API_KEY`), and one check step saying how the answer is judged again.
`memconform replay FILE --target T --api-key KEY` sends the request again and judges the new answer as
the run did, excusing what an accepted reading excuses:
- checks that judge the answer by the route alone (status code, response schema, content type, no server
  error): the same schemathesis checks against the same description (comparator `omp.fuzz`, replayed.py);
- checks that judge by how schemathesis generated the request (negative data, valid data, ignored auth):
  what was judged, saved as data, judged again without schemathesis (comparator `omp.fuzz_judged`,
  judged.py). For ignored auth the request saved is the probe that was accepted without the key.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from memconform.core import sequence_files
from memconform.core.check_context import CheckContext
from memconform.suites.omp.fuzzing import judged

COMPARATOR = "omp.fuzz"
# the checks a saved request is judged by again: each names only the route and the answer
RESPONSE_CHECKS = {"not_a_server_error": "schemathesis.checks",
                   "status_code_conformance": "schemathesis.specs.openapi.checks",
                   "response_schema_conformance": "schemathesis.specs.openapi.checks",
                   "content_type_conformance": "schemathesis.specs.openapi.checks"}
KEY_HEADER = "Bearer $MEMCONFORM_API_KEY"  # the key's placeholder: replay sends its own key there
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
                title: str, found: Any = None, probe: Any = None) -> dict[str, Any] | None:
    """The sequence file's content for one failing exchange; None when it cannot be replayed from a file.
    `found`: the schemathesis failure; `probe`: for ignored auth, the response to the probe that failed."""
    if not names:
        return None
    judgement = judged.JUDGED.get(names[0]) if len(names) == 1 else None
    if judgement is None and any(n not in RESPONSE_CHECKS for n in names):
        return None
    if judgement == "auth" and probe is None:
        return None  # the probe that failed was not seen: the keyed request would show nothing
    sent = (probe if judgement == "auth" else exchange.response).request
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
    # the key as its placeholder; a probe's wrong key as sent (no secret, and what made the answer)
    if header is not None:
        headers["Authorization"] = KEY_HEADER if with_key else str(header)
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
    if judgement is None:
        expected: dict[str, Any] | None = {
            "checks": names, "operation": [str(case.method).upper(), case.operation.path], "case": shape,
            "accept_readings": accept_readings, "negative": bool(exchange.negative)}
        op = COMPARATOR
    else:
        expected = judged.expected_of(judgement, case, found, accept_readings, exchange.response.status_code)
        op = judged.COMPARATOR
    if expected is None:
        return None
    check = {"by": "check", "op": op, "message": title[:1000], "expected": expected}
    spec = sequence_files.target_string(ctx)
    return {  # ctx.attach redacts the file's text (every form of the key) when it writes it
        "format": sequence_files.FORMAT, "version": sequence_files.VERSION, "suite": "omp", "check": ctx.check_id,
        "target": {"kind": sequence_files.target_kind(spec), "string": spec}, "profile": ctx.profile.name,
        "seed": ctx.profile.seed, "options": dict(ctx.profile.options), "steps": [step, check], "diverged_at": 1}


def save(ctx: CheckContext, fuzz: Any, name: str, n: int, exchange: Any, check_fn: Any, accept_readings: bool,
         title: str, found: Any = None, probe: Any = None) -> Path | None:
    """Write the sequence file under examples/ (ctx.attach: redacted); None when not saved."""
    doc = sequence_of(ctx, fuzz, exchange, check_names(check_fn), accept_readings, title, found, probe)
    if doc is None:
        return None
    return ctx.attach(f"omp-{name}-{n}-{ctx.run_id}.json", json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8"))
