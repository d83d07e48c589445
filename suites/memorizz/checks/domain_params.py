"""The request parameters of the domain table (suites/memorizz/domain.json) alone and pairwise: an export's
selection (namespace x agent x store types x embeddings) and an import's mode x conflict policy x what
the destination already holds, planned by the covering-array generator (harness/kit/domain.py: `ci` every
class once, `default` every pair); every answer is judged by the model (suites/memorizz/model.py).

Classes that select nothing, and the open and invalid ones, are sent alone (the other parameters left
out): in a row with others they would mask every pair of it. Open answers record the reading seen
(errata M61 for an export; M62 for a preview of conflicts under conflict=error; M9 for where a clone puts
its records).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure, Unsupported
from memconform.kit import domain
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import model, reading_kinds, readings
from memconform.suites.memorizz.client import Seed, forget_namespaces_at_end, listed_conflicts, seeded
from memconform.suites.memorizz.domain_support import namespace_export, table
from memconform.suites.memorizz.suite import SUITE

EXPORT_COMBO, IMPORT_COMBO = "export_selection", "import_modes"
ONE_TYPE = ("Version 1 requires all 13 store keys and their taxonomy mappings, even when an export selects only one "
            "type. Unselected or empty stores contain [].")
CONFLICTS = "Imports preview conflicts before writing"
PREVIEW_OK, PREVIEW_NOT_OK = readings.PREVIEW_OK, readings.PREVIEW_NOT_OK


def alone(combo_id: str) -> list[domain.ValueClass]:
    """The classes of a combination's parameters that no covering row carries: sent one at a time."""
    return [c for p in table().combination(combo_id)["parameters"] for c in table().field(p).classes
            if c.expect != "valid" or not c.combine]


def row_alone(combo_id: str, vc: domain.ValueClass) -> dict[str, domain.ValueClass]:
    """A row of one class, the other parameters absent."""
    row = {p: table().field(p).cls("absent") for p in table().combination(combo_id)["parameters"]
           if p != vc.field and any(c.id == "absent" for c in table().field(p).classes)}
    return {**row, vc.field: vc}


# ---- export selection ----------------------------------------------------------------------------

def placeholders(ctx: CheckContext, seed: Seed) -> dict[str, str]:
    return {"<ns>": seed.ns, "<ns_delegate>": seed.ns_delegate, "<owner>": seed.owner, "<delegate>": seed.delegate,
            "<unknown>": ctx.unique("no-such")}


def export_selection(row: dict[str, domain.ValueClass], names: dict[str, str]) -> dict[str, Any]:
    out = {}
    for param, vc in row.items():
        value = vc.value()
        if value is not domain.ABSENT:
            out[param.split(".", 1)[1]] = names.get(value, value) if isinstance(value, str) else value
    return out


export_request = reading_kinds.export_request  # the table reads the selection as the model does
export_mismatch = readings.export_mismatch  # how a reply differs from one of the model's answers


@SUITE.check(sweep=True, level="producer", section="Envelope", keyword="MUST", sentence=ONE_TYPE)
def domain_export_selection(ctx: CheckContext) -> Iterator[Failure]:
    """Every export parameter alone and pairwise with every other, on the seeded graph: the records of the graph
    the export holds, the stores it fills and what it says of embeddings are the model's, for every row."""
    seed = seeded(ctx)
    state = {(store, r["id"]): r["data"] for store, r in memorizz.records_of(seed.archive)}
    names = placeholders(ctx, seed)
    for row in domain.plan(table(), EXPORT_COMBO, ctx.profile.name):
        if (yield from export_row_failures(ctx, state, export_selection(row, names))):
            domain.ledger(ctx).judge_row(EXPORT_COMBO, row)
    for vc in alone(EXPORT_COMBO):
        if (yield from export_row_failures(ctx, state, export_selection(row_alone(EXPORT_COMBO, vc), names))):
            domain.ledger(ctx).judge([vc.key])


def content_of(record: dict[str, Any]) -> Any:
    """A record's data.content as the target served it (a target may serve anything in `data`)."""
    data = record.get("data")
    return data.get("content") if isinstance(data, dict) else None


def export_row_failures(ctx: CheckContext, state: model.State, selection: dict[str, Any]) -> Generator[Failure, None, bool]:
    """Judge one export against the model; returns whether it was judged (not: the target lacks a parameter)."""
    try:
        reply = ctx.target.call("export", selection)
    except Unsupported as exc:
        ctx.note(f"export {json.dumps(selection)} not judged: {exc}")
        return False
    archive = reply.body if reply.ok else None
    answers = model.export_answers(state, export_request(selection))
    mismatches = {a.reading or a.why: export_mismatch(a, not reply.ok, archive, set(state)) for a in answers}
    title = f"an export selecting {json.dumps(selection)[:160]} is not what the selection holds"
    if len(answers) > 1:  # open: the table's readings of M61, the failure naming every one
        seen = readings.observe(ctx, "M61", reading_kinds.ExportSelection(state, selection), (not reply.ok, archive),
                                shown="; ".join(sorted(set(mismatches.values())))[:300], title=title)
        if seen.failure is not None:
            yield seen.failure
    elif all(mismatches.values()):
        yield Failure(f"an export selecting {json.dumps(selection)[:160]} is not what the selection holds",
                      "; ".join(sorted(set(mismatches.values())))[:300], " or ".join(a.why for a in answers), "$")
    return True


# ---- import mode x conflict policy x what the destination holds ----------------------------------

def import_body(row: dict[str, domain.ValueClass], archive: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"archive": archive}
    for param, vc in row.items():
        value = vc.value()
        if param != "import.held" and value is not domain.ABSENT:
            body[param.split(".", 1)[1]] = value
    return body


def three_records(ctx: CheckContext, ns: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [("knowledge_base", ctx.unique("dom-imp"), {"memory_id": ns, "content": ctx.unique("dom-imp-prose")}) for _ in range(3)]


def archive_of(records: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    archive = memorizz.empty_archive(source_provider="memconform-domain")
    for store, rid, data in records:
        archive["stores"][store].append({"id": rid, "data": dict(data)})
    return memorizz.seal(archive)


def hold(ctx: CheckContext, records: list[tuple[str, str, dict[str, Any]]]) -> dict[model.Key, dict[str, Any]]:
    """Restore the records the row says the destination holds, changed (the positive control): the state."""
    held = [(store, rid, {**data, "content": data["content"] + " (held)"}) for store, rid, data in records]
    if held:
        reply = ctx.target.call("import_archive", {"archive": archive_of(held), "mode": "restore"})
        if not reply.ok or (isinstance(reply.body, dict) and reply.body.get("ok") is False):
            raise ControlRefused(f"a valid archive of {len(held)} new records was refused: {str(reply.body)[:200]}")
    return {(store, rid): data for store, rid, data in held}


@SUITE.check(sweep=True, level="consumer", section="What is portable", keyword="MUST", sentence=CONFLICTS)
def domain_import_modes(ctx: CheckContext) -> Iterator[Failure]:
    """Every import mode, conflict policy and destination state alone and pairwise: acceptance, the count of
    records written and the namespace afterwards are the model's, for every row; a preview lists the model's
    conflicts."""
    for row in domain.plan(table(), IMPORT_COMBO, ctx.profile.name):
        yield from import_row_failures(ctx, row)
        domain.ledger(ctx).judge_row(IMPORT_COMBO, row)
    for vc in alone(IMPORT_COMBO):
        yield from import_row_failures(ctx, {**row_alone(IMPORT_COMBO, vc), "import.held": table().field("import.held").cls("one_held")})
        domain.ledger(ctx).judge([vc.key])


def import_row_failures(ctx: CheckContext, row: dict[str, domain.ValueClass]) -> Iterator[Failure]:
    ns = ctx.unique("dom-imp-ns")
    forget_namespaces_at_end(ctx, ns)
    records = three_records(ctx, ns)
    state = hold(ctx, records[:row["import.held"].value()])
    body = import_body(row, archive_of(records))
    reply = ctx.target.call("import_archive", body)
    answer = reply.body if reply.body is not None else reply.raw[:200].decode("utf-8", "replace")
    accepted = reply.ok and not (isinstance(answer, dict) and answer.get("ok") is False)
    forget_cloned_namespaces(ctx, answer, ns)
    request = model.ImportRequest(tuple(records), str(body.get("mode")), str(body.get("conflict", "error")))
    answers = model.answers(state, request)
    imported = answer.get("imported") if isinstance(answer, dict) and isinstance(answer.get("imported"), int) else None
    label = f"an import with {', '.join(f'{vc.key}' for vc in row.values())}"
    fitting = answers.fitting(accepted, imported)
    if not fitting:
        yield Failure(f"{label} is not what the model allows", {"accepted": accepted, "imported": imported},
                      answers.expected(), "$")
        return
    if request.mode == "preview" and len(answers.outcomes) > 1:
        observe_preview(ctx, accepted)
    after = {str(r.get("id")): content_of(r) for r in namespace_export(ctx, ns)}
    outcome = fitting[0]
    if outcome.state is not None:
        wanted = {rid: data.get("content") for (_, rid), data in outcome.state.items()}
        if after != wanted:
            yield Failure(f"{label}: the namespace afterwards is not the model's", sorted(map(str, after.values()))[:4],
                          sorted(map(str, wanted.values()))[:4], f"$ (namespace {ns})", outcome.why)
    else:
        yield from clone_failures(ctx, label, state, records, after)
    if request.mode == "preview" and isinstance(answer, dict):
        listed = listed_conflicts(answer)
        if listed != set(outcome.conflicts):
            yield Failure(f"{label}: the preview's conflicts are not the records the destination holds", sorted(listed)[:3],
                          sorted(outcome.conflicts)[:3], "$.conflicts")


def observe_preview(ctx: CheckContext, said_ok: bool) -> None:
    """M62 from the table: a preview of conflicts under conflict=error said ok, or ok: false (either recorded)."""
    readings.observe(ctx, "M62", reading_kinds.PreviewUnderError(), said_ok)


def clone_failures(ctx: CheckContext, label: str, state: model.State, records: list[tuple[str, str, dict[str, Any]]],
                   after: dict[Any, Any]) -> Iterator[Failure]:
    """A clone leaves what the namespace held as it was, and adds every record beside it (namespaces kept) or
    elsewhere (rewritten): the reading seen is recorded as M9."""
    held = {rid: data.get("content") for (_, rid), data in state.items()}
    if {rid: after.get(rid) for rid in held} != held:
        yield Failure(f"{label}: a clone changed records the destination held", sorted(map(str, after.values()))[:4],
                      sorted(held.values()), "$")
    clones = sorted(str(text) for rid, text in after.items() if rid not in held)
    prose = sorted(data["content"] for _, _, data in records)
    # the table's readings of M9, under the option clone_namespaces as clone_rewrites_ids reads it
    seen = readings.observe(ctx, "M9", reading_kinds.ClonedNamespace(tuple(prose)), clones,
                            title=f"{label}: the clones are neither all beside the originals nor all elsewhere",
                            pinned=readings.namespace_pin(ctx.option("clone_namespaces")))
    if seen.failure is not None:
        yield seen.failure


def forget_cloned_namespaces(ctx: CheckContext, answer: Any, ns: str) -> None:
    """A clone that moves records to a new namespace names it in its id_map: removed at the end too."""
    mapping = answer.get("id_map") if isinstance(answer, dict) else None
    if isinstance(mapping, dict) and isinstance(mapping.get(ns), str) and mapping[ns]:
        forget_namespaces_at_end(ctx, mapping[ns])
