"""The OMP fuzzer: memconform's OpenAPI description handed to schemathesis, every request through the
target's one seam (call and run deadlines, raw and decoded caps, no redirects, no cookies, the key
redacted), phases of valid and invalid data bounded by count and time, and `evaluate` running one
schemathesis check family over what was recorded. The checks built on it are in fuzz_checks.py.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from memconform.core.model import Failure, TargetError
from memconform.core.runner import Context
from memconform.formats import omp
from memconform.targets.base import Reply, Request, Route

from . import client as c
from .openapi_description import AI_PATHS, ai_allowed, closed_requests, description  # noqa: F401

# Requests sent before pacing starts, then at most this many per second: a ci run never waits,
# a thorough run stays under a per-key limit like the reference's 1000 per 10 s (errata O12).
PACE_BURST = 300
PACE_PER_S = 50.0
STATEFUL_STEPS = 6
# enforcement is per route: a few accepted requests per operation are re-sent without / with a wrong key
AUTH_PROBES_PER_OPERATION = 3
MAX_FAILURES_PER_CHECK = 10
METHOD_RE = re.compile(r"HTTP method: \S+")
MAX_CURL_SHOWN = 2000
EXAMPLES = "<report-dir>/examples/"

SENTENCE_STATUS = "Implements all endpoints in §3.3 with correct HTTP methods and status codes"
SENTENCE_SCHEMAS = "Returns responses matching the schemas in §2.1 and §3.3"
SENTENCE_ERRORS = "Returns errors in the format described in §4"
SENTENCE_AUTH = "Implements Bearer token authentication as described in §3.2"


class _Stop(BaseException):
    """Ends a Hypothesis run early (time budget, rate limit, target error) without a shrink or replay."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Exchange:
    case: Any
    response: Any  # schemathesis Response
    negative: bool


@dataclass
class PhaseRun:
    """What one generation phase sent and got back: shared by the checks of the run."""

    name: str
    exchanges: list[Exchange] = field(default_factory=list)
    operations: int = 0
    stopped: str = ""
    cleaned: int = 0
    coverage: int = 0
    skipped_ai: bool = False
    failures: list[tuple[str, list[Any], Exchange]] = field(default_factory=list)  # stateful only

    def summary(self, fuzz: Fuzzer) -> str:
        text = (f"{self.name}: {len(self.exchanges)} requests over {self.operations} operations, "
                f"at most {fuzz.examples} random examples each, seed {fuzz.seed}")
        if self.coverage:
            text += f", {self.coverage} of them coverage cases (one per described constraint)"
        if self.stopped:
            text += f"; stopped early: {self.stopped}"
        if self.cleaned:
            text += f"; deleted {self.cleaned} memories the fuzzer had created"
        if self.skipped_ai:
            text += ("; extract/compress not fuzzed: the target does not state it has no AI key "
                     "(--option omp.ai_endpoints=no-key says so)")
        return text


class Fuzzer:
    """One schemathesis schema bound to the target: the transport, the auth header, the bounds."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.target = c.http(ctx)
        if not self.target.api_key:
            raise TargetError("the OMP fuzz checks need the target's API key (--api-key)")
        self.auth = {"Authorization": f"Bearer {self.target.api_key}"}
        base = self.target.base_url
        # the description's paths carry /v1 (§3.1); a target given as http://host/v1 is the same server
        self.base_url = base[: -len(omp.BASE)] if base.endswith(omp.BASE) else base
        profile = ctx.profile
        self.examples = max(1, profile.examples)
        self.seed = profile.seed
        # a bound for slow targets, not the expected time (a ci run takes a few seconds on loopback)
        self.phase_budget_s = min(300.0, 20.0 + 2.0 * profile.examples)
        self.coverage_cap = 10 * self.examples  # coverage cases per operation
        self.sent = 0
        self.created: set[str] = set()
        self.curls: list[str] = []
        self.ai_fuzzed = ai_allowed(ctx)
        self.transport = _target_transport(self)
        # hypothesis builds its table of UTF-8 characters once per process (seconds; more on a busy machine,
        # and its on-disk cache lives in a fresh folder per run): before the phases' time budgets start
        import hypothesis.strategies as st

        st.characters(codec="utf-8").validate()
        self.schema = self.load(description(ctx))
        # valid data holds only described fields: the spec neither allows nor forbids unknown ones, so a
        # server may refuse them (422) and a "valid" request carrying one would show nothing (O28)
        self.positive_schema = self.load(closed_requests(description(ctx)), positive_only=True)

    def load(self, doc: dict[str, Any], positive_only: bool = False) -> Any:
        import schemathesis
        from schemathesis import GenerationMode
        from schemathesis.config import SchemathesisConfig

        # an explicit config: a schemathesis.toml in the working folder must not change a conformance run
        schema = schemathesis.openapi.from_dict(doc, config=SchemathesisConfig())
        schema.__class__ = _bound_schema_class(type(schema), self.transport)
        if positive_only:
            schema.config.generation.update(modes=[GenerationMode.POSITIVE])
        return schema

    # -- bounds ------------------------------------------------------------------------------

    def settings(self, **overrides: Any) -> Any:
        from hypothesis import settings

        return settings(self.ctx.profile.hypothesis_settings(), max_examples=self.examples, **overrides)

    def seeded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        from hypothesis import seed

        return fn if self.ctx.profile.derandomize else seed(self.seed)(fn)

    def pace(self) -> None:
        self.sent += 1
        if self.sent > PACE_BURST:
            time.sleep(1.0 / PACE_PER_S)

    # -- the wire ----------------------------------------------------------------------------

    def send(self, data: dict[str, Any]) -> Any:
        """Send one serialized case through the target's seam; return it as a schemathesis Response."""
        url: str = data["url"]
        if not url.startswith(self.target.base_url):
            raise TargetError(f"schemathesis built a URL outside the target: {self.ctx.redactor.text(url)}")
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
        self.pace()
        path = url[len(self.target.base_url):]
        route = Route(data["method"], path, body="json", response="text", statuses="returned")
        reply = self.target.call(Request(f"fuzz {data['method']} {path}", raw=content, params=params or None,
                                         headers=headers, route=route, auth=False))
        return _as_schemathesis(reply, data["method"], url, headers, params or {}, content)

    def transport_kwargs(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "headers": dict(self.auth)}

    def call(self, case: Any) -> Any:
        """One generated request; what a 201 created is remembered so it can be deleted afterwards."""
        response = case.call(base_url=self.base_url, headers=dict(self.auth))
        if response.status_code == 201:
            try:
                body = json.loads(response.content)
            except ValueError:
                body = None
            if isinstance(body, dict):
                # create answers a Memory, extract {"memories": [...]}, compress {"memory": {...}}
                listed = body.get("memories")
                found = [body, body.get("memory"), *(listed if isinstance(listed, list) else [])]
                self.created.update(m["id"] for m in found if isinstance(m, dict) and isinstance(m.get("id"), str)
                                    and omp.ID_RE.match(m["id"]))
        return response

    def cleanup(self) -> int:
        """Delete what the fuzzer created (best effort: a vendor's instance keeps no fuzz debris)."""
        removed = 0
        for mem_id in sorted(self.created):
            try:
                answer = c.delete(self.ctx, mem_id, quiet=True, record=False)
            except TargetError:
                break
            removed += answer.status == 204
        self.created.clear()
        return removed

    # -- phases ------------------------------------------------------------------------------

    def operations(self, negative: bool = True) -> list[Any]:
        from schemathesis.core.result import Ok

        schema = self.schema if negative else self.positive_schema
        return [r.ok() for r in schema.get_all_operations() if isinstance(r, Ok)]

    def run_phase(self, negative: bool) -> PhaseRun:
        from hypothesis import given
        from schemathesis import GenerationMode

        mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE
        run = PhaseRun("negative data" if negative else "valid data", skipped_ai=not self.ai_fuzzed)
        deadline = time.monotonic() + self.phase_budget_s
        error: list[TargetError] = []
        for operation in self.operations(negative):
            if negative and not _has_inputs(operation):
                continue  # nothing to make invalid (GET /v1/export, GET /v1/health)
            run.operations += 1
            if negative:
                # schemathesis's coverage cases first: one per constraint (maxLength + 1, maxItems + 1,
                # a value outside an enum, a missing required field), which random data rarely hits
                try:
                    for case in self.coverage_cases(operation):
                        if time.monotonic() > deadline:
                            raise _Stop(f"the phase's time budget of {self.phase_budget_s:.0f} s ran out")
                        run.coverage += 1
                        response = self.call(case)
                        run.exchanges.append(Exchange(case, response, negative))
                        if response.status_code == 429:
                            raise _Stop(f"{case.operation.label} answered 429: the target rate-limits this key")
                except _Stop as stop:
                    run.stopped = stop.reason
                    break

            @self.settings()
            # the key is fixed, not generated: negative data is in the request, never in the key
            # (fuzz_ignored_auth sends the keyless and wrong-key probes itself)
            @given(case=operation.as_strategy(generation_mode=mode, headers=dict(self.auth)))
            def one(case: Any) -> None:
                if time.monotonic() > deadline:
                    raise _Stop(f"the phase's time budget of {self.phase_budget_s:.0f} s ran out")
                try:
                    response = self.call(case)
                except TargetError as exc:
                    error.append(exc)
                    raise _Stop(str(exc)) from None
                run.exchanges.append(Exchange(case, response, negative))
                if response.status_code == 429:
                    raise _Stop(f"{case.operation.label} answered 429: the target rate-limits this key")

            try:
                self.seeded(one)()
            except _Stop as stop:
                run.stopped = stop.reason
                break
        run.cleaned = self.cleanup()
        if error:
            raise error[0]
        if not run.exchanges:
            raise TargetError(f"the {run.name} phase sent no request within its budget ({run.stopped or 'no operation'})")
        return run

    def coverage_cases(self, operation: Any) -> Iterator[Any]:
        """schemathesis's systematic negative cases for one operation, but none about the key:
        fuzz_ignored_auth probes that, and the key is always sent as given."""
        from schemathesis import GenerationMode
        from schemathesis.generation.drivers import CoverageGenerator
        from schemathesis.generation.feedback import NO_FEEDBACK
        from schemathesis.generation.overrides import Override

        generator = CoverageGenerator(
            operation=operation, generation_modes=[GenerationMode.NEGATIVE],
            generation_config=self.schema.config.generation_for(operation=operation, phase="coverage"),
            auth_storage=None, override=Override(headers=dict(self.auth)), feedback=NO_FEEDBACK,
        )
        seen: set[str] = set()
        for case in generator:
            data = getattr(getattr(case.meta, "phase", None), "data", None)
            about = f"{getattr(data, 'parameter', '') or ''} {getattr(data, 'description', '') or ''}"
            # one case per broken constraint: five wrong JSON types of a field, or seven methods a
            # route does not have, tell a server's validation nothing the first one did not
            kind = METHOD_RE.sub("HTTP method", about)
            if "authorization" in about.lower() or kind in seen:
                continue
            seen.add(kind)
            if len(seen) > self.coverage_cap:
                return
            yield case

    def run_stateful(self) -> PhaseRun:
        from schemathesis.checks import not_a_server_error
        from schemathesis.core.failures import FailureGroup
        from schemathesis.specs.openapi.checks import (
            content_type_conformance,
            ensure_resource_availability,
            response_schema_conformance,
            status_code_conformance,
            use_after_free,
        )

        fuzz = self
        run = PhaseRun("stateful create/get/update/delete", operations=4)
        deadline = time.monotonic() + self.phase_budget_s
        checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
                  use_after_free, ensure_resource_availability]
        error: list[TargetError] = []
        # only the memory routes the links join, with valid data: the sequence is the point here
        doc = description(self.ctx)
        doc["paths"] = {"/v1/memories": {"post": doc["paths"]["/v1/memories"]["post"]},
                        "/v1/memories/{id}": doc["paths"]["/v1/memories/{id}"]}
        machine = self.load(closed_requests(doc), positive_only=True).as_state_machine()

        class Machine(machine):  # type: ignore[misc, valid-type]
            def call(self, case: Any, **kwargs: Any) -> Any:
                if time.monotonic() > deadline:
                    raise _Stop(f"the phase's time budget of {fuzz.phase_budget_s:.0f} s ran out")
                try:
                    return fuzz.call(case)
                except TargetError as exc:
                    error.append(exc)
                    raise _Stop(str(exc)) from None

            def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
                exchange = Exchange(case, response, False)
                run.exchanges.append(exchange)
                if response.status_code == 429:
                    raise _Stop(f"{case.operation.label} answered 429: the target rate-limits this key")
                try:
                    case.validate_response(response, checks=checks, headers=dict(fuzz.auth),
                                           transport_kwargs=fuzz.transport_kwargs(),
                                           recorder=getattr(self, "recorder", None))
                except FailureGroup as group:
                    run.failures.append((case.operation.label, list(group.exceptions), exchange))

        try:
            Machine.run(settings=self.settings(stateful_step_count=STATEFUL_STEPS))
        except _Stop as stop:
            run.stopped = stop.reason
        run.cleaned = self.cleanup()
        if error:
            raise error[0]
        if not run.exchanges:
            raise TargetError(f"the stateful phase sent no request within its budget ({run.stopped or 'no link'})")
        return run

    # -- verdicts ----------------------------------------------------------------------------

    def failure(self, label: str, found: Any, exchange: Exchange, expected: str) -> Failure:
        """One schemathesis failure as a memconform Failure: what, where, the curl line, the seed."""
        response = exchange.response
        try:
            curl = exchange.case.as_curl_command(headers=dict(response.request.headers), base_url=self.base_url)
        except Exception as exc:  # curl rendering is best effort; the failure itself stands
            curl = f"(no curl line: {type(exc).__name__})"
        curl = self.ctx.redactor.text(curl)
        self.curls.append(curl)
        shown = curl if len(curl) <= MAX_CURL_SHOWN else f"{curl[:MAX_CURL_SHOWN]}... ({len(curl)} chars; whole line in {EXAMPLES})"
        title = str(getattr(found, "title", "") or type(found).__name__)
        message = str(getattr(found, "message", "") or "").strip()
        seed = (f"schemathesis seed {self.seed} (profile {self.ctx.profile.name}, "
                f"{'derandomized' if self.ctx.profile.derandomize else 'seeded'})")
        body = response.content[:300].decode("utf-8", "replace")
        return Failure(
            title=title if label in title else f"{label}: {title}",
            received=self.ctx.redactor.text(f"{response.status_code} {body}"),
            expected=expected,
            path=label,
            detail=self.ctx.redactor.text("\n".join(p for p in (message, f"Reproduce with: {shown}", seed) if p)),
        )

    def save_curls(self, check_name: str) -> None:
        """Every failing request of a check as a shell file beside the report (reports/.../examples/)."""
        if not self.curls or self.ctx.report_dir is None:
            self.curls.clear()
            return
        folder = self.ctx.report_dir / "examples"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"omp-{check_name}-{self.ctx.run_id}.sh"
        path.write_text("".join(f"{line}\n" for line in self.curls), encoding="utf-8")
        self.ctx.note(f"the failing requests, as curl lines: {path}")
        self.curls.clear()


def _has_inputs(operation: Any) -> bool:
    definition = operation.definition.raw
    return "{" in operation.path or bool(definition.get("parameters") or definition.get("requestBody"))


def _as_schemathesis(reply: Reply, method: str, url: str, headers: dict[str, str], params: dict[str, Any],
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


def _target_transport(fuzz: Fuzzer) -> Any:
    """The schemathesis transport for OMP: requests serialized as schemathesis does, sent by the target."""
    from schemathesis.transport.requests import REQUESTS_TRANSPORT, RequestsTransport

    class TargetTransport(RequestsTransport):
        def send(self, case: Any, *, session: Any = None, **kwargs: Any) -> Any:
            return fuzz.send(self.serialize_case(case, **kwargs))

    transport = TargetTransport()
    transport._copy_serializers_from(REQUESTS_TRANSPORT)
    return transport


def _bound_schema_class(base: type, transport: Any) -> type:
    """The loaded schema's class with `transport` fixed to ours: probes and stateful steps use it too."""
    return type(f"Omp{base.__name__}", (base,), {"transport": property(lambda self: transport)})


def fuzzer(ctx: Context) -> Fuzzer:
    return ctx.once("omp.fuzz", lambda: Fuzzer(ctx))


def phase(ctx: Context, negative: bool) -> PhaseRun:
    fuzz = fuzzer(ctx)
    run: PhaseRun = ctx.once(f"omp.fuzz.{'negative' if negative else 'positive'}", lambda: fuzz.run_phase(negative))
    ctx.note(run.summary(fuzz))
    return run


def evaluate(ctx: Context, name: str, exchanges: list[Exchange], check_fn: Any, expected: str) -> Iterator[Failure]:
    """Run one schemathesis check (or a list of them) over recorded exchanges; one failure per operation and kind."""
    from schemathesis.core.failures import FailureGroup

    fuzz = fuzzer(ctx)
    seen: set[tuple[str, str, str]] = set()
    reported = 0
    for exchange in exchanges:
        try:
            checks = list(check_fn) if isinstance(check_fn, list | tuple) else [check_fn]
            exchange.case.validate_response(exchange.response, checks=checks, headers=dict(fuzz.auth),
                                            transport_kwargs=fuzz.transport_kwargs())
        except FailureGroup as group:
            for found in group.exceptions:
                label = exchange.case.operation.label
                key = (label, type(found).__name__, str(getattr(found, "title", "")))
                if key in seen:
                    continue
                seen.add(key)
                reported += 1
                if reported <= MAX_FAILURES_PER_CHECK:
                    yield fuzz.failure(label, found, exchange, expected)
    if reported > MAX_FAILURES_PER_CHECK:
        ctx.note(f"{reported - MAX_FAILURES_PER_CHECK} more distinct failures not listed")
    fuzz.save_curls(name)
