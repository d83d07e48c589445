"""Export, import with every conflict strategy, and health (§3.3, §5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, controls, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.dataset import ids
from memconform.suites.omp.deviations import CONFLICT_FROM_BODY
from memconform.suites.omp.importing import import_report_failures, import_with
from memconform.suites.omp.suite import SUITE


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Export all memories as a portable JSON file.')
def export_envelope(ctx: CheckContext) -> Iterator[Failure]:
    made = client.created(ctx, client.memory(ctx, "export"))
    answer = client.export(ctx, record=False)
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("export did not answer 200 with an object", answer.status, 200, "$")
        return
    if body.get("omp_version") != omp.VERSION:
        yield Failure("omp_version is not \"0.1\"", body.get("omp_version", "<absent>"), omp.VERSION, "$.omp_version")
    if rules.instant(body.get("exported_at")) is None:
        yield Failure("exported_at is not an ISO 8601 UTC timestamp", body.get("exported_at", "<absent>"), "ISO 8601 UTC", "$.exported_at")
    if not isinstance(body.get("server"), str):
        yield Failure("server is missing or not a string", body.get("server", "<absent>"), "a string", "$.server")
    if not isinstance(body.get("memories"), list):
        yield Failure("memories is not an array", body.get("memories", "<absent>"), "Memory[]", "$.memories")
    elif made["id"] not in ids(body["memories"]):
        yield Failure("export does not hold a memory just created", "absent", made["id"], "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Import memories from an OMP export file.')
def import_report_shape(ctx: CheckContext) -> Iterator[Failure]:
    memories = [client.full_memory(ctx, f"imp{i}") for i in range(2)]
    answer = import_with(ctx, memories)
    yield from import_report_failures(answer)
    if isinstance(answer.body, dict) and (answer.body.get("imported"), answer.body.get("skipped"), answer.body.get("errors")) != (2, 0, []):
        yield Failure("two new memories did not report imported 2, skipped 0, no errors",
                      {k: answer.body.get(k) for k in ("imported", "skipped", "errors")}, {"imported": 2, "skipped": 0, "errors": []}, "$")
    everything = client.exported(ctx)
    stored = [m for mem in memories for m in client.with_marker(everything, mem["content"])]
    if len(stored) != 2:
        yield Failure("the imported memories are not in the export exactly once each", len(stored), 2, "$.memories")


def conflict_case(ctx: CheckContext, label: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """An existing memory, a rival with its id and other content, and a new memory, for one import."""
    existing = client.created(ctx, client.memory(ctx, f"{label}-existing"))
    rival = dict(client.full_memory(ctx, f"{label}-rival"), id=existing["id"])
    return existing, rival, client.full_memory(ctx, f"{label}-new")


def by_content(ctx: CheckContext, *contents: str) -> dict[str, list[dict[str, Any]]]:
    everything = client.exported(ctx)
    return {text: client.with_marker(everything, text) for text in contents}


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='skip — skip memories whose ID already exists (default)')
def import_skip_default(ctx: CheckContext) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "skip")
    answer = import_with(ctx, [rival, new])
    yield from import_report_failures(answer)
    if isinstance(answer.body, dict) and answer.body.get("skipped") != 1:
        yield Failure("the memory whose id exists was not counted as skipped", answer.body.get("skipped"), 1, "$.skipped")
    found = by_content(ctx, existing["content"], rival["content"], new["content"])
    if len(found[existing["content"]]) != 1:
        yield Failure("without a conflict parameter the existing memory was not kept", len(found[existing["content"]]), 1, "$.memories")
    if found[rival["content"]]:
        yield Failure("without a conflict parameter a memory with an existing id was imported", rival["content"], "skipped", "$.memories")
    if len(found[new["content"]]) != 1:
        yield Failure("a new memory next to a skipped one was not imported", len(found[new["content"]]), 1, "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='overwrite — overwrite existing memories')
def import_overwrite(ctx: CheckContext) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "overwrite")
    failures = list(import_report_failures(import_with(ctx, [rival, new], "overwrite")))
    got = client.get(ctx, existing["id"]).accepted_json(dict, "getting the overwritten memory")
    if got.get("content") != rival["content"]:
        failures.append(Failure("conflict=overwrite did not replace the existing memory", got.get("content"), rival["content"], "$.content"))
    found = by_content(ctx, existing["content"], new["content"])
    if found[existing["content"]]:
        failures.append(Failure("conflict=overwrite kept the old content as well", len(found[existing["content"]]), 0, "$.memories"))
    if len(found[new["content"]]) != 1:
        failures.append(Failure("conflict=overwrite did not import the new memory once", len(found[new["content"]]), 1, "$.memories"))
    yield from named_cause(ctx, "overwrite", failures)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='duplicate — always create new IDs')
def import_duplicate(ctx: CheckContext) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "duplicate")
    failures = list(import_report_failures(import_with(ctx, [rival, new], "duplicate")))
    found = by_content(ctx, existing["content"], rival["content"], new["content"])
    if len(found[existing["content"]]) != 1:
        failures.append(Failure("conflict=duplicate did not keep the existing memory", len(found[existing["content"]]), 1, "$.memories"))
    for mem in (rival, new):
        copies = found[mem["content"]]
        if len(copies) != 1:
            failures.append(Failure("conflict=duplicate did not import the memory once", len(copies), 1, "$.memories"))
        elif copies[0].get("id") == mem["id"]:
            failures.append(Failure("conflict=duplicate kept the file's id instead of a new one", copies[0].get("id"), "a new id", "$.memories[?].id"))
    yield from named_cause(ctx, "duplicate", failures)


def named_cause(ctx: CheckContext, strategy: str, failures: list[Failure]) -> Iterator[Failure]:
    """The failures of a strategy sent only as the query parameter §3.3 names; when the server follows the
    same strategy sent only as a body field, that reading (errata O1, body-only) is named first as the cause."""
    if failures and ctx.option("conflict_in") == "query" and follows_body_only(ctx, strategy):
        established.establish(ctx, CONFLICT_FROM_BODY, "the import conflict strategy is read from a body field, "
                                                       "not the query parameter §3.3 names")
        yield Failure(f"conflict={strategy} in the query parameter §3.3 names is ignored: the server reads the strategy "
                      "from a body field `conflict` (the body-only reading of errata O1)", "followed as a body field only",
                      'the query parameter: "conflict strategies (query param)"', "$",
                      f"the failures below follow from it ({len(failures)})", readings=("conflict_in=query",))
        for failure in failures:
            failure.detail = "caused by the body-only reading named above" + (f"; {failure.detail}" if failure.detail else "")
    yield from failures


def follows_body_only(ctx: CheckContext, strategy: str) -> bool:
    """Does the server apply `strategy` sent only as a body field `conflict` (no query parameter), on fresh memories?"""
    existing, rival, _ = conflict_case(ctx, f"{strategy}-body")
    doc = dict(client.export_file([rival]), conflict=strategy)
    client.import_(ctx, doc)
    found = by_content(ctx, existing["content"], rival["content"])
    if strategy == "overwrite":
        return not found[existing["content"]] and len(found[rival["content"]]) == 1
    copies = found[rival["content"]]
    return len(found[existing["content"]]) == 1 and len(copies) == 1 and copies[0].get("id") != rival["id"]


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='conflict strategies (query param):')
def import_unknown_conflict_rejected(ctx: CheckContext) -> Iterator[Failure]:
    """An unknown strategy is 422 with nothing imported. A server already seen reading the strategy from a
    body field only never sees one sent in the query: its acceptance is explained by that reading when the
    same unknown strategy sent as a body field is refused, and stays a failure of its own when it is not."""
    controls.control(import_with(ctx, [client.full_memory(ctx, "good-conflict")], "skip"), "the same import with conflict=skip")
    new = client.full_memory(ctx, "bad-conflict")
    failures = list(rules.validation_failures(ctx, import_with(ctx, [new], "replace-all")))
    if client.with_marker(client.exported(ctx), new["content"]):
        failures.append(Failure("an import with an unknown conflict strategy stored memories", new["content"], "nothing imported",
                                "$.memories"))
    if failures and ctx.option("conflict_in") == "query" and established.explaining(ctx, CONFLICT_FROM_BODY) \
            and refuses_unknown_in_body(ctx):
        failures = [established.explained(ctx, f, CONFLICT_FROM_BODY) for f in failures]
    yield from failures


def refuses_unknown_in_body(ctx: CheckContext) -> bool:
    """Is an unknown strategy sent only as a body field `conflict` refused (a 4xx, nothing stored)?"""
    mem = client.full_memory(ctx, "bad-conflict-body")
    answer = client.import_(ctx, dict(client.export_file([mem]), conflict="replace-all"))
    return 400 <= answer.status < 500 and not client.with_marker(client.exported(ctx), mem["content"])


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Server health check. No authentication required.')
def health_without_key(ctx: CheckContext) -> Iterator[Failure]:
    answer = client.health(ctx, key=None)
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("health without a key did not answer 200 with an object", f"{answer.status} {answer.raw[:120]!r}", 200, "$")
        return
    if body.get("status") != "ok":
        yield Failure("status is not \"ok\"", body.get("status", "<absent>"), "ok", "$.status")
    if not isinstance(body.get("version"), str):
        yield Failure("version is missing or not a string", body.get("version", "<absent>"), "0.1", "$.version")
    if not rules.is_int(body.get("memories_count")) or body["memories_count"] < 0:
        yield Failure("memories_count is missing or not a count", body.get("memories_count", "<absent>"), "integer >= 0", "$.memories_count")


@SUITE.check(section="§5", keyword="MUST", level="core",
           sentence='Implementations declare their compliance level in /v1/health:')
def health_declares_level(ctx: CheckContext) -> Iterator[Failure]:
    if ctx.state(client.OmpRun).level_note is not None:
        ctx.note(str(ctx.state(client.OmpRun).level_note))
    body = client.health(ctx).body
    if rules.declared_level(body) is None:
        named = {k: body.get(k) for k in omp.HEALTH_LEVEL_FIELDS if isinstance(body, dict) and k in body}
        yield Failure("health names no compliance level", named or "<absent>", list(omp.LEVEL_NAMES), "$.compliance")
