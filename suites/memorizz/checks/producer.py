"""Producer level: what an export must hold when a selection is made, and what it must leave out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, Unsupported
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import model
from memconform.suites.memorizz.client import export, list_at, named_selection, object_at, seeded
from memconform.suites.memorizz.suite import SUITE


def _one_type_selection(ctx: CheckContext) -> tuple[dict[str, Any], str, object]:
    """(selection, the one store to select, a record id it must hold, as the export wrote it): the seed's
    namespace and the summary the model says a summaries-only export of it holds, or, for a producer that
    cannot import, the user's named selection and one of its non-empty stores."""
    try:
        seed = seeded(ctx)
        state = {(store, r["id"]): r["data"] for store, r in memorizz.records_of(seed.archive)}
        (answer,) = model.export_answers(state, model.ExportRequest(memory_id=seed.ns, types=("summaries",)))
        (store, rid), = answer.keys  # the seed's one summary
        return {"memory_id": seed.ns}, store, rid
    except Unsupported:
        named = named_selection(ctx)
        if not named:
            raise Inconclusive("the target cannot import and no selection was named (options export_memory_id, "
                               "export_agent_id), so there is nothing known to select") from None
        full = export(ctx, **named)
        stores = object_at(full, "stores")
        filled = [s for s in memorizz.STORES if isinstance(stores.get(s), list) and stores[s]]
        if len(filled) < 2:
            raise Inconclusive(f"the named selection holds records of {len(filled)} store(s): a one-type export "
                               "could not show that the other types are left out") from None
        first = stores[filled[0]][0]
        return named, filled[0], first.get("id") if isinstance(first, dict) else None


@SUITE.check(level="producer", section="Envelope", keyword="MUST",
                sentence="Version 1 requires all 13 store keys and their taxonomy mappings, even when an export "
                         "selects only one type. Unselected or empty stores contain [].")
def selected_export_only_selected(ctx: CheckContext) -> Iterator[Failure]:
    selection, store, must_hold = _one_type_selection(ctx)
    archive = export(ctx, **selection, types=[store])
    problems = memorizz.scan(archive)
    for rule in ("stores_complete", "taxonomy_canonical", "manifest_counts", "manifest_record_count"):
        for p in problems.get(rule, []):
            yield Failure(f"a one-type export: {p.title}", p.received, p.expected, p.path)
    stores = object_at(archive, "stores")  # not an object: stores_complete said so above
    for other, records in stores.items():
        if other != store and isinstance(records, list) and records:  # not an array: stores_complete said so above
            yield Failure(f"an export of {store} only holds {other} records", len(records), [], f"$.stores.{other}")
    held = list_at(stores, store)
    if not any(isinstance(r, dict) and r.get("id") == must_hold for r in held):
        yield Failure(f"the selected {store} record is not in the export", None, must_hold, f"$.stores.{store}")


@SUITE.check(level="producer", section="Records and relationships", keyword="SHOULD",
                sentence="A link does not imply that its target is included: deleted or unselected targets are "
                         "reported as external references.")
def unselected_links_reported(ctx: CheckContext) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, memory_id=seed.ns, types=["summaries"])
    manifest = object_at(archive, "manifest")
    reported = memorizz.reported_ids(manifest.get("external_references"))
    wrong = _mistyped_stores(archive, "summaries")
    if wrong:
        yield wrong
        return
    if not any(isinstance(r, dict) and r.get("id") == seed.summary for r in list_at(object_at(archive, "stores"), "summaries")):
        raise Inconclusive("the export of the seeded summaries does not hold the summary whose links are tested")
    for ref in (seed.msg1, seed.msg2, seed.gone):  # two unselected, one never imported (deleted)
        if ref not in reported:
            yield Failure("a summary's source message outside the export is not an external reference",
                          sorted(reported), ref, "$.manifest.external_references")


@SUITE.check(level="producer", section="What is portable", keyword="MUST",
                sentence="Credentials and executable runtime objects are omitted.")
def credentials_never_exported(ctx: CheckContext) -> Iterator[Failure]:
    try:
        seed = seeded(ctx)
        archive = export(ctx, agent_id=seed.owner)
    except Unsupported:
        named = named_selection(ctx)
        archive, seed = export(ctx, **named), None
    problems: list[Failure] = []
    wrong = _mistyped_stores(archive)
    if wrong is not None:
        problems.append(wrong)
    elif seed is not None:
        held: set[str] = set()
        mistyped: list[str] = []  # record ids that are not strings: no carrier can be recognised by them
        for store, records in archive.get("stores", {}).items():
            for i, record in enumerate(records if isinstance(records, list) else []):
                if isinstance(record, dict):
                    if isinstance(rid := record.get("id"), str):
                        held.add(rid)
                    else:
                        mistyped.append(f"$.stores.{store}[{i}].id")
        carriers = {seed.owner, seed.delegate, *(rid for rid, _ in seed.credential_records)}
        if not carriers <= held:  # absence of credentials shows something only if their records came back
            if not mistyped:
                raise Inconclusive(f"the export of the seeded agent lacks the records that held credentials: "
                                   f"{sorted(carriers - held)}")
            problems.append(Failure("an exported record id is not a string, so the records that held credentials "
                                    "cannot be recognised", len(mistyped), "a string id on every record", mistyped[0],
                                    f"{len(mistyped)} record(s) without a string id"))
    yield from problems
    leaked = list(memorizz.credential_paths(archive.get("stores")))
    if not leaked and seed is None and not problems:  # nothing known to hold a credential was exported: none out shows nothing
        raise Inconclusive("the target cannot import, so no record known to hold credentials could be exported")
    for path in leaked:
        yield Failure("a credential field is in the export", path, "omitted", "$.stores" + path[1:])


def _mistyped_stores(archive: dict[str, Any], store: str | None = None) -> Failure | None:
    """A Failure when the export's `stores` is there but not an object, or (given) `stores[store]` is there but
    not an array; None when both have their JSON type (absent: read as empty, as before)."""
    stores = archive.get("stores", {})
    if not isinstance(stores, dict):
        return Failure("the export's stores is not an object", type(stores).__name__, "object", "$.stores")
    if store is not None and not isinstance(stores.get(store, []), list):
        return Failure(f"the export's {store} store is not an array", type(stores[store]).__name__, "array",
                       f"$.stores.{store}")
    return None
