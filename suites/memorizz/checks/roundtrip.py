"""The implementation's own export, past 1 MB (`ci`) or 10 MB (option `memorizz.large_export_mb`), imported back.

One namespace seeded through the target's own restore in bounded steps (a few hundred kB each), its
export restored back as it is (conflict=replace: every record written again), and the namespace's
export compared with the first: nothing lost, nothing changed, nothing added. The namespace is removed
at the end of the run where the target offers delete_namespace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive
from memconform.kit import large_export
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.client import export, forget_namespaces_at_end, import_archive, scalar
from memconform.suites.memorizz.suite import SUITE

BATCH, SIZE = 30, 10_000  # knowledge of ~10,000 mixed UTF-8 characters each (~20 kB): restores of about 600 kB


def knowledge(ctx: CheckContext, ns: str, i: int) -> dict[str, Any]:
    return {"id": ctx.unique("kb"), "data": {"memory_id": ns, "content": f"{ctx.unique('prose')} {i}: "
                                             + ("Größe ✓ 記憶 🧠 " * (SIZE // 14 + 1))[:SIZE]}}


def records(doc: dict[str, Any]) -> dict[Any, Any]:
    """knowledge_base id -> data; a record whose id is an array or object is left out (mistyped_ids names it)."""
    return {r.get("id"): r.get("data") for store, r in memorizz.records_of(doc) if store == "knowledge_base" and scalar(r.get("id"))}


def mistyped_ids(doc: dict[str, Any], when: str) -> Iterator[Failure]:
    bad = [r.get("id") for store, r in memorizz.records_of(doc) if store == "knowledge_base" and not scalar(r.get("id"))]
    if bad:
        yield Failure(f"{len(bad)} knowledge_base record id(s) in the namespace's export {when} are not strings",
                      bad[0], "a string id", "$.stores.knowledge_base[].id")


@SUITE.check(level="consumer", section="Introduction", keyword="MUST",
                sentence="MemoRizz Memory Archive v1 is a portable JSON format for exporting and importing a memory graph.")
def own_export_imported_back_large(ctx: CheckContext) -> Iterator[Failure]:
    """The namespace's own export, past 1 MB (ci) or 10 MB (well inside the 50 MiB and 100,000-record limits), restored
    back: accepted, and the namespace's export afterwards holds every record as before."""
    ns = ctx.unique("rt-mb-ns")
    forget_namespaces_at_end(ctx, ns)
    wanted = large_export.records_for(ctx, len(json.dumps(knowledge(ctx, ns, 0), ensure_ascii=False).encode("utf-8")))
    for start in range(0, wanted, BATCH):  # small restores: only the export restored back is large
        archive = memorizz.empty_archive(source_provider="memconform-round-trip")
        archive["stores"]["knowledge_base"] = [knowledge(ctx, ns, i) for i in range(start, min(start + BATCH, wanted))]
        accepted, body = import_archive(ctx, memorizz.seal(archive), "restore")
        if not accepted:
            raise Inconclusive(f"the seed of the large round trip was refused: {json.dumps(body, default=str)[:200]}")
    doc = export(ctx, memory_id=ns)
    before = records(doc)
    yield from mistyped_ids(doc, "before the round trip")
    size = len(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    ctx.note(f"the namespace's export holds {len(before)} of {wanted} records; {size / 1e6:.1f} MB")
    if len(before) < wanted:
        yield Failure(f"the namespace's export ({size / 1e6:.1f} MB) holds {len(before)} of the {wanted} records restored",
                      len(before), wanted, "$.stores.knowledge_base")
    accepted, body = import_archive(ctx, doc, "restore", "replace")  # the target's own export, unchanged
    if not accepted:
        history_counts.record(ctx, history_counts.counts(acknowledged=len(before)))
        yield Failure(f"the namespace's own export ({size / 1e6:.1f} MB) was refused when restored back",
                      json.dumps(body, default=str)[:300], "accepted", "$")
        return
    doc_after = export(ctx, memory_id=ns)
    after = records(doc_after)
    yield from mistyped_ids(doc_after, "after the round trip")
    lost = [i for i in before if i not in after]
    changed = [i for i in before if i in after and after[i] != before[i]]
    extra = [i for i in after if i not in before]
    history_counts.record(ctx, history_counts.counts(acknowledged=len(before), lost=len(lost), duplicated=len(extra), corrupted=len(changed)))
    if lost:
        yield Failure("records were lost by restoring the namespace's own export back", len(lost), 0,
                      "$.stores.knowledge_base", f"first: {lost[0]}")
    if extra:
        yield Failure("restoring the namespace's own export back added records", len(extra), 0, "$.stores.knowledge_base",
                      f"first: {extra[0]}")
    if changed:
        yield Failure("restoring the namespace's own export back changed records", len(changed), 0,
                      "$.stores.knowledge_base", f"first: {changed[0]}")
