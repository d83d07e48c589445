"""OMP API fuzzing: schemathesis, driven from memconform's own OpenAPI description of OMP v0.1.

The description is `fixtures/omp/openapi.yaml` (installed as memconform.fixtures). Each registered
check runs one schemathesis check family over generated requests, so a vendor sees which family
broke. Requests go through the target's one seam, `target.call(Request(...))` (call and run
deadlines, raw and decoded size caps, no redirects, no cookies, the key redacted); example counts
and the seed come from the profile, and every phase is bounded by time as well as by count.

Check ids; the rule each enforces; the broken servers that kill it (ci profile): the throwaway
apps of tests/test_omp_openapi.py, then the mutants of suites/omp/mutants.
  omp.fuzz_no_server_error        no 5xx for any generated request
                                  toy `crash`; server_error_on_bad_input
  omp.fuzz_status_codes           every status one the description lists for the route
                                  toy `status_200` (201 expected); not_found_as_200
  omp.fuzz_response_schemas       every 1xx-3xx body JSON and matching its §2.1/§3.3 schema
                                  toy `no_total`; id_format_uuid, timestamps_not_utc, export_envelope_wrong,
                                  no_validation, limit_not_capped, not_found_as_200
  omp.fuzz_error_envelopes        every 4xx/5xx body the §4 JSON envelope with the code of its status
                                  toy `bad_envelope` ({"detail": ...}, HTML 404); wrong_error_envelope
  omp.fuzz_negative_data_rejected invalid data (schemathesis coverage cases, then random) refused
                                  toy `lenient` (random negative data hits no_validation's limits only by luck)
  omp.fuzz_valid_data_accepted    valid data (the description's; errata O34) not refused with a 4xx
                                  toy `strict` (refuses a create with tags)
  omp.fuzz_ignored_auth           accepted requests refused without a key and with a wrong one
                                  toy `no_auth`; auth_skipped
  omp.fuzz_stateful_crud          create -> get/update -> delete -> get through the description's links
                                  toy `zombie`; delete_returns_200_and_keeps (also id_format_uuid,
                                  timestamps_not_utc, wrong_error_envelope, not_found_as_200)

Extract and compress are fuzzed only when the target states it has no AI key (errata O11): the
fuzzer never makes a target call a real AI provider, and never sends `api_key` in a body. The
fuzzer writes random data: it touches no memory it did not create (random ids, and the stateful
run follows links from its own creates only) and deletes every memory it saw created when a phase
ends. A 429 ends a phase early (noted, not failed); after 300 requests it paces itself to 50/s.
"""

from __future__ import annotations

from collections.abc import Iterator

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, TargetError
from memconform.suites.omp import format as omp
from memconform.suites.omp.fuzzing import judged, replayed  # noqa: F401  the comparators replay judges saved examples by
from memconform.suites.omp.fuzzing.fuzzer import (
    AUTH_PROBES_PER_OPERATION,
    MAX_FAILURES_PER_CHECK,
    SENTENCE_AUTH,
    SENTENCE_ERRORS,
    SENTENCE_SCHEMAS,
    SENTENCE_STATUS,
    Exchange,
    PhaseRun,
    evaluate,
    fuzzer,
    phase,
)
from memconform.suites.omp.suite import SUITE

# ---- the checks ---------------------------------------------------------------------------------

@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_STATUS)
def fuzz_no_server_error(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis not_a_server_error over valid and invalid generated requests."""
    from schemathesis.checks import not_a_server_error

    valid = phase(ctx, False).exchanges
    if not ctx.once("omp.fuzz.reached", lambda: reached_handlers(ctx, valid)):
        # a server answering every request with the same junk never lets a generated request reach a
        # handler: "no 5xx" would then be a pass without evidence
        raise Inconclusive("no valid generated request was answered with a described OMP response (a 2xx body "
                           "matching its schema): nothing shows the requests reached the implementation")
    yield from evaluate(ctx, "fuzz_no_server_error", valid + phase(ctx, True).exchanges, not_a_server_error,
                        "a status below 500", accept_readings=True)


def reached_handlers(ctx: CheckContext, exchanges: list[Exchange]) -> bool:
    """Whether any valid generated request got a 2xx whose body matches the description."""
    from schemathesis.core.failures import FailureGroup
    from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

    fuzz = fuzzer(ctx)
    for exchange in exchanges:
        if not 200 <= exchange.response.status_code < 300:
            continue
        # only a created memory shows a handler ran: a loosely described answer (health, an import
        # report) can be matched by a server that answers every request with the same junk
        if (exchange.case.method.upper(), exchange.case.path) != ("POST", "/v1/memories"):
            continue
        try:
            # an undocumented status has no schema to match, so the status is checked too
            exchange.case.validate_response(exchange.response, checks=[status_code_conformance, response_schema_conformance],
                                            headers=dict(fuzz.auth), transport_kwargs=fuzz.transport_kwargs())
        except FailureGroup:
            continue
        return True
    return False


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_STATUS)
def fuzz_status_codes(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis status_code_conformance: every status is one the description lists for the route."""
    from schemathesis.specs.openapi.checks import status_code_conformance

    exchanges = phase(ctx, False).exchanges + phase(ctx, True).exchanges
    yield from evaluate(ctx, "fuzz_status_codes", exchanges, status_code_conformance,
                         "a status the description lists for the route", accept_readings=True)


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_SCHEMAS)
def fuzz_response_schemas(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis response_schema_conformance (and content_type_conformance: §3 bodies are JSON) on non-errors."""
    from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

    exchanges = phase(ctx, False).exchanges + phase(ctx, True).exchanges
    yield from evaluate(ctx, "fuzz_response_schemas", [e for e in exchanges if e.response.status_code < 400],
                         [content_type_conformance, response_schema_conformance],
                         "a body matching the §2.1 / §3.3 schema of the response", echo_readings=True)


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_ERRORS)
def fuzz_error_envelopes(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis response_schema_conformance (and content_type_conformance) on errors: the §4 JSON envelope."""
    from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

    exchanges = phase(ctx, False).exchanges + phase(ctx, True).exchanges
    errors = [e for e in exchanges if e.response.status_code >= 400]
    if not errors:
        raise TargetError("no generated request was refused, so no error envelope could be checked")
    yield from evaluate(ctx, "fuzz_error_envelopes", errors, [content_type_conformance, response_schema_conformance],
                         'the §4 envelope {"error": CODE, "message": "...", "details": {}} with the code of the status')


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_ERRORS)
def fuzz_negative_data_rejected(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis negative_data_rejection: data breaking the §2.1/§3.3 limits gets a 4xx, not a 2xx."""
    from schemathesis.specs.openapi.checks import negative_data_rejection

    yield from evaluate(ctx, "fuzz_negative_data_rejected", phase(ctx, True).exchanges, negative_data_rejection,
                         "a 4xx refusal of invalid data", accept_readings=True)


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_STATUS)
def fuzz_valid_data_accepted(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis positive_data_acceptance: data the description calls valid is not refused (a 2xx, or
    401/403/404/409/429). Extract and compress are left out: they are fuzzed only on a target without an
    AI key, whose described answer to valid data is 422 no_api_key (errata O11)."""
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    if not ctx.once("omp.fuzz.reached", lambda: reached_handlers(ctx, phase(ctx, False).exchanges)):
        # as for fuzz_no_server_error: a server answering every request with the same 2xx junk would pass
        raise Inconclusive("no valid generated request was answered with a described OMP response (a 2xx body "
                           "matching its schema): nothing shows the requests reached the implementation")
    either = ctx.option("limit_over_max") == "either"  # errata O9: a limit over 100 may be refused or capped
    exchanges = [e for e in phase(ctx, False).exchanges
                 if e.case.path not in AI_PATHS and not (either and limit_over_max(e))]
    yield from evaluate(ctx, "fuzz_valid_data_accepted", exchanges, positive_data_acceptance,
                        "valid data accepted: a 2xx (or 401, 403, 404, 409, 429)", accept_readings=True)


AI_PATHS = ("/v1/extract", "/v1/compress")


def limit_over_max(exchange: Exchange) -> bool:
    """Whether the request asks for a page over the §3.3 maximum of 100 (query or body)."""
    body = exchange.case.body if isinstance(exchange.case.body, dict) else {}
    for value in ((exchange.case.query or {}).get("limit"), body.get("limit")):
        try:
            if value is not None and float(value) > omp.MAX_LIMIT:
                return True
        except (TypeError, ValueError):
            continue
    return False


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_AUTH)
def fuzz_ignored_auth(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis ignored_auth: accepted requests (a few per route) re-sent without a key and with a wrong one."""
    from schemathesis.specs.openapi.checks import ignored_auth

    per_operation: dict[str, int] = {}
    guarded = []
    for exchange in phase(ctx, False).exchanges:
        label = exchange.case.operation.label
        if 200 <= exchange.response.status_code < 300 and exchange.case.operation.path != "/v1/health" \
                and per_operation.get(label, 0) < AUTH_PROBES_PER_OPERATION:
            per_operation[label] = per_operation.get(label, 0) + 1
            guarded.append(exchange)
    if not guarded:
        raise TargetError("no valid generated request to an authenticated route was accepted")
    yield from evaluate(ctx, "fuzz_ignored_auth", guarded, ignored_auth,
                         "401 unauthorized without a key or with a wrong one")


@SUITE.check(section="§8", keyword="MUST", level="core", sentence=SENTENCE_STATUS)
def fuzz_stateful_crud(ctx: CheckContext) -> Iterator[Failure]:
    """schemathesis stateful run over the description's links: create -> get/update -> delete -> get."""
    fuzz = fuzzer(ctx)
    run: PhaseRun = ctx.once("omp.fuzz.stateful", fuzz.run_stateful)
    ctx.note(run.summary(fuzz))
    linked = any(e.case.operation.path == "/v1/memories/{id}" and e.response.status_code < 300 for e in run.exchanges)
    if not linked and not run.failures:
        raise TargetError("the stateful run never reached a created memory through a link")
    if not linked:
        ctx.note("no link was followed to a created memory: the failures below stopped the sequence")
    seen: set[tuple[str, str]] = set()
    for label, found_all, exchange in run.failures:
        for found in found_all:
            key = (label, str(getattr(found, "title", "")))
            if key not in seen and len(seen) < MAX_FAILURES_PER_CHECK:
                seen.add(key)
                yield fuzz.failure(label, found, exchange, "each step of the sequence conforming "
                                   "(no 5xx, listed status, described body, a deleted memory gone, a created one readable)")
    fuzz.save_curls("fuzz_stateful_crud")
