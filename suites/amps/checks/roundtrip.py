"""The implementation's own export, past 1 MB (`ci`) or 10 MB (option `amps.large_export_mb`), imported back.

One subject seeded through the target's own import in bounded steps (a few hundred kB each; under the
replace reading of A12 in one import, since each import is then the subject's whole snapshot), its
export imported back as it is, and the subject's export compared with the first: nothing lost, nothing
changed. Atom text stays short (the spec's five-second sentence); the size is in artifact bodies, the
transcripts real exports carry. The subject is removed at once where the target offers delete_subject.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, SkipCheck, TargetError
from memconform.kit import large_export
from memconform.suites.amps import format as amps
from memconform.suites.amps.client import (
    artifacts_by_id,
    atoms_by_id,
    export,
    import_export,
    import_semantics,
    make_artifact,
    make_atom,
    make_export,
)
from memconform.suites.amps.suite import SUITE

BATCH, SIZE = 30, 10_000  # artifact bodies of ~10,000 mixed UTF-8 characters (~15 kB): imports of about 450 kB
ATOM_FIELDS = ("text", "kind", "sensitivity", "confidence")
ARTIFACT_FIELDS = ("body", "title", "kind", "private")


def pair(ctx: CheckContext, i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    art = make_artifact(ctx, f"rt{i}", [], body=(f"transcript {i}: Größe ✓ 記憶 🧠 " * (SIZE // 24 + 1))[:SIZE],
                        private=i % 5 == 0)
    atom = make_atom(ctx, f"rt{i}", "inferred", [art["artifact_id"]], sensitivity=amps.SENSITIVITIES[i % len(amps.SENSITIVITIES)])
    art["atom_ids"] = [atom["atom_id"]]
    return atom, art


def view(doc: dict[str, Any]) -> dict[str, dict[Any, Any]]:
    return {"atoms": {i: ({k: a.get(k) for k in ATOM_FIELDS}, sorted(map(str, amps.artifact_ids_of(a))))
                      for i, a in atoms_by_id(doc).items()},
            "artifacts": {i: {k: a.get(k) for k in ARTIFACT_FIELDS} for i, a in artifacts_by_id(doc).items()}}


@SUITE.check(level="consumer", section="Why we need a standard", keyword="MUST",
                sentence="It gives third-party sidecar vaults (Konshus is one; anyone can build another) a stable "
                         "target to write into and read from.")
def own_export_imported_back_large(ctx: CheckContext) -> Iterator[Failure]:
    """The subject's own export, past 1 MB (ci) or 10 MB (long transcripts), imported back: accepted,
    and the subject's export afterwards holds every atom and artifact as before."""
    subject_id = ctx.unique("subject-rt-mb")
    records = large_export.records_for(ctx, len(json.dumps(pair(ctx, 0), ensure_ascii=False).encode("utf-8")))
    pairs = [pair(ctx, i) for i in range(records)]
    batch = BATCH if import_semantics(ctx) == "merge" else records
    try:
        for start in range(0, records, batch):
            part = pairs[start:start + batch]
            reply = import_export(ctx, make_export(subject_id, [a for a, _ in part], [b for _, b in part]))
            if not reply.ok:
                raise Inconclusive(f"the seed of the large round trip was refused: {reply.status} {reply.raw[:200]!r}")
        yield from _round_trip(ctx, subject_id, records)
    finally:
        try:
            ctx.target.call("delete_subject", {"subject_id": subject_id})
        except (SkipCheck, TargetError):
            ctx.note("no delete_subject: the subject stays until the run's cleanup")


def _round_trip(ctx: CheckContext, subject_id: str, records: int) -> Iterator[Failure]:
    doc = export(ctx, subject_id)
    before = view(doc)
    size = len(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    ctx.note(f"the subject's export holds {len(before['atoms'])} atoms, {len(before['artifacts'])} artifacts; {size / 1e6:.1f} MB")
    if len(before["atoms"]) < records or len(before["artifacts"]) < records:
        yield Failure(f"the subject's export ({size / 1e6:.1f} MB) holds fewer atoms or artifacts than were imported",
                      {"atoms": len(before["atoms"]), "artifacts": len(before["artifacts"])},
                      {"atoms": records, "artifacts": records}, "$")
    reply = import_export(ctx, doc)  # the target's own export, unchanged
    acknowledged = len(before["atoms"]) + len(before["artifacts"])
    if not reply.ok:
        history_counts.record(ctx, history_counts.counts(acknowledged=acknowledged))
        yield Failure(f"the subject's own export ({size / 1e6:.1f} MB) was refused when imported back",
                      f"{reply.status} {reply.raw[:200].decode('utf-8', 'replace')}", "accepted", "$")
        return
    after = view(export(ctx, subject_id))
    lost = [i for kind in ("atoms", "artifacts") for i in before[kind] if i not in after[kind]]
    changed = [i for kind in ("atoms", "artifacts") for i in before[kind] if i in after[kind] and after[kind][i] != before[kind][i]]
    extra = [i for kind in ("atoms", "artifacts") for i in after[kind] if i not in before[kind]]
    history_counts.record(ctx, history_counts.counts(acknowledged=acknowledged, lost=len(lost), duplicated=len(extra), corrupted=len(changed)))
    if lost:
        yield Failure("atoms or artifacts were lost by importing the subject's own export back", len(lost), 0, "$",
                      f"first: {lost[0]}")
    if extra:
        yield Failure("importing the subject's own export back added atoms or artifacts", len(extra), 0, "$", f"first: {extra[0]}")
    if changed:
        yield Failure("importing the subject's own export back changed atoms or artifacts", len(changed), 0, "$",
                      f"first: {changed[0]}")
