"""Bad input and nothing lost: every refusal is a 4xx with the §4 envelope, never a 5xx or a page,
and the run's memories in the export are the same before and after (nothing stored, nothing lost).

The requests with wrong types and bad parameters are data: fixtures/omp/requests/invalid/*.json,
each naming the check it breaks. Limits (10,001 characters, 21 tags, ...) are one check each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure, HarnessError
from memconform.kit.fixtures_loader import iter_cases
from memconform.suites.omp import client, controls, deviations, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.rules import o9_predictions
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply


def refused_create(ctx: CheckContext, label: str, repaired: dict[str, Any], **fields: Any) -> Iterator[Failure]:
    """Create a memory that breaks one rule: 422 validation_error, and nothing of the run changes.
    First the positive control: the same memory with the one rule repaired must be accepted."""
    controls.control(client.create(ctx, client.memory(ctx, label + "-ok", **repaired)), f"the same create with the rule repaired ({label})")
    before = client.run_state(ctx)
    bad = client.memory(ctx, label, **fields)
    answer = client.create(ctx, bad)
    if answer.ok:  # stored: what the export then holds of it is this deviation, not the export's
        key = f"{deviations.CREATE_STORES_INVALID}:{label}"
        established.establish(ctx, key, f"a create stored a memory §2.1 forbids ({', '.join(fields)})")
        deviations.sent_item(ctx, bad, key)
    yield from rules.validation_failures(ctx, answer)
    yield from client.state_changes(before, client.run_state(ctx), f"a refused create ({label})")


def padded(ctx: CheckContext, label: str, size: int, fill: str = "x") -> str:
    head = ctx.unique(label)
    return head + fill * (size - len(head))


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='content: string // The memory text. Plain natural language. Max 10,000 chars.')
def rejects_content_over_max(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "long", {"content": padded(ctx, "long", omp.MAX_CONTENT)},
                              content=padded(ctx, "long", omp.MAX_CONTENT + 1))


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.')
def rejects_too_many_tags(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "tags21", {"tags": [f"t{i}" for i in range(omp.MAX_TAGS - 1)]},
                              tags=[f"t{i}" for i in range(omp.MAX_TAGS)])  # plus the run tag: 20 and 21


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.')
def rejects_long_tag(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "tag51", {"tags": ["t" * omp.MAX_TAG_LEN]}, tags=["t" * (omp.MAX_TAG_LEN + 1)])


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='metadata?: Record<string, unknown> // Max 10 keys, values must be JSON-serialisable')
def rejects_too_many_metadata_keys(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "meta11", {"metadata": {f"k{i}": i for i in range(omp.MAX_METADATA_KEYS)}},
                              metadata={f"k{i}": i for i in range(omp.MAX_METADATA_KEYS + 1)})


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='namespace?: string // Optional grouping (e.g. "project:myapp"). Max 100 chars.')
def rejects_long_namespace(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "ns101", {"namespace": "n" * omp.MAX_NAMESPACE}, namespace="n" * (omp.MAX_NAMESPACE + 1))


@SUITE.check(section="§2.2", keyword="MUST", level="core",
           sentence='type: MemoryType // Classification of memory (see §2.2)')
def rejects_unknown_type(ctx: CheckContext) -> Iterator[Failure]:
    yield from refused_create(ctx, "type", {"type": "procedural"}, type="opinion")


def request_cases(check_name: str) -> list[dict[str, Any]]:
    """The bad requests of fixtures/omp/requests/invalid/ that break this check (data, not code)."""
    cases = [case for path, case in iter_cases("omp") if path.parent.parent.name == "requests"
             and f"{omp.SUITE}.{check_name}" in case.get("breaks", [])]
    if not cases:
        raise HarnessError(f"no request fixtures for omp.{check_name} under fixtures/omp/requests/invalid/")
    return cases


def send_case(ctx: CheckContext, case: dict[str, Any]) -> Reply:
    """One fixture request; a create body is a fresh run-unique memory with the case's change applied."""
    doc = case["document"]
    body = doc.get("body")
    if "merge" in doc or "drop" in doc:
        body = client.memory(ctx, case["id"])
        body.update(doc.get("merge", {}))
        for name in doc.get("drop", []):
            body.pop(name, None)
    return client.send(ctx, doc["method"], doc["path"], body=body, params=doc.get("params"))


def case_failures(ctx: CheckContext, check_name: str, lenient: tuple[str, ...] = ()) -> Iterator[Failure]:
    """Each fixture is refused with 422; cases whose id starts with a `lenient` prefix may instead be
    served sanely unless option bad_params=reject (errata O9)."""
    strict = ctx.option("bad_params") == "reject"
    for case in request_cases(check_name):
        answer = send_case(ctx, case)
        detail = f"fixture {case['id']}: {case['description']}"
        if case["id"].startswith(lenient):
            served, refused = f"{case['id']}: served as a sane page", f"{case['id']}: refused with a 4xx"
            seen = ctx.observe("O9", o9_predictions(case, answer),
                               accepted=(refused,) if strict else (served, refused),
                               title=f"{case['id']}: neither served as a sane page (at most 100 memories) nor refused",
                               path="$.memories", pinned=("bad_params=reject",) if strict else ())
            if seen.failure and not answer.status >= 500:  # a 5xx: the validation failures below say "a server error"
                seen.failure.received, seen.failure.detail = answer.brief(), detail
                if case["id"].startswith("list-limit") and served_over_cap(answer):  # a fuzzed list meets it too
                    established.establish(ctx, deviations.BELOW_ONE_SERVES_ALL,
                                          "a list limit below 1 served with more than 100 memories (no cap)")
                yield seen.failure
                continue
            if seen.fits(served):
                continue
        for failure in rules.validation_failures(ctx, answer):
            failure.detail = detail
            yield failure


def served_over_cap(answer: Reply) -> bool:
    body = answer.body if answer.ok and isinstance(answer.body, dict) else {}
    return isinstance(body.get("memories"), list) and len(body["memories"]) > omp.MAX_LIMIT


@SUITE.check(section="§4", keyword="MUST", level="core",
           sentence='`validation_error` 422 Request body failed schema validation')
def rejects_wrong_types(ctx: CheckContext) -> Iterator[Failure]:
    controls.control(client.create(ctx, client.memory(ctx, "types-ok")), "a create with every field of the right type")
    before = client.run_state(ctx)
    yield from case_failures(ctx, "rejects_wrong_types")
    yield from client.state_changes(before, client.run_state(ctx), "refused creates with wrong types")


CODE_POINTS, UTF16_UNITS = "chars are code points", "chars are UTF-16 code units"


def observe_char_unit(ctx: CheckContext, answer: Any, created: bool, unit: str) -> Observation:
    """O19: every value at its limit in astral characters stored (chars are code points), or refused as
    over a limit counted in UTF-16 code units."""
    return ctx.observe("O19", {CODE_POINTS: created, UTF16_UNITS: 400 <= answer.status < 500}, answer.brief(),
                       accepted=(CODE_POINTS,) if unit == "code-points" else (CODE_POINTS, UTF16_UNITS),
                       title="a memory with every value at its limit in astral characters was neither stored nor "
                             "refused as over a limit counted in UTF-16 code units",
                       pinned=("char_unit=code-points",) if unit == "code-points" else ())


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.')
def accepts_values_at_limits(ctx: CheckContext) -> Iterator[Failure]:
    """Every value exactly at its limit, in ASCII, in a non-ASCII BMP letter (2 bytes in UTF-8) and in an
    astral character (2 UTF-16 code units): limits count characters, not bytes (errata O19)."""
    unit = ctx.option("char_unit")
    for fill, name in (("y", "ASCII"), ("é", "non-ASCII"), ("🧠", "astral")):
        request = client.memory(ctx, f"limits-{name}", content=padded(ctx, f"limits-{name}", omp.MAX_CONTENT, fill),
                           tags=[f"{i:02d}".ljust(omp.MAX_TAG_LEN, fill) for i in range(omp.MAX_TAGS - 1)],
                           namespace=fill * omp.MAX_NAMESPACE, metadata={f"k{i}": i for i in range(omp.MAX_METADATA_KEYS)})
        answer = client.create(ctx, request)
        created = answer.ok and isinstance(answer.body, dict) and isinstance(answer.body.get("id"), str)
        if name == "astral":
            seen = observe_char_unit(ctx, answer, created, unit)
            if seen.failure:
                yield seen.failure
            if not seen.fits(CODE_POINTS):
                continue
        elif not created:
            yield Failure(f"a memory with every value at its limit ({name} characters) was refused", answer.brief(), 201, "$")
            continue
        got = client.get(ctx, answer.body["id"]).accepted_json(dict, "getting the memory at the limits")
        for field in ("content", "namespace", "metadata"):
            if got.get(field) != request[field]:
                yield Failure(f"{field} at its limit ({name}) was not stored as written", str(got.get(field))[:80],
                              str(request[field])[:80], f"$.{field}")
        if sorted(got.get("tags") or []) != sorted(request["tags"]):
            yield Failure(f"20 tags of up to 50 characters ({name}) were not stored as written", len(got.get("tags") or []), 20, "$.tags")


def malformed_status(ctx: CheckContext) -> tuple[int | None, str | None]:
    wanted = ctx.option("malformed_json_status")
    if wanted == "any-4xx":
        return None, None
    return int(wanted), ("validation_error" if wanted == "422" else None)


@SUITE.check(section="§4", keyword="MUST", level="core",
           sentence='All request and response bodies are JSON.')
def malformed_json_rejected(ctx: CheckContext) -> Iterator[Failure]:
    made = client.created(ctx, client.memory(ctx, "malformed"))
    controls.control(client.send(ctx, "PUT", f"/memories/{made['id']}", raw=b'{"tags": ["malformed-ok"]}'), "the same PUT with a JSON body")
    before = client.run_state(ctx)
    marker = ctx.unique("malformed")
    broken = ('{"content": "' + marker + '", "type": "semantic", "tags": [').encode()
    status, code = malformed_status(ctx)
    for method, path in (("POST", "/memories"), ("PUT", f"/memories/{made['id']}"), ("POST", "/memories/search"), ("POST", "/import")):
        yield from rules.error_failures(ctx, client.send(ctx, method, path, raw=broken), status, code)
    yield from client.state_changes(before, client.run_state(ctx), "requests with a malformed JSON body")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`limit` integer Max results (default 20, max 100)')
def list_rejects_bad_paging(ctx: CheckContext) -> Iterator[Failure]:
    controls.control(client.list_(ctx, {"limit": "1", "offset": "0", "sort": "created_at_asc", "type": "semantic"}), "a list with valid paging")
    yield from case_failures(ctx, "list_rejects_bad_paging", lenient=("list-",))


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`validation_error` 422 Request body failed schema validation')
def search_rejects_bad_input(ctx: CheckContext) -> Iterator[Failure]:
    controls.control(client.search(ctx, {"q": "memconform", "mode": "keyword", "limit": 1, "tags": [client.run_tag(ctx)]}), "a valid search")
    yield from case_failures(ctx, "search_rejects_bad_input",
                             lenient=("search-limit-negative", "search-mode-unknown", "search-tags-string"))


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Response 404 Not Found: { "error": "memory_not_found" }')
def unknown_id_every_route(ctx: CheckContext) -> Iterator[Failure]:
    missing = client.new_id()
    marker = ctx.unique("ghost")
    known = client.created(ctx, client.memory(ctx, "known-id"))
    controls.control(client.get(ctx, known["id"]), "getting a memory that exists")
    yield from rules.error_failures(ctx, client.get(ctx, missing), 404, "memory_not_found")
    yield from rules.error_failures(ctx, client.update(ctx, missing, {"content": f"{marker} upserted?"}), 404, "memory_not_found")
    yield from rules.error_failures(ctx, client.delete(ctx, missing), 404, "memory_not_found")
    if client.get(ctx, missing, quiet=True).status != 404 or client.with_marker(client.exported(ctx), marker):
        yield Failure("an update of an unknown id stored a memory", marker, "nothing stored", "$.memories")
