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
from memconform.core.sequence import comparator

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


def _checks(names: Any) -> list[Any]:
    """The named checks, from the allow-list only: a file chooses among them, never a module to import."""
    import importlib

    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in RESPONSE_CHECKS for n in names):
        raise ValueError(f"the file names checks {names!r}; replay judges by {sorted(RESPONSE_CHECKS)}")
    return [getattr(importlib.import_module(RESPONSE_CHECKS[n]), n) for n in names]


@comparator(COMPARATOR)
def fuzz_reply_differs(ctx: Any, reply: Any, expected: Any) -> str | None:
    """The saved request's new answer judged by the checks that failed on the old one (None: it passes now)."""
    from memconform.core.results import HarnessError
    from memconform.suites.omp.fuzzing.accepted import excused
    from memconform.suites.omp.fuzzing.fuzzer import fuzzer
    from memconform.suites.omp.fuzzing.phases import Exchange
    from memconform.suites.omp.fuzzing.wire import as_schemathesis_response
    from schemathesis.core import NOT_SET
    from schemathesis.core.failures import FailureGroup

    if reply is None:
        return "no reply to judge (the request was not sent)"
    try:
        checks = _checks(expected.get("checks"))
        method, template = expected["operation"]
        shape = expected["case"]
        fuzz = fuzzer(ctx)
        operation = fuzz.schema[template][method]
        case = operation.Case(method=method, path_parameters=shape.get("path_parameters") or {},
                              query=shape.get("query") or {}, body=shape.get("body", NOT_SET),
                              media_type=shape.get("media_type"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise HarnessError(f"the saved fuzz request cannot be judged again: {type(exc).__name__}: {exc}") from None
    url = fuzz.target.base_url.rstrip("/") + case.formatted_path
    response = as_schemathesis_response(reply, method, url, {}, dict(case.query or {}), None)
    try:
        case.validate_response(response, checks=checks, headers=dict(fuzz.auth), transport_kwargs=fuzz.transport_kwargs())
    except FailureGroup as group:
        if expected.get("accept_readings") and excused(ctx, Exchange(case, response, bool(expected.get("negative")))):
            return None  # an answer an accepted reading allows, as the run excused it
        return "; ".join(str(getattr(f, "title", "") or type(f).__name__) for f in group.exceptions)[:1000]
    return None
