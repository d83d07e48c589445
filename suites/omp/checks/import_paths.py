"""Import failure paths and the round trip (§3.3 `POST /v1/import`): one bad memory at the
start, middle or end of a batch under every strategy, a failed overwrite that must keep the old
row, and the target's own export, grown to megabytes, imported back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, controls, deviations, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.dataset import ids
from memconform.suites.omp.deviations import STORES_INVALID
from memconform.suites.omp.importing import REFUSED, import_report_failures, import_with, o7_predictions
from memconform.suites.omp.suite import SUITE

ROUND_TRIP = 60  # memories of ~10,000 characters (~1.5 UTF-8 bytes each): an export of about 0.9 MB
ROUND_TRIP_GONE = 3
SEED_BATCH = 10  # about 150 KB an import




def invalid_memory(ctx: CheckContext, label: str) -> dict[str, Any]:
    """A memory that breaks one §2.1 rule (content over 10,000 characters); never stored on purpose."""
    bad = client.full_memory(ctx, label)
    bad["content"] += "z" * omp.MAX_CONTENT
    return bad


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='{ "imported": 142, "skipped": 3, "errors": [] }')
def import_bad_memory_reported(ctx: CheckContext) -> Iterator[Failure]:
    """An invalid memory at the start, middle or end of a batch, under each strategy: it is reported in
    errors and the rest imported, or the whole file is refused with a 4xx and nothing imported; never a
    5xx, never the first items kept and the rest dropped, and no existing memory lost (errata O7)."""
    controls.control(import_with(ctx, [client.full_memory(ctx, "batch-ok")], "skip"), "an import of one valid memory")
    for strategy in omp.CONFLICTS:
        for where in (0, 1, 2):
            existing = client.created(ctx, client.memory(ctx, f"keep-{strategy}-{where}"))
            good = [client.full_memory(ctx, f"good-{strategy}-{where}-{i}") for i in range(2)]
            bad = invalid_memory(ctx, f"bad-{strategy}-{where}")
            batch = [*good[:where], bad, *good[where:]]
            deviations.sent_import(ctx, bad)
            answer = import_with(ctx, batch, strategy)
            everything = client.exported(ctx)
            label = f"conflict={strategy}, invalid memory at index {where}"
            stored = [m for m in good if client.with_marker(everything, m["content"])]
            errors = answer.body.get("errors") if answer.ok and isinstance(answer.body, dict) else None
            seen = ctx.observe("O7", o7_predictions(answer, where, bad["id"], len(stored), len(good)),
                               title=f"{label}: neither the invalid memory reported in errors and the rest imported, nor "
                                     "the whole file refused with a 4xx and nothing imported", path="$.errors")
            if seen.failure and answer.status >= 500:
                yield from rules.error_failures(ctx, answer, None, None)  # says "a server error"
            elif seen.failure:
                seen.failure.received = {"status": answer.status, "errors": errors, "good memories stored": len(stored),
                                         "of": len(good)}
                yield seen.failure
            elif seen.fits(REFUSED):
                yield from rules.error_failures(ctx, answer, None, None)
            if client.with_marker(everything, bad["content"][:60]):
                established.establish(ctx, STORES_INVALID, "an import stored an invalid memory (content over 10,000 characters)")
                yield Failure(f"{label}: the invalid memory was stored", bad["content"][:60], "not stored", "$.memories")
            if existing["id"] not in ids(everything):
                yield Failure(f"{label}: an existing memory was lost", existing["id"], "still there", "$.memories")


def invalid_replacements(ctx: CheckContext, label: str) -> list[tuple[str, dict[str, Any]]]:
    """Memories a server MUST refuse, each for another §2.1 rule, most plainly broken last: a server that
    stores one of them never reaches a failed overwrite with it, so the next one is tried."""
    over = invalid_memory(ctx, f"{label}-long")
    unknown_type = dict(client.full_memory(ctx, f"{label}-type"), type="not-a-memory-type")
    no_source = {k: v for k, v in client.full_memory(ctx, f"{label}-nosource").items() if k != "source"}
    not_text = dict(client.full_memory(ctx, f"{label}-number"), content=12345)
    return [("content over 10,000 characters", over), ("type not a MemoryType", unknown_type),
            ("no source", no_source), ("content not a string", not_text)]


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='overwrite — overwrite existing memories')
def import_failed_overwrite_keeps_old(ctx: CheckContext) -> Iterator[Failure]:
    """An overwrite whose new memory is invalid must leave the existing one as it was: a server that
    deletes the old row first and then fails to insert loses the memory. The replacement breaks a §2.1
    rule the server must refuse; one it stores instead is named as such (an import storing an invalid
    memory, not a failed overwrite), and the next rule is tried until one is refused and the
    delete-then-insert path is reached."""
    existing = client.created(ctx, client.memory(ctx, "ow-keep"))
    valid = dict(client.full_memory(ctx, "ow-valid"), id=existing["id"])
    controls.control(import_with(ctx, [valid], "overwrite"), "the same overwrite with a valid memory")
    stored: list[str] = []
    for why, replacement in invalid_replacements(ctx, "ow-bad"):
        before = client.get(ctx, existing["id"]).accepted_json(dict, "getting the memory to overwrite")
        rival = dict(replacement, id=existing["id"])
        answer = import_with(ctx, [rival], "overwrite")
        if answer.status >= 500:
            yield from rules.error_failures(ctx, answer, None, None)
        after = client.get(ctx, existing["id"])
        if after.status != 200 or not isinstance(after.body, dict):
            yield Failure(f"a failed overwrite ({why}) lost the existing memory: deleted before the insert failed",
                          after.brief(), "the memory as before", "$")
            break
        if str(after.body.get("content")) == str(rival.get("content")):
            stored.append(why)  # not refused: the overwrite stored the invalid memory, no failure to judge
            continue
        if after.body.get("content") != before.get("content"):
            yield Failure(f"a failed overwrite ({why}) changed the existing memory", str(after.body.get("content"))[:80],
                          str(before.get("content"))[:80], "$.content")
        if stored:
            ctx.note(f"stored instead of refused before this one: {', '.join(stored)}")
        break
    if stored:
        failure = Failure(f"an overwrite import stored an invalid memory ({', '.join(stored)}) instead of refusing it",
                          stored, "refused, or reported in errors (errata O7)", "$.errors",
                          "a failed overwrite was " + ("reached with the next rule" if len(stored) < 4 else "never reached: every invalid replacement was stored"))
        yield established.explained(ctx, failure, STORES_INVALID)
        established.establish(ctx, STORES_INVALID, f"an import stored an invalid memory ({stored[0]})")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Import memories from an OMP export file.')
def export_import_round_trip(ctx: CheckContext) -> Iterator[Failure]:
    """The target's own export, at about 0.9 MB, imported back: memories deleted meanwhile come back as
    they were, the others are skipped, no errors."""
    word = client.word()
    seed = [client.full_memory(ctx, f"rt{i}", content=f"{ctx.unique(f'rt{i}')} {word} " + ("Größe ✓ " * 1250)[:9_900])
            for i in range(ROUND_TRIP)]
    for start in range(0, ROUND_TRIP, SEED_BATCH):  # small imports: only the export back is large
        seeded = import_with(ctx, seed[start:start + SEED_BATCH])
        controls.need(seeded.ok and isinstance(seeded.body, dict) and seeded.body.get("imported") == len(seed[start:start + SEED_BATCH]),
                f"the {ROUND_TRIP} memories of the round trip could not be seeded: {seeded.brief()}")
    made: list[str] = []
    try:
        yield from _round_trip(ctx, word, made)
    finally:  # megabytes would slow every later export of the run: remove them now (the sweep gets the rest)
        for mem_id in made:
            client.delete(ctx, mem_id, record=False, quiet=True)


def _round_trip(ctx: CheckContext, word: str, made: list[str]) -> Iterator[Failure]:
    mine = client.with_marker(client.exported(ctx), word)
    made.extend(str(m.get("id")) for m in mine)
    controls.need(len(mine) == ROUND_TRIP, f"the export holds {len(mine)} of the {ROUND_TRIP} seeded memories")
    gone = mine[:ROUND_TRIP_GONE]
    for mem in gone:
        controls.control(client.delete(ctx, mem["id"]), "deleting a memory of the round trip")
    answer = client.import_(ctx, client.export_file(mine))  # the target's own memory objects, unchanged; default skip
    yield from import_report_failures(answer)
    body = answer.body if isinstance(answer.body, dict) else {}
    if answer.ok and (body.get("imported"), body.get("skipped"), body.get("errors")) != (ROUND_TRIP_GONE, ROUND_TRIP - ROUND_TRIP_GONE, []):
        yield Failure("the target's own export did not import back", {k: body.get(k) for k in ("imported", "skipped", "errors")},
                      {"imported": ROUND_TRIP_GONE, "skipped": ROUND_TRIP - ROUND_TRIP_GONE, "errors": []}, "$")
    back = client.with_marker(client.exported(ctx), word)
    for mem in gone:
        if len(client.with_marker(back, mem["content"])) != 1:
            yield Failure("a memory deleted and imported back from the export is not there once", len(client.with_marker(back, mem["content"])),
                          1, "$.memories", mem["id"])
