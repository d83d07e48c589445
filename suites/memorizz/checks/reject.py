"""Consumer level, its conformance clause: "Validation rejects ..." seven classes, each with its positive control.

Every check also restores a valid three-record archive of its own (the same shape, nothing broken):
a target that refuses it refuses everything, and the check errors (ControlRefused) instead of
passing. Each broken variant, built fresh in its own namespace, must be refused, and nothing of it may be
written (one export of everything after them and the control shows what each namespace holds). Whatever
the harness wrote is handed to cleanup.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure, Inconclusive
from memconform.kit import domain
from memconform.kit.fixtures_loader import fixture_root
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.client import (
    by_content,
    export,
    forget_namespaces_at_end,
    import_archive,
    seeded,
    small_archive,
)
from memconform.suites.memorizz.domain_support import per_namespace
from memconform.suites.memorizz.sentences import REJECTS
from memconform.suites.memorizz.suite import SUITE

Breaker = Callable[[dict[str, Any]], Any]


def rejected_variants(ctx: CheckContext, label: str, variants: dict[str, Breaker]) -> Iterator[Failure]:
    """Each variant sent, then the control restored, then one export of everything: what each namespace holds.
    The control goes last so that an export paged past what it shows (the newest records left out) misses it:
    then each namespace is read alone, as absence seen in a paged export proves nothing."""
    sent = []
    for what, breaker in variants.items():
        bad, ns = small_archive(ctx, label)
        breaker(bad)
        accepted, body = import_archive(ctx, bad, "restore")
        if accepted:
            forget_namespaces_at_end(ctx, ns)  # the harness wrote invalid data: remove it where the target can
        sent.append((what, ns, accepted, body))
    control, control_ns = small_archive(ctx, f"{label}-control")
    forget_namespaces_at_end(ctx, control_ns)
    accepted, body = import_archive(ctx, control, "restore")
    if not accepted:
        raise ControlRefused(f"a valid archive of the same shape was refused: {json.dumps(body, default=str)[:200]}")
    held = per_namespace(export(ctx))
    count: Callable[[str], int] = (lambda ns: held.get(ns, 0)) if held.get(control_ns, 0) else \
        (lambda ns: len(by_content(export(ctx, memory_id=ns))))
    # absence is evidence only if an accepted import shows up in an export
    visible = count(control_ns) > 0
    if not visible:
        ctx.note("the restored control archive is not visible in an export of its namespace: "
                 "whether a refused archive wrote anything is not checked")
    for what, ns, accepted, body in sent:
        if accepted:
            yield Failure(f"an archive with {what} was accepted",
                          body.get("imported") if isinstance(body, dict) else body, "rejected", "$")
        elif visible and count(ns):
            forget_namespaces_at_end(ctx, ns)
            yield Failure(f"an archive with {what} was refused, but its records were written", ns,
                          "nothing written", f"$ (namespace {ns})")


def _set(path: tuple[str, ...], value: Any, seal: bool = True) -> Breaker:
    def brk(archive: dict[str, Any]) -> None:
        node = archive
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        if seal:
            memorizz.reseal(archive)
    return brk


def _first(store: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda a: a["stores"][store][0]


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_unsupported_version(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "version", {
        "version 2": _set(("version",), 2),
        'version "1" (a string)': _set(("version",), "1"),
    })


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_unknown_envelope_field(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "envelope", {"an unknown envelope field": _set(("comment",), "x")})


def _rename_taxonomy_key(archive: dict[str, Any]) -> None:
    archive["taxonomy"]["memagent"] = archive["taxonomy"].pop("agents")
    memorizz.reseal(archive)


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_incorrect_taxonomy(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "taxonomy", {
        "agents filed under long_term.semantic": _set(("taxonomy", "agents"), "long_term.semantic"),
        "a taxonomy key memagent instead of agents": _rename_taxonomy_key,
    })


def _drop_store(archive: dict[str, Any]) -> None:
    del archive["stores"]["shared_memory"]
    del archive["manifest"]["counts"]["shared_memory"]
    memorizz.reseal(archive)


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_missing_store_key(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "stores", {"the empty store shared_memory missing": _drop_store})


def _duplicate(archive: dict[str, Any]) -> None:
    twin = copy.deepcopy(archive["stores"]["knowledge_base"][0])
    twin["data"]["content"] += " (twin)"
    twin["data"].pop("id", None)
    archive["stores"]["knowledge_base"].append(twin)
    memorizz.seal(archive)


def _differ(store: str, key: str) -> Breaker:
    def brk(archive: dict[str, Any]) -> None:
        record = archive["stores"][store][0]
        record["data"][key] = record["id"] + "-other"
        memorizz.reseal(archive)
    return brk


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_duplicate_or_inconsistent_ids(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "ids", {
        "a record id twice in one store": _duplicate,
        "data.id not the record id": _differ("knowledge_base", "id"),
        "data._id not the record id": _differ("knowledge_base", "_id"),
        "agent_id not the agent's record id": _differ("agents", "agent_id"),
        "persona_id not the persona's record id": _differ("personas", "persona_id"),
    })


def _count_and_total(archive: dict[str, Any]) -> None:
    archive["manifest"]["counts"]["knowledge_base"] = 2  # the store holds 1; record_count agrees with counts
    archive["manifest"]["record_count"] = 4
    memorizz.reseal(archive)


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_incorrect_counts(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "counts", {
        "a store count that is not the store's length": _count_and_total,
        "a record_count that is not the number of records": _set(("manifest", "record_count"), 7),
        "a zero count missing": lambda a: (a["manifest"]["counts"].pop("tool_log"), memorizz.reseal(a)),
    })


def _stale(archive: dict[str, Any]) -> None:
    archive["stores"]["knowledge_base"][0]["data"]["content"] += " (edited after sealing)"


def _flip_digit(archive: dict[str, Any]) -> None:
    digest = archive["integrity"]["digest"]
    archive["integrity"]["digest"] = digest[:-1] + ("0" if digest[-1] != "0" else "1")


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def rejects_checksum_mismatch(ctx: CheckContext) -> Iterator[Failure]:
    yield from rejected_variants(ctx, "checksum", {
        "a record edited after sealing": _stale,
        "one digest digit changed": _flip_digit,
    })


@SUITE.check(level="consumer", section="Records and relationships", keyword="MUST",
                sentence="Restoring with preserved IDs keeps those identities.")
def accepts_valid_archive(ctx: CheckContext) -> Iterator[Failure]:
    """The seed (valid, all 13 stores, links, Unicode, special numbers) must restore."""
    try:
        seeded(ctx)
    except Inconclusive as exc:
        yield Failure("a valid archive was refused", exc.reason, "restored")


@SUITE.check(level="consumer", section="Complete example", keyword="MUST",
                sentence="You can preview this file through the UI or CLI before importing it.")
def previews_spec_example(ctx: CheckContext) -> Iterator[Failure]:
    example = json.loads((fixture_root() / "memorizz" / "valid" / "spec-example.json").read_text("utf-8"))["document"]
    accepted, body = import_archive(ctx, example, "preview", "skip")  # a preloaded harbor-demo is no refusal
    if not accepted:
        yield Failure("a preview of the spec's own complete example was refused", body, "a preview report")
    elif isinstance(body, dict) and body.get("imported") not in (0, None):
        yield Failure("a preview of the spec's example reports imported records", body.get("imported"), 0,
                      "$.imported")


LIMITS = "The default archive limits are 50 MiB and 100,000 records."


def archives_of(ctx: CheckContext, label: str, most: int) -> Callable[[int], dict[str, Any]]:
    """Sealed archives of n <= `most` one-line knowledge-base notes in one fresh namespace (about 80
    bytes each: 100,000 of them are 8 MB, well inside the 50 MiB byte limit): the records are built
    once and each archive takes the first n of them."""
    ns = ctx.unique(f"{label}-ns")
    notes = [{"id": f"{ns}-{i}", "data": {"id": f"{ns}-{i}", "memory_id": ns, "content": f"n{i}"}} for i in range(most)]
    forget_namespaces_at_end(ctx, ns)

    def archive_of(records: int) -> dict[str, Any]:
        archive = memorizz.empty_archive(source_provider="memconform-probe")
        archive["stores"]["knowledge_base"] = notes[:records]
        return memorizz.seal(archive, exact=False)  # strings only: no float needs the number rules

    return archive_of


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST", sentence=LIMITS)
def record_limit_at_the_boundary(ctx: CheckContext) -> Iterator[Failure]:
    """An archive of exactly the record limit (option max_records, the spec's 100,000 by default) is accepted
    and one record more is refused. Previewed, so nothing is written; an over-limit archive a preview accepts
    is tried with restore too (a preview that does not validate the count is no failure of the limit).
    A target that refuses one record fewer as well has a smaller transport limit ("Transport limits can be
    smaller"): the record limit cannot be seen, inconclusive."""
    limit = int(ctx.option("max_records"))
    reading = (f"max_records={limit}",)
    archive_of = archives_of(ctx, "limit", limit + 1)
    accepted, body = import_archive(ctx, archive_of(limit), "preview")
    if not accepted:
        below, _ = import_archive(ctx, archive_of(limit - 1), "preview")
        if not below:
            raise Inconclusive(f"archives of {limit - 1} and {limit} records were both refused: a transport limit "
                               "smaller than the record limit hides it (option memorizz.max_records names another)")
        domain.ledger(ctx).judge(["archive.record_count:at_limit"])
        yield Failure(f"an archive of exactly {limit} records was refused (one of {limit - 1} was accepted)",
                      json.dumps(body, default=str)[:300], f"accepted: the limit is {limit} records, inclusive",
                      "$.stores", readings=reading)
        return
    domain.ledger(ctx).judge(["archive.record_count:at_limit"])  # the domain table's classes of the limit
    over = archive_of(limit + 1)
    for mode in ("preview", "restore"):
        accepted, body = import_archive(ctx, over, mode)
        if not accepted:
            break
    domain.ledger(ctx).judge(["archive.record_count:above_limit"])
    if accepted:
        yield Failure(f"an archive of {limit + 1} records was restored", json.dumps(body, default=str)[:300],
                      f"refused: over the limit of {limit} records", "$.stores", readings=reading)
