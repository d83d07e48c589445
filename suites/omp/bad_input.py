"""Bad input and nothing lost: every refusal is a 4xx with the §4 envelope, never a 5xx or a page,
and the run's memories in the export are the same before and after (nothing stored, nothing lost).

The requests with wrong types and bad parameters are data: fixtures/omp/requests/invalid/*.json,
each naming the check it breaks. Limits (10,001 characters, 21 tags, ...) are one check each.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, HarnessError
from memconform.core.registry import check
from memconform.fixtures_loader import iter_cases
from memconform.formats import omp

from . import client as c
from . import rules

omp_check = partial(check, suite=omp.SUITE, spec=omp.SPEC)


def refused_create(ctx: Any, label: str, **fields: Any) -> Iterator[Failure]:
    """Create a memory that breaks one rule: 422 validation_error, and nothing of the run changes."""
    before = c.run_state(ctx)
    yield from rules.validation_failures(c.create(ctx, c.memory(ctx, label, **fields)))
    yield from c.state_changes(before, c.run_state(ctx), f"a refused create ({label})")


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="content: string // Max 10,000 chars — 10,001 characters are 422 validation_error and nothing is stored")
def rejects_content_over_max(ctx: Any) -> Iterator[Failure]:
    head = ctx.unique("long")
    yield from refused_create(ctx, "long", content=head + "x" * (omp.MAX_CONTENT + 1 - len(head)))


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="tags: string[] // Max 20 tags — 21 tags are 422 validation_error and nothing is stored")
def rejects_too_many_tags(ctx: Any) -> Iterator[Failure]:
    yield from refused_create(ctx, "tags21", tags=[f"t{i}" for i in range(omp.MAX_TAGS)])  # plus the run tag: 21


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="tags: string[] // 50 chars each — a 51-character tag is 422 validation_error and nothing is stored")
def rejects_long_tag(ctx: Any) -> Iterator[Failure]:
    yield from refused_create(ctx, "tag51", tags=["t" * (omp.MAX_TAG_LEN + 1)])


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="metadata?: Record<string, unknown> // Max 10 keys — 11 keys are 422 validation_error and nothing is stored")
def rejects_too_many_metadata_keys(ctx: Any) -> Iterator[Failure]:
    yield from refused_create(ctx, "meta11", metadata={f"k{i}": i for i in range(omp.MAX_METADATA_KEYS + 1)})


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="namespace?: string // Max 100 chars — 101 characters are 422 validation_error and nothing is stored")
def rejects_long_namespace(ctx: Any) -> Iterator[Failure]:
    yield from refused_create(ctx, "ns101", namespace="n" * (omp.MAX_NAMESPACE + 1))


@omp_check(section="§2.2", keyword="MUST", level="core",
           sentence="type: MemoryType — episodic, semantic or procedural; another type is 422 validation_error and nothing is stored")
def rejects_unknown_type(ctx: Any) -> Iterator[Failure]:
    yield from refused_create(ctx, "type", type="opinion")


def request_cases(check_name: str) -> list[dict[str, Any]]:
    """The bad requests of fixtures/omp/requests/invalid/ that break this check (data, not code)."""
    cases = [case for path, case in iter_cases("omp") if path.parent.parent.name == "requests"
             and f"{omp.SUITE}.{check_name}" in case.get("breaks", [])]
    if not cases:
        raise HarnessError(f"no request fixtures for omp.{check_name} under fixtures/omp/requests/invalid/")
    return cases


def send_case(ctx: Any, case: dict[str, Any]) -> c.Answer:
    """One fixture request; a create body is a fresh run-unique memory with the case's change applied."""
    doc = case["document"]
    body = doc.get("body")
    if "merge" in doc or "drop" in doc:
        body = c.memory(ctx, case["id"])
        body.update(doc.get("merge", {}))
        for name in doc.get("drop", []):
            body.pop(name, None)
    return c.send(ctx, doc["method"], doc["path"], body=body, params=doc.get("params"))


def case_failures(ctx: Any, check_name: str) -> Iterator[Failure]:
    for case in request_cases(check_name):
        for failure in rules.validation_failures(send_case(ctx, case)):
            failure.detail = f"fixture {case['id']}: {case['description']}"
            yield failure


@omp_check(section="§4", keyword="MUST", level="core",
           sentence="validation_error 422: Request body failed schema validation (wrong JSON types, a missing content)")
def rejects_wrong_types(ctx: Any) -> Iterator[Failure]:
    before = c.run_state(ctx)
    yield from case_failures(ctx, "rejects_wrong_types")
    yield from c.state_changes(before, c.run_state(ctx), "refused creates with wrong types")


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="content Max 10,000 chars; Max 20 tags, 50 chars each; namespace Max 100 chars; metadata Max 10 keys — "
                    "values at the limits are accepted as written")
def accepts_values_at_limits(ctx: Any) -> Iterator[Failure]:
    head = ctx.unique("limits")
    request = c.memory(ctx, "limits", content=head + "y" * (omp.MAX_CONTENT - len(head)),
                       tags=[f"{i:02d}".ljust(omp.MAX_TAG_LEN, "t") for i in range(omp.MAX_TAGS - 1)],
                       namespace="n" * omp.MAX_NAMESPACE, metadata={f"k{i}": i for i in range(omp.MAX_METADATA_KEYS)})
    answer = c.create(ctx, request)
    if not answer.ok or not isinstance(answer.body, dict) or not isinstance(answer.body.get("id"), str):
        yield Failure("a memory with every value at its limit was refused", f"{answer.status} {answer.raw[:200]!r}", 201, "$")
        return
    got = c.ok_json(c.get(ctx, answer.body["id"]), dict, "getting the memory at the limits")
    for name in ("content", "namespace", "metadata"):
        if got.get(name) != request[name]:
            yield Failure(f"{name} at its limit was not stored as written", str(got.get(name))[:80], str(request[name])[:80], f"$.{name}")
    if sorted(got.get("tags") or []) != sorted(request["tags"]):
        yield Failure("20 tags of up to 50 characters were not stored as written", len(got.get("tags") or []), 20, "$.tags")


def malformed_status(ctx: Any) -> tuple[int | None, str | None]:
    wanted = ctx.option("malformed_json_status")
    if wanted == "any-4xx":
        return None, None
    return int(wanted), ("validation_error" if wanted == "422" else None)


@omp_check(section="§4", keyword="MUST", level="core",
           sentence="All errors use a consistent envelope — also for a body that is not JSON (errata O10, option malformed_json_status)")
def malformed_json_rejected(ctx: Any) -> Iterator[Failure]:
    made = c.created(ctx, c.memory(ctx, "malformed"))
    before = c.run_state(ctx)
    marker = ctx.unique("malformed")
    broken = ('{"content": "' + marker + '", "type": "semantic", "tags": [').encode()
    status, code = malformed_status(ctx)
    for method, path in (("POST", "/memories"), ("PUT", f"/memories/{made['id']}"), ("POST", "/memories/search"), ("POST", "/import")):
        yield from rules.error_failures(c.send(ctx, method, path, raw=broken), status, code)
    yield from c.state_changes(before, c.run_state(ctx), "requests with a malformed JSON body")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="limit integer (default 20, max 100); offset integer; sort one of three; type a MemoryType — "
                    "anything else is 422 validation_error (errata O9)")
def list_rejects_bad_paging(ctx: Any) -> Iterator[Failure]:
    yield from case_failures(ctx, "list_rejects_bad_paging")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="POST /v1/memories/search: a mode other than keyword/semantic/hybrid, or a q, limit or tags of the wrong type, "
                    "is 422 validation_error (errata O9)")
def search_rejects_bad_input(ctx: Any) -> Iterator[Failure]:
    yield from case_failures(ctx, "search_rejects_bad_input")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='Response 404 Not Found: { "error": "memory_not_found" } — on every id route (GET, PUT, DELETE /v1/memories/:id)')
def unknown_id_every_route(ctx: Any) -> Iterator[Failure]:
    missing = c.new_id()
    marker = ctx.unique("ghost")
    yield from rules.error_failures(c.get(ctx, missing), 404, "memory_not_found")
    yield from rules.error_failures(c.update(ctx, missing, {"content": f"{marker} upserted?"}), 404, "memory_not_found")
    yield from rules.error_failures(c.delete(ctx, missing), 404, "memory_not_found")
    if c.get(ctx, missing, quiet=True).status != 404 or c.with_marker(c.exported(ctx), marker):
        yield Failure("an update of an unknown id stored a memory", marker, "nothing stored", "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="POST /v1/import: an invalid memory among good ones is skipped and reported in errors, the rest imported, "
                    "and no existing memory is lost, whatever the strategy (errata O7)")
def import_bad_memory_reported(ctx: Any) -> Iterator[Failure]:
    for strategy in omp.CONFLICTS:
        existing = c.created(ctx, c.memory(ctx, f"keep-{strategy}"))
        good = [c.full_memory(ctx, f"good-{strategy}-{i}") for i in range(2)]
        bad = c.full_memory(ctx, f"bad-{strategy}")
        bad["content"] += "z" * omp.MAX_CONTENT
        rival = dict(c.full_memory(ctx, f"rival-{strategy}"), id=existing["id"])
        answer = c.import_(ctx, c.export_file([good[0], bad, good[1], rival]), strategy)
        everything = c.exported(ctx)
        if answer.ok:
            errors = answer.body.get("errors") if isinstance(answer.body, dict) else None
            named = [e for e in errors or [] if isinstance(e, dict) and (e.get("index") == 1 or e.get("id") == bad["id"])]
            if not named:
                yield Failure(f"conflict={strategy}: the report does not name the invalid memory", errors, '[{"index": 1, ...}]', "$.errors")
            for mem in good:
                if len(c.with_marker(everything, mem["content"])) != 1:
                    yield Failure(f"conflict={strategy}: a good memory beside an invalid one was not imported", mem["content"][:60], "imported once", "$.memories")
        else:  # refusing the whole file is a careful reading too, if it says so and imports nothing
            yield from rules.error_failures(answer, None, None)
            if any(c.with_marker(everything, mem["content"]) for mem in good):
                yield Failure(f"conflict={strategy}: a refused import stored memories", answer.status, "nothing imported", "$.memories")
        if c.with_marker(everything, bad["content"][:60]):
            yield Failure(f"conflict={strategy}: the invalid memory was stored", bad["content"][:60], "not stored", "$.memories")
        if existing["id"] not in [m.get("id") for m in everything]:
            yield Failure(f"conflict={strategy}: an existing memory was lost", existing["id"], "still there", "$.memories")
