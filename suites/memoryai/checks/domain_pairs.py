"""The request parameters of the HTTP profile combined pairwise (suites/memoryai/domain.json
"combinations"), every answer judged by the oracle (suites/memoryai/model.py).

export_request: every scope alone and with each class of `since` (absent, null, instants in Z, in an
offset, with a fraction, at the epoch, in the far future ...) over six chunks of the check's own, created
in 1990, at 2026-06-29T12:00:00Z (the instant of some `since` classes: E10's boundary) and an hour ago,
one DNA and one not of each age. The export's own chunks must be one of the sets the oracle allows.

import_request: each kind of bundle §3.8 tells apart (fresh chunks, a duplicate within the bundle, a
duplicate of a held chunk, a rival row of one, an invalid chunk in the middle, the same bundle again) on
each import endpoint (JSON body, multipart file). The reply, the chunks the full export then holds and
the ImportReport's chunk counters (where answered) must fit one of the oracle's outcomes.

ci sends a fixed covering subset (each class once); default every pair (harness/domain.plan).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, TargetError, Unsupported
from memconform.kit import domain
from memconform.suites.memoryai import answers, client, model, reading_kinds, readings
from memconform.suites.memoryai.domain_support import (
    call_or_failure,
    ledger,
    no_instant_observed,
    server_error,
    table,
)
from memconform.suites.memoryai.suite import SUITE

BOUNDARY = "2026-06-29T12:00:00Z"  # the instant of the utc_z and utc_offset classes of `since`
SCOPE_LINE = '"scope": "full" | "dna_only" | "since",'
IDEMPOTENT = "1. Skip chunks whose `content_hash` already exists in the target tenant"


def readings_of(ctx: CheckContext) -> model.Readings:
    return model.Readings(reimport_counters=ctx.option("reimport_counters"), since_boundary=ctx.option("since_boundary"))


# ---- export: scope x since -----------------------------------------------------------------------

def seeded_state(ctx: CheckContext) -> model.State:
    """Six chunks of the check's own, imported; the oracle's state holds exactly them."""
    ages = {"old": "1990-01-01T00:00:00Z", "boundary": BOUNDARY, "recent": client.now_iso(-3600)}
    chunks = [client.chunk(ctx, f"pair-{age}-{kind}", kind, created_at=at) for age, at in ages.items() for kind in ("fact", "decision")]
    client.seed(ctx, client.bundle(ctx, chunks), "the scope and since pairs")
    return model.State(chunks={ch["content_hash"]: ch for ch in chunks})


@SUITE.check(section="§4", keyword="SHOULD", level="http", sentence=SCOPE_LINE)
def domain_export_parameters_pairwise(ctx: CheckContext) -> Iterator[Failure]:
    """Each scope with each class of `since` (pairwise over the table's valid classes), judged by the oracle."""
    state = seeded_state(ctx)
    for row in domain.plan(table(), "export_request", ctx.profile.name):
        scope, since = row["manifest.scope"].value(), row["manifest.since"].value()
        body = client.export_body(ctx, scope)
        if since is not domain.ABSENT:
            body["since"] = since
        label = f"an export of scope {scope} with since {since!r}"
        answer = call_or_failure(ctx, label, partial(ctx.target.call, "export", body))
        ledger(ctx).judge_row("export_request", row)
        if isinstance(answer, Failure):
            yield answer
            continue
        doc = answer.body if answer.ok and isinstance(answer.body, dict) else None
        if not server_error(answer) and no_instant_observed(ctx, body, answer, doc) and doc is None:
            continue  # E63: refused, as the oracle allows
        if server_error(answer) or doc is None:
            yield Failure(f"{label} was not answered with a bundle", f"{answer.status} {answer.raw[:160]!r}", "a bundle", "$")
            continue
        own = frozenset(h for h in client.by_hash(doc) if h in state.chunks)
        yield from judged_export(ctx, label, scope, since if isinstance(since, str) else None, state, own)


def judged_export(ctx: CheckContext, label: str, scope: str, since: str | None, state: model.State,
                  own: frozenset[str]) -> Iterator[Failure]:
    """The export's own chunks against the oracle: one set allowed, or a reading recorded from the set seen
    (E10 for scope since, E62 beside another scope: the table's rows)."""
    allowed = model.export_answers(state, scope, since, readings_of(ctx))
    if len({a.hashes for a in allowed}) == 1:
        if own != allowed[0].hashes:
            yield Failure(f"{label}: the export holds other chunks than {allowed[0].why}", sorted(own), sorted(allowed[0].hashes),
                          "$.chunks")
        return
    assert since is not None  # without an instant the oracle allows one set
    title = f"{label}: the export's chunks fit no accepted reading ({'; '.join(a.why for a in allowed)})"
    case = reading_kinds.ScopedExport(state, scope, since, readings=readings_of(ctx))
    seen = readings.observe(ctx, "E10" if scope == "since" else "E62", case, own, title=title)
    if seen.failure is not None:
        yield seen.failure


# ---- import: transport x kind of bundle ----------------------------------------------------------

def kind_bundle(ctx: CheckContext, kind: str, state: model.State) -> tuple[dict[str, Any], model.State, list[str]]:
    """(the bundle of a kind, the oracle's state after its setup import, the hashes the row judges)."""
    def fresh(label: str, **fields: Any) -> dict[str, Any]:
        return client.chunk(ctx, f"pair-{kind}-{label}", **fields)
    if kind == "fresh":
        chunks = [fresh("a"), fresh("b")]
    elif kind == "duplicate_in_bundle":
        first = fresh("a")
        chunks = [first, dict(first, tags=["memconform", "the copy"]), fresh("b")]
    elif kind == "invalid_chunk":
        bad = fresh("bad")
        bad.pop("content")
        chunks = [fresh("a"), bad, fresh("b")]
    else:
        held = client.bundle(ctx, [fresh("held")])
        answers.control(client.import_bundle(ctx, held), f"the setup import of {kind}")
        state = next(o.state for o in model.import_answers(state, held) if o.accepted)
        if kind == "reimport_same":
            return held, state, list(state.chunks)
        copy = dict(held["chunks"][0])
        if kind == "rival_row_of_held":
            copy.update(importance=0.95, zone="ephemeral", tags=["rival"])
        chunks = [copy, fresh("b")]
    bundle = client.bundle(ctx, chunks)
    hashes = [str(ch.get("content_hash")) for ch in chunks if isinstance(ch.get("content_hash"), str)]
    return bundle, state, hashes


@SUITE.check(section="§3.8", keyword="MUST", level="2", sentence=IDEMPOTENT)
def domain_import_requests_pairwise(ctx: CheckContext) -> Iterator[Failure]:
    """Each kind of bundle on each import endpoint (pairwise), judged by the oracle (see the module)."""
    for row in domain.plan(table(), "import_request", ctx.profile.name):
        op, kind = row["import.transport"].value(), row["import.bundle_kind"].value()
        bundle, state, hashes = kind_bundle(ctx, kind, model.State())
        outcomes = model.import_answers(state, bundle, readings_of(ctx))
        label = f"a bundle of kind {kind} through {op}"
        try:
            reply = client.import_bundle(ctx, bundle, op=op)
        except Unsupported as exc:
            ctx.note(f"{label}: not offered ({exc.reason}); the row is not judged")
            continue
        except TargetError as exc:
            yield Failure(f"{label}: a server error", str(exc)[:200], "an ImportReport, or a refusal with a 4xx", "$")
            continue
        rows = client.by_hash(client.export(ctx, "full"))
        held = frozenset(h for h in rows if h in hashes)
        yield from judged_import(ctx, label, kind, reply, held, frozenset(hashes), outcomes, reading_kinds.InvalidChunks(state, bundle, frozenset(hashes)))
        if kind == "rival_row_of_held":
            yield from preserved_failures(label, rows, state)
        ledger(ctx).judge_row("import_request", row)


def preserved_failures(label: str, rows: dict[str, list[dict[str, Any]]], before: model.State) -> Iterator[Failure]:
    """§3.8.1: the existing row is preserved, so the held chunk keeps its first importance, zone and tags."""
    for h, first in before.chunks.items():
        now = rows.get(h, [{}])[0]
        fields = ("importance", "zone", "tags")
        if any(now.get(k) != first.get(k) for k in fields):
            yield Failure(f"{label}: the held row was changed by a rival row", {k: now.get(k) for k in fields},
                          {k: first.get(k) for k in fields}, "$.chunks")


def judged_import(ctx: CheckContext, label: str, kind: str, reply: Any, held: frozenset[str], touched: frozenset[str],
                  outcomes: tuple[model.Answer, ...], case: reading_kinds.InvalidChunks) -> Iterator[Failure]:
    """The import's answer against the oracle's outcomes; for a bundle with an invalid chunk, E9 from the table."""
    if server_error(reply):
        yield Failure(f"{label}: a server error", reply.http_status, "an ImportReport, or a refusal with a 4xx", "$")
        return
    report = answers.report_or_none(reply)

    def fits(o: model.Answer) -> bool:
        counted = all(answers.counter(report, "chunks", k) == v for k, v in o.counters.items()) if report and reply.ok else True
        return o.accepted == reply.ok and held == frozenset(o.state.chunks) & touched and counted
    if not reply.ok and not any(not o.accepted for o in outcomes):
        raise Inconclusive(f"{label}: a conformant bundle was refused ({reply.status} {reply.raw[:160]!r}); "
                           "ingests_conformant_bundles judges that")
    answer = {"accepted": reply.ok, "chunks held": len(held), "counters": (report or {}).get("chunks")}
    if kind == "invalid_chunk":
        seen = readings.observe(ctx, "E9", case, reading_kinds.ImportAnswer(reply.ok, held, bool(report), (report or {}).get("chunks")),
                             shown=answer, title=f"{label}: fits no accepted reading")
        if seen.failure is not None:
            yield seen.failure
    elif not any(fits(o) for o in outcomes):
        yield Failure(f"{label}: the answer fits no outcome the spec allows", answer,
                      "; ".join(f"{o.why}, counters {dict(o.counters)}" for o in outcomes), "$")
