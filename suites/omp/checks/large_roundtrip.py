"""The target's own export, past 1 MB (`ci`) or 10 MB (`default`, `thorough`; option
`omp.large_export_mb`), imported back under each conflict strategy of §3.3 `POST /v1/import`.

Seeded through imports of about 180 kB each (a memory one refuses is created alone), so that only
the export imported back is large: a server that caps request bodies, or whose export is cut short
once it grows, fails here. The contents stay under the §2.1 maximum of 10,000 characters, every one
in the Basic Multilingual Plane (one character however it is counted). The spec states no limit on a
request body and no answer for one too large (§4 has no such code), so a refusal of the target's own
export with the §4 envelope is a reading (errata O40, OMP's table of readings), recorded, not blamed;
what was stored must be there after any answer. What it wrote is deleted at once: megabytes would slow every later export of the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core import established, history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import large_export
from memconform.suites.omp import client, controls, readings, table
from memconform.suites.omp.deviations import CONFLICT_FROM_BODY
from memconform.suites.omp.importing import import_with
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

CONTENT_CHARS = 9_990  # under the §2.1 maximum of 10,000
FILLER = "記憶の往復と大きな書き出し "  # three UTF-8 bytes a character: about 30 kB a memory
SEED_BATCH = 6
GONE = 3  # deleted before the export is imported back: the default strategy must bring them back
GROW_ROUNDS = 3
KEPT = ("content", "type", "source", "tags", "namespace", "expires_at", "metadata")
STAMPS = ("id", "created_at", "updated_at")


@dataclass
class Large:
    """The round trip's memories as the target exported them, keyed by their content."""

    word: str
    envelope: dict[str, Any] = field(default_factory=dict)
    mine: list[dict[str, Any]] = field(default_factory=list)
    seeded: int = 0
    stopped: bool = False  # the export failed, or the import back was refused: nothing more to judge at this size

    def body(self) -> dict[str, Any]:
        """The target's own export file: its envelope, its memory objects unchanged (only this check's)."""
        return {**{k: v for k, v in self.envelope.items() if k != "memories"}, "memories": self.mine}

    def size(self) -> int:
        return len(json.dumps(self.body(), ensure_ascii=False).encode("utf-8"))


def big_memory(ctx: CheckContext, word: str, i: int) -> dict[str, Any]:
    head = f"{ctx.unique(f'big{i}')} {word} #{i} "
    filler = FILLER * (CONTENT_CHARS // len(FILLER) + 1)
    return client.full_memory(ctx, f"big{i}", content=head + filler[:CONTENT_CHARS - len(head)])


@dataclass
class SeedRefusals:
    """The smallest seed import body the target refused this run (bytes), if any: a refusal below the
    smallest limit errata O40 names says the server's limit is not one the reading allows."""

    smallest: int | None = None


def seed(ctx: CheckContext, memories: list[dict[str, Any]]) -> None:
    for start in range(0, len(memories), SEED_BATCH):
        part = memories[start:start + SEED_BATCH]
        answer = import_with(ctx, part)
        if answer.ok:
            controls.need(isinstance(answer.body, dict) and answer.body.get("imported") == len(part),
                    f"a seed import of {len(part)} memories did not import them all: {answer.brief()}")
            continue
        ctx.note(f"a seed import of {len(part)} memories was refused ({answer.status}): created one by one")
        size = len(json.dumps({"memories": part}, ensure_ascii=False).encode("utf-8"))
        refusals = ctx.state(SeedRefusals)
        refusals.smallest = size if refusals.smallest is None else min(refusals.smallest, size)
        for mem in part:
            client.created(ctx, {k: v for k, v in mem.items() if k not in STAMPS})


def exported(ctx: CheckContext, word: str) -> tuple[Reply, dict[str, Any], list[dict[str, Any]]]:
    answer = client.export(ctx, record=False, quiet=True)
    body = answer.body if answer.status == 200 and isinstance(answer.body, dict) else {}
    memories = [m for m in body.get("memories") or [] if isinstance(m, dict)]
    return answer, body, client.with_marker(memories, word)


def grow(ctx: CheckContext, run: Large) -> Iterator[Failure]:
    """Seed until the round trip's body passes the size; the export must hold every memory seeded."""
    want = large_export.target_bytes(ctx)
    for _ in range(GROW_ROUNDS):
        size = run.size() if run.mine else 0
        if size >= want:
            break
        per_memory = size // len(run.mine) if run.mine else 30_000
        more = large_export.records_for(ctx, per_memory) - len(run.mine) if run.mine else -(-want // per_memory) + 1
        seed(ctx, [big_memory(ctx, run.word, i) for i in range(run.seeded, run.seeded + max(more, 1))])
        run.seeded += max(more, 1)
        answer, run.envelope, run.mine = exported(ctx, run.word)
        if answer.status != 200 or "memories" not in run.envelope:
            run.stopped = True
            yield Failure(f"the export failed once {run.seeded} memories of about 30 kB were stored",
                          answer.brief(), "200 with the export", "$")
            return
        if len(run.mine) < run.seeded:
            yield Failure(f"the export ({len(answer.raw) / 1e6:.1f} MB) holds {len(run.mine)} of the {run.seeded} "
                          "memories imported", len(run.mine), run.seeded, "$.memories")
            break  # the export is cut short: what it holds is what goes back
    ctx.note(f"the export holds {len(run.mine)} of {run.seeded} seeded memories; imported back: {run.size() / 1e6:.1f} MB")
    if run.size() < want:
        ctx.note(f"the round trip stayed under the {want / 1e6:.1f} MB asked for")


def by_text(memories: list[dict[str, Any]], run: Large) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for mem in client.with_marker(memories, run.word):
        found.setdefault(str(mem["content"]), []).append(mem)
    return found


def differences(before: dict[str, Any], after: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: {"before": before.get(k), "after": after.get(k)} for k in names if before.get(k) != after.get(k)}


def judge_state(ctx: CheckContext, run: Large, what: str, *, copies: int = 1,
                unchanged: set[str] | None = None) -> Iterator[Failure]:
    """Every memory of the round trip there `copies` times with its fields as exported; those whose
    content is in `unchanged` also keep their id and timestamps (skip must not touch them)."""
    answer, _, mine = exported(ctx, run.word)
    if answer.status != 200:
        yield Failure(f"{what}: the export failed afterwards", answer.brief(), "200 with the export", "$")
        return
    after = by_text(mine, run)
    lost = [m for m in run.mine if not after.get(m["content"])]
    wrong_count = [m for m in run.mine if after.get(m["content"]) and len(after[m["content"]]) != copies]
    changed = []
    for mem in run.mine:
        names = KEPT + STAMPS if unchanged is not None and mem["content"] in unchanged else KEPT
        if after.get(mem["content"]) and all(differences(mem, other, names) for other in after[mem["content"]]):
            changed.append((mem, differences(mem, after[mem["content"]][0], names)))
    history_counts.record(ctx, history_counts.counts(acknowledged=len(run.mine), lost=len(lost),
                                                     duplicated=len(wrong_count), corrupted=len(changed)))
    if lost:
        yield Failure(f"{what}: memories were lost", len(lost), 0, "$.memories", f"first: {lost[0]['id']}")
    if wrong_count:
        mem = wrong_count[0]
        yield Failure(f"{what}: memories are not there {copies} time(s) each", len(after[mem["content"]]), copies,
                      "$.memories", f"{len(wrong_count)} memories; first: {mem['id']}")
    if changed:
        mem, diff = changed[0]
        yield Failure(f"{what}: memories changed", diff, "as exported", "$.memories", f"{len(changed)} memories; first: {mem['id']}")


def import_back(ctx: CheckContext, run: Large, conflict: str | None) -> Reply:
    doc = run.body()
    if conflict is not None and ctx.option("conflict_in") == "both":  # errata O1, as import_with does
        doc["conflict"] = conflict
    return client.import_(ctx, doc, conflict)


def refused(ctx: CheckContext, answer: Reply, run: Large, strategy: str) -> Iterator[Failure]:
    """The import back refused: a body over the server's own limit answered with the §4 envelope is a
    reading of OMP's table (errata O40: the spec states no limit and no answer for one), recorded and
    noted; any other refusal (a 5xx, a bare 413 page) fails. What was stored is judged either way."""
    run.stopped = True  # refused once at this size: the other strategies would say it again
    size = f"{run.size() / 1e6:.1f} MB"
    request = readings.Asked(*readings.IMPORT, query={"conflict": strategy.split()[0]}, size=run.size())
    below = ctx.state(SeedRefusals).smallest
    if below is not None and below < readings.BODY_LIMIT_FROM:  # the limit is lower than any the reading allows
        yield Failure(f"the target's own export ({size}) was refused when imported back (conflict={strategy}), and "
                      f"an import of {below / 1e3:.0f} kB was refused before it", f"{answer.status}",
                      f"a body limit of at least {readings.BODY_LIMIT_FROM >> 20} MiB (the smallest errata O40 names)", "$",
                      "the server refuses imports far below any usual body limit, so its own exports cannot come back")
        return
    if table.TABLE.observe(ctx, request, answer, readings.pins(ctx), points=("O40",)):
        ctx.note(f"the target's own export ({size}) was refused when imported back (conflict={strategy}) with "
                 f"{answer.status} and the §4 envelope: a body limit of the server's own, which the spec leaves open "
                 "(errata O40, reading recorded); the round trip was not judged at this size")
        return
    yield Failure(f"the target's own export ({size}) was refused when imported back "
                  f"(conflict={strategy})", f"{answer.status} {answer.raw[:200].decode('utf-8', 'replace')}",
                  "200 with the import report, or a 4xx with the §4 envelope (a body over the server's limit, errata O40)",
                  "$", "the spec states no limit on a request body and no answer for one too large (errata O40); "
                  "every error uses the §4 envelope")


def report(answer: Reply) -> dict[str, Any]:
    body = answer.body if isinstance(answer.body, dict) else {}
    return {k: body.get(k) for k in ("imported", "skipped", "errors")}


def skip_back(ctx: CheckContext, run: Large) -> Iterator[Failure]:
    """The default strategy: the memories deleted meanwhile come back, the others are skipped untouched."""
    gone = run.mine[:GONE]
    for mem in gone:
        controls.control(client.delete(ctx, mem["id"]), "deleting a memory of the round trip")
    answer = import_back(ctx, run, None)
    kept = {m["content"] for m in run.mine[GONE:]}
    if not answer.ok:
        yield from refused(ctx, answer, run, "skip (default)")
        after = by_text(exported(ctx, run.word)[2], run)
        if any(after.get(m["content"]) for m in gone):
            yield Failure("the refused import stored part of the file", [m["id"] for m in gone if after.get(m["content"])],
                          "nothing imported", "$.memories", "a refusal must leave the store as it was (errata O7)")
        if any(not after.get(text) for text in kept):
            yield Failure("the refused import lost stored memories", sum(not after.get(t) for t in kept), 0, "$.memories")
        return
    expected = {"imported": GONE, "skipped": len(run.mine) - GONE, "errors": []}
    if report(answer) != expected:
        yield Failure("importing the target's own export back (default skip) did not report what it did",
                      report(answer), expected, "$")
    yield from judge_state(ctx, run, "after the default import back", unchanged=kept)


def overwrite_back(ctx: CheckContext, run: Large) -> Iterator[Failure]:
    answer = import_back(ctx, run, "overwrite")
    if not answer.ok:
        yield from refused(ctx, answer, run, "overwrite")
    elif report(answer).get("errors") != []:
        yield Failure("importing the target's own export back (overwrite) reported errors", report(answer), "errors: []", "$.errors")
    yield from judge_state(ctx, run, "after the overwrite import back")


def duplicate_back(ctx: CheckContext, run: Large) -> Iterator[Failure]:
    answer = import_back(ctx, run, "duplicate")
    if not answer.ok:
        yield from refused(ctx, answer, run, "duplicate")
        yield from judge_state(ctx, run, "after the refused duplicate import back")
        return
    expected = {"imported": len(run.mine), "skipped": 0, "errors": []}
    if report(answer) != expected:
        yield Failure("importing the target's own export back (duplicate) did not report what it did",
                      report(answer), expected, "$")
    yield from judge_state(ctx, run, "after the duplicate import back", copies=2)


def remove(ctx: CheckContext, word: str) -> None:
    for mem in exported(ctx, word)[2]:
        client.delete(ctx, str(mem.get("id")), record=False, quiet=True)


@SUITE.check(section="§8", keyword="MUST", level="core",
             sentence="Supports export and import via GET /v1/export and POST /v1/import")
def own_export_imported_back_large(ctx: CheckContext) -> Iterator[Failure]:
    """The target's own export, past 1 MB (ci) or 10 MB, imported back with the default strategy
    (three memories deleted meanwhile come back, the rest skipped untouched), then with overwrite
    (every memory once, as it was) and duplicate (every memory twice, the originals as they were)."""
    run = Large(word=client.word())
    try:
        yield from grow(ctx, run)
        if not run.mine:  # none of the seeded memories exported: grow has said so (a loss, not a lack of evidence)
            return
        for i, step in enumerate((skip_back, overwrite_back, duplicate_back)):
            if run.stopped:
                return
            if i:  # the memories as the target now has them (an overwrite may restamp created_at, errata O26)
                _, _, run.mine = exported(ctx, run.word)
            for failure in step(ctx, run):  # overwrite and duplicate: a strategy the target reads elsewhere, if so
                yield established.explained(ctx, failure, CONFLICT_FROM_BODY) if i else failure
    finally:
        remove(ctx, run.word)
