"""The OMP fuzzer: memconform's OpenAPI description handed to schemathesis and bound to the target (the
transport, the auth header, pacing, cleanup of what it created), failures as memconform Failures with
their curl lines, and `evaluate` running one schemathesis check family over what was recorded. Its
requests travel through wire.py, its phases run in phases.py; the checks built on it are in
suites/omp/checks/fuzz.py.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import shlex
import time
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.suites.omp import client, deviations, readings
from memconform.suites.omp import format as omp
from memconform.suites.omp.fuzzing import stored_as_sent
from memconform.suites.omp.fuzzing.openapi_description import (
    ai_allowed,
    closed_requests,
    description,
)
from memconform.suites.omp.fuzzing.phases import Exchange, PhaseRun, run_phase, run_stateful
from memconform.suites.omp.fuzzing.saved import check_names, save
from memconform.suites.omp.fuzzing.wire import bound_schema_class, send_serialized, target_transport

# Requests sent before pacing starts, then at most this many per second: a ci run never waits,
# a thorough run stays under a per-key limit like the reference's 1000 per 10 s (errata O12).
PACE_BURST = 300
PACE_PER_S = 50.0
# enforcement is per route: a few accepted requests per operation are re-sent without / with a wrong key
AUTH_PROBES_PER_OPERATION = 3
MAX_FAILURES_PER_CHECK = 10
MAX_CURL_SHOWN = 2000
EXAMPLES = "<report-dir>/examples/"
FILTERED = "'Authorization: [Filtered]'"  # how schemathesis writes the header it masks in a curl line

SENTENCE_STATUS = "Implements all endpoints in §3.3 with correct HTTP methods and status codes"
SENTENCE_SCHEMAS = "Returns responses matching the schemas in §2.1 and §3.3"
SENTENCE_ERRORS = "Returns errors in the format described in §4"
SENTENCE_AUTH = "Implements Bearer token authentication as described in §3.2"


class Fuzzer:
    """One schemathesis schema bound to the target: the transport, the auth header, the bounds."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.target = client.http(ctx)
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
        self.last_response: Any = None  # the last answer sent back: a check's own probe (ignored_auth's) is seen here
        self.ai_fuzzed = ai_allowed(ctx)
        self.transport = target_transport(self.send)
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
        schema.__class__ = bound_schema_class(type(schema), self.transport)
        if positive_only:
            schema.config.generation.update(modes=[GenerationMode.POSITIVE])
        return schema

    # -- bounds ------------------------------------------------------------------------------

    def settings(self, **overrides: Any) -> Any:
        from hypothesis import settings

        return settings(self.ctx.profile.hypothesis_settings(), max_examples=self.examples, **overrides)

    def seeded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        from hypothesis import seed

        # always the profile's seed: under derandomize hypothesis would derive one from the function's source,
        # so moving the code (or its indentation) would change what is drawn
        return seed(self.seed)(fn)

    def pace(self) -> None:
        self.sent += 1
        if self.sent > PACE_BURST:
            time.sleep(1.0 / PACE_PER_S)

    # -- the wire ----------------------------------------------------------------------------

    def send(self, data: dict[str, Any]) -> Any:
        """Send one serialized case through the target's seam; return it as a schemathesis Response."""
        self.last_response = send_serialized(self.target, self.ctx.redact, data, self.pace)
        return self.last_response

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
                answer = client.delete(self.ctx, mem_id, quiet=True, record=False)
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
        return run_phase(self, negative)

    def run_stateful(self) -> PhaseRun:
        return run_stateful(self)

    # -- verdicts ----------------------------------------------------------------------------

    def failure(self, label: str, found: Any, exchange: Exchange, expected: str, probe: Any = None) -> Failure:
        """One schemathesis failure as a memconform Failure: what, where, the curl line, the seed. `probe`: the
        answer to the request the check sent itself (ignored_auth's, without the key): shown in place of the
        generated request's, which was accepted with the key and reproduces nothing."""
        response = probe if probe is not None else exchange.response
        try:
            curl = (curl_of(response.request) if probe is not None else
                    exchange.case.as_curl_command(headers=dict(response.request.headers), base_url=self.base_url))
        except Exception as exc:  # curl rendering is best effort; the failure itself stands
            curl = f"(no curl line: {type(exc).__name__})"
        curl = self.ctx.redact(self.key_named(curl, response.request.headers.get("Authorization")))
        self.curls.append(curl)
        shown = curl if len(curl) <= MAX_CURL_SHOWN else f"{curl[:MAX_CURL_SHOWN]}... ({len(curl)} chars; whole line in {EXAMPLES})"
        title = str(getattr(found, "title", "") or type(found).__name__)
        message = str(getattr(found, "message", "") or "").strip()
        seed = (f"schemathesis seed {self.seed} (profile {self.ctx.profile.name}, "
                f"{'derandomized' if self.ctx.profile.derandomize else 'seeded'})")
        body = response.content[:300].decode("utf-8", "replace")
        return Failure(
            title=title if label in title else f"{label}: {title}",
            received=self.ctx.redact(f"{response.status_code} {body}"),
            expected=expected,
            path=label,
            detail=self.ctx.redact("\n".join(p for p in (message, f"Reproduce with: {shown}", seed) if p)),
        )

    def key_named(self, curl: str, sent: str | None) -> str:
        """schemathesis masks the Authorization header as [Filtered], which replays as a 401: a reproduction
        names the key's variable instead, as every printed line does (or the wrong key a probe sent, no secret)."""
        if FILTERED not in curl:
            return curl
        if sent is None:
            return curl.replace(f" -H {FILTERED}", "")
        word = ('"Authorization: Bearer $MEMCONFORM_API_KEY"' if sent == self.auth["Authorization"]
                else shlex.quote(f"Authorization: {sent}"))
        return curl.replace(FILTERED, word)

    def save_curls(self, check_name: str) -> None:
        """Every failing request of a check as a shell file beside the report (reports/.../examples/)."""
        if self.curls:
            path = self.ctx.attach(f"omp-{check_name}-{self.ctx.run_id}.sh", "".join(f"{line}\n" for line in self.curls).encode())
            if path is not None:
                self.ctx.note(f"the failing requests, as curl lines: {path}")
        self.curls.clear()


_NOT_SHOWN = ("content-length", "connection", "user-agent", "accept-encoding", "x-schemathesis-testcaseid")


def curl_of(sent: Any) -> str:
    """A curl line for a request as sent (a prepared request): its method, headers, body and URL, each one
    quoted word; the key, when sent, written as schemathesis writes it, for key_named to name."""
    words = ["curl", "-X", str(sent.method)]
    for name, value in sent.headers.items():
        if str(name).lower() not in _NOT_SHOWN:
            words += ["-H", f"{name}: {value}"]
    body = sent.body.decode("utf-8", "replace") if isinstance(sent.body, bytes) else sent.body
    if body:
        words += ["-d", str(body)]
    line = " ".join(shlex.quote(w) for w in [*words, str(sent.url)])
    return re.sub(r"'Authorization: [^']*'", FILTERED, line)


def fuzzer(ctx: CheckContext) -> Fuzzer:
    return ctx.once("omp.fuzz", lambda: Fuzzer(ctx))


def phase(ctx: CheckContext, negative: bool) -> PhaseRun:
    fuzz = fuzzer(ctx)
    run: PhaseRun = ctx.once(f"omp.fuzz.{'negative' if negative else 'positive'}", lambda: fuzz.run_phase(negative))
    ctx.note(run.summary(fuzz))
    return run


def evaluate(ctx: CheckContext, name: str, exchanges: list[Exchange], check_fn: Any, expected: str,
             accept_readings: bool = False, echo_readings: bool = False) -> Iterator[Failure]:
    """Run one schemathesis check (or a list of them) over recorded exchanges; one failure per operation and kind.
    `accept_readings`: an answer that fits a reading the errata accept is recorded, not judged (fuzzing/accepted.py).
    `echo_readings`: a schema failure at nothing but a page's echoed `limit` or `offset`, in an answer that fits
    such a reading (a bad paging value served as a sane page, O9, echoing what was applied, O3), is the reading's."""
    from memconform.core.sequence_files import replay_line
    from memconform.suites.omp.fuzzing.accepted import excused, why_no_reading
    from schemathesis.core.failures import FailureGroup

    fuzz = fuzzer(ctx)
    seen: set[tuple[str, str, str, str]] = set()
    reported = 0
    for exchange in exchanges:
        fuzz.last_response = None  # what the check itself sends (ignored_auth's probes) is seen from here on
        try:
            checks = list(check_fn) if isinstance(check_fn, list | tuple) else [check_fn]
            exchange.case.validate_response(exchange.response, checks=checks, headers=dict(fuzz.auth),
                                            transport_kwargs=fuzz.transport_kwargs())
        except FailureGroup as group:
            if accept_readings and excused(ctx, exchange):
                continue  # what would be blamed fits a reading the errata accept: recorded instead
            for found in group.exceptions:
                if echo_readings and paging_echo(found) and excused(ctx, exchange):
                    continue  # e.g. limit=0.5 read as 0, served as an empty page saying limit 0: O9 and O3 together
                label = exchange.case.operation.label
                found, cause, set_aside = stored_as_sent.explained(
                    ctx, found, exchange.response.content, functools.partial(revalidated, fuzz, exchange, checks))
                cause = cause or deviations.limit_served_uncapped(ctx, found, exchange.response.content)
                if not cause and (str(exchange.case.method).upper(), exchange.case.operation.path) == readings.LIST:
                    cause = deviations.below_one_asked_over_cap(ctx, exchange.case.query, exchange.response.content)
                key = (label, type(found).__name__, str(getattr(found, "title", "")), cause)
                if key in seen:
                    continue
                seen.add(key)
                reported += 1
                if reported <= MAX_FAILURES_PER_CHECK:
                    # ignored_auth's failing probe is the last request it sent (schemathesis fails right after it)
                    probe = fuzz.last_response if check_names(check_fn) == ["ignored_auth"] else None
                    failure = fuzz.failure(label, found, exchange, expected, probe)
                    why = why_no_reading(exchange.case, exchange.response) if accept_readings else ""
                    # the request as a file replay sends again and judges by the same checks (saved.py)
                    saved = save(ctx, fuzz, name, reported, exchange, check_fn, accept_readings,
                                 f"{label}: {getattr(found, 'title', '') or type(found).__name__}", found, probe)
                    replay = f"\nReplay with: {replay_line(ctx, saved)}" if saved is not None else ""
                    detail = "\n".join(p for p in (why, set_aside, failure.detail) if p)
                    failure = dataclasses.replace(failure, detail=f"{detail}{replay}")
                    yield established.explained(ctx, failure, cause) if cause else failure
    if reported > MAX_FAILURES_PER_CHECK:
        ctx.note(f"{reported - MAX_FAILURES_PER_CHECK} more distinct failures not listed")
    fuzz.save_curls(name)


def paging_echo(found: Any) -> bool:
    """Is the schema failure at a page's top-level `limit` or `offset` (and nowhere else)?"""
    return list(getattr(found, "instance_path", None) or ()) in (["limit"], ["offset"])


def revalidated(fuzz: Fuzzer, exchange: Exchange, checks: list[Any], content: bytes) -> Any:
    """The first failure of the same checks on the same answer with another body, or None."""
    from schemathesis.core.failures import FailureGroup
    from schemathesis.core.transport import Response

    sent = exchange.response
    other = Response(status_code=sent.status_code, headers=dict(sent.headers), content=content, request=sent.request,
                     elapsed=sent.elapsed, verify=sent.verify, message=sent.message, http_version=sent.http_version,
                     encoding=sent.encoding)
    try:
        exchange.case.validate_response(other, checks=checks, headers=dict(fuzz.auth), transport_kwargs=fuzz.transport_kwargs())
    except FailureGroup as group:
        return group.exceptions[0] if group.exceptions else None
    return None
