"""The OMP fuzzer's generation phases: valid data, negative data (schemathesis's coverage cases first, then
random), and the stateful create/get/update/delete run through the description's links. Each is bounded by
count and time and ends early on a 429 or a target error; what it sent and got back is a PhaseRun, shared
by the checks of the run. The fuzzer that runs them is in fuzzer.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from memconform.core.check_context import CheckContext
from memconform.core.results import TargetError
from memconform.suites.omp.fuzzing.openapi_description import closed_requests, description


class Fuzzer(Protocol):
    """What the phases use of fuzzer.Fuzzer (the phases do not import it: it imports them)."""

    ctx: CheckContext
    auth: dict[str, str]
    examples: int
    seed: int
    phase_budget_s: float
    coverage_cap: int
    ai_fuzzed: bool
    schema: Any

    def load(self, doc: dict[str, Any], positive_only: bool = False) -> Any: ...
    def settings(self, **overrides: Any) -> Any: ...
    def seeded(self, fn: Any) -> Any: ...
    def transport_kwargs(self) -> dict[str, Any]: ...
    def call(self, case: Any) -> Any: ...
    def cleanup(self) -> int: ...
    def operations(self, negative: bool = True) -> list[Any]: ...

STATEFUL_STEPS = 6
METHOD_RE = re.compile(r"HTTP method: \S+")


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


def _has_inputs(operation: Any) -> bool:
    definition = operation.definition.raw
    return "{" in operation.path or bool(definition.get("parameters") or definition.get("requestBody"))


def _callable_bare(operation: Any) -> bool:
    """Can the operation be called with none of its inputs (no path parameter, nothing required)?"""
    definition = operation.definition.raw
    required = [p for p in definition.get("parameters") or () if isinstance(p, dict) and p.get("required")]
    return "{" not in operation.path and not required and not (definition.get("requestBody") or {}).get("required")


def run_phase(fuzz: Fuzzer, negative: bool) -> PhaseRun:
    from hypothesis import given
    from schemathesis import GenerationMode

    mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE
    run = PhaseRun("negative data" if negative else "valid data", skipped_ai=not fuzz.ai_fuzzed)
    deadline = time.monotonic() + fuzz.phase_budget_s
    error: list[TargetError] = []
    for operation in fuzz.operations(negative):
        if negative and not _has_inputs(operation):
            continue  # nothing to make invalid (GET /v1/export, GET /v1/health)
        run.operations += 1
        if not negative and _callable_bare(operation):
            # first the bare call (GET /v1/memories with no filter, GET /v1/export): whatever the random
            # draws hold, what every memory of the key does to a listing is seen once
            try:
                case = operation.Case(headers=dict(fuzz.auth))
                run.exchanges.append(Exchange(case, fuzz.call(case), negative))
            except TargetError as exc:
                error.append(exc)
                run.stopped = str(exc)
                break
        if negative:
            # schemathesis's coverage cases first: one per constraint (maxLength + 1, maxItems + 1,
            # a value outside an enum, a missing required field), which random data rarely hits
            try:
                for case in coverage_cases(fuzz, operation):
                    if time.monotonic() > deadline:
                        raise _Stop(f"the phase's time budget of {fuzz.phase_budget_s:.0f} s ran out")
                    run.coverage += 1
                    response = fuzz.call(case)
                    run.exchanges.append(Exchange(case, response, negative))
                    if response.status_code == 429:
                        raise _Stop(f"{case.operation.label} answered 429: the target rate-limits this key")
            except _Stop as stop:
                run.stopped = stop.reason
                break

        @fuzz.settings()
        # the key is fixed, not generated: negative data is in the request, never in the key
        # (fuzz_ignored_auth sends the keyless and wrong-key probes itself)
        @given(case=operation.as_strategy(generation_mode=mode, headers=dict(fuzz.auth)))
        def one(case: Any) -> None:
            if time.monotonic() > deadline:
                raise _Stop(f"the phase's time budget of {fuzz.phase_budget_s:.0f} s ran out")
            try:
                response = fuzz.call(case)
            except TargetError as exc:
                error.append(exc)
                raise _Stop(str(exc)) from None
            run.exchanges.append(Exchange(case, response, negative))
            if response.status_code == 429:
                raise _Stop(f"{case.operation.label} answered 429: the target rate-limits this key")

        try:
            fuzz.seeded(one)()
        except _Stop as stop:
            run.stopped = stop.reason
            break
    run.cleaned = fuzz.cleanup()
    if error:
        raise error[0]
    if not run.exchanges:
        raise TargetError(f"the {run.name} phase sent no request within its budget ({run.stopped or 'no operation'})")
    return run


def coverage_cases(fuzz: Fuzzer, operation: Any) -> Iterator[Any]:
    """schemathesis's systematic negative cases for one operation, but none about the key:
    fuzz_ignored_auth probes that, and the key is always sent as given."""
    from schemathesis import GenerationMode
    from schemathesis.generation.drivers import CoverageGenerator
    from schemathesis.generation.feedback import NO_FEEDBACK
    from schemathesis.generation.overrides import Override

    generator = CoverageGenerator(
        operation=operation, generation_modes=[GenerationMode.NEGATIVE],
        generation_config=fuzz.schema.config.generation_for(operation=operation, phase="coverage"),
        auth_storage=None, override=Override(headers=dict(fuzz.auth)), feedback=NO_FEEDBACK,
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
        if len(seen) > fuzz.coverage_cap:
            return
        yield case


def run_stateful(fuzz: Fuzzer) -> PhaseRun:
    from schemathesis.checks import not_a_server_error
    from schemathesis.core.failures import FailureGroup
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        ensure_resource_availability,
        response_schema_conformance,
        status_code_conformance,
        use_after_free,
    )

    run = PhaseRun("stateful create/get/update/delete", operations=4)
    deadline = time.monotonic() + fuzz.phase_budget_s
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
              use_after_free, ensure_resource_availability]
    error: list[TargetError] = []
    # only the memory routes the links join, with valid data: the sequence is the point here
    doc = description(fuzz.ctx)
    doc["paths"] = {"/v1/memories": {"post": doc["paths"]["/v1/memories"]["post"]},
                    "/v1/memories/{id}": doc["paths"]["/v1/memories/{id}"]}
    machine = fuzz.load(closed_requests(doc), positive_only=True).as_state_machine()

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

    Machine._hypothesis_internal_use_seed = fuzz.seed  # the profile's seed, not the source's (see Fuzzer.seeded)
    try:
        Machine.run(settings=fuzz.settings(stateful_step_count=STATEFUL_STEPS))
    except _Stop as stop:
        run.stopped = stop.reason
    run.cleaned = fuzz.cleanup()
    if error:
        raise error[0]
    if not run.exchanges:
        raise TargetError(f"the stateful phase sent no request within its budget ({run.stopped or 'no link'})")
    return run
