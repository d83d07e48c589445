"""The hostile sweep: every check of a suite, run against a target whose exports and answers put values of the
wrong JSON type where checks read them, never errors with a harness exception (a TypeError, KeyError,
AttributeError ... in a check is a harness bug; an errored result caused by a TargetError, e.g. a manifest from
which the suite cannot learn the target's model, is legitimate).

A few rich fakes per suite, each a subclass of the reference implementation; each runs the suite's every check.
Tests are named test_memoryai_* and test_memorizz_* so that `-k "memoryai or memorizz"` selects them."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.memorizz import format as mz
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.suites.memoryai.reference.brain import ReferenceBrain

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


def harness_errors(suite: str, fake: str) -> list[tuple[str, str]]:
    outcome = execute_run([suite], f"python:{__name__}:{fake}", Profile.named("ci"), report_dir=None)
    assert outcome.results, "no check ran"
    return [(r.check_id, r.reason) for r in outcome.results
            if r.outcome.value == "errored" and not r.reason.startswith(("target error", "positive control refused"))]


# --- MemoryAI ----------------------------------------------------------------------------------------------

class MaiManifestIsList(ReferenceBrain):
    """Every export's manifest is an array holding the manifest (the suite cannot learn the target's model)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        return dict(doc, manifest=[doc["manifest"]])


class _MaiAfterModel(ReferenceBrain):
    """Every export spoiled by `spoil` but the first dna_only one, from which the suite learns the target's
    embedding model (suites/memoryai/client.py target_model): so every check gets past that and reads hostile
    exports (the stream's lines too: export_stream is built from export)."""

    learned = False

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        if not self.learned and isinstance(body, dict) and body.get("scope") == "dna_only":
            self.learned = True
            return doc
        return self.spoil(doc)

    def spoil(self, doc: dict[str, Any]) -> dict[str, Any]:
        return doc


class MaiLaterManifestIsList(_MaiAfterModel):
    """Later manifests arrays, and in every other one counts, embedding_model, checksum, scope and since of
    the wrong type."""

    exports = 0

    def spoil(self, doc: dict[str, Any]) -> dict[str, Any]:
        self.exports += 1
        if self.exports % 2:
            return dict(doc, manifest=[doc["manifest"]])
        return dict(doc, manifest=dict(doc["manifest"], counts=[1], embedding_model=["m"], embedding_dim="384",
                                       checksum={"sha256": 1}, scope=["full"], since=[1]))


class MaiChunkFieldsMistyped(_MaiAfterModel):
    """Chunks with content_hash an array, id an object, tags a number, memory_type and zone arrays, times
    numbers, importance a string, embedding an array, is_pinned a string; content an array in every third."""

    def spoil(self, doc: dict[str, Any]) -> dict[str, Any]:
        chunks = []
        for i, ch in enumerate(doc.get("chunks", [])):
            ch = dict(ch, content_hash=[ch.get("content_hash")], id={"id": ch.get("id")}, tags=5,
                      memory_type=[ch.get("memory_type")], zone=[ch.get("zone")], created_at=17, accessed_at=[1],
                      importance="high", embedding=[0.5], is_pinned="yes", decay_score=[0.5], tier={"t": 1})
            if i % 3 == 2:
                ch["content"] = [ch.get("content")]
            chunks.append(ch)
        return dict(doc, chunks=chunks)


class MaiSectionsMistyped(_MaiAfterModel):
    """chunks an object, entities a number, memory_edges a string, the other sections numbers."""

    def spoil(self, doc: dict[str, Any]) -> dict[str, Any]:
        doc = {k: 3 if isinstance(v, list) else v for k, v in doc.items()}
        return dict(doc, chunks={"0": doc.get("chunks")}, entities=5, memory_edges="edges")


class MaiRecordsMistyped(_MaiAfterModel):
    """Entities with a name array, frequency an object and is_dna a string; edges with ends objects, a type
    array and weight a string; records that are not objects in every section; content_hash numbers by turn."""

    def spoil(self, doc: dict[str, Any]) -> dict[str, Any]:
        doc = dict(doc)
        doc["entities"] = [dict(e, name=[e.get("name")], frequency={"n": 1}, is_dna="yes", entity_type=[1])
                           for e in doc.get("entities", [])] + [7, ["x"]]
        doc["memory_edges"] = [dict(e, chunk_a={"id": e.get("chunk_a")}, chunk_b=[e.get("chunk_b")],
                                    edge_type=[e.get("edge_type")], weight="w")
                               for e in doc.get("memory_edges", [])] + ["edge", 3]
        doc["chunks"] = [dict(ch, content_hash=i) if i % 2 else ch for i, ch in enumerate(doc.get("chunks", []))]
        doc["chunks"] += [["chunk"], 5, None]
        for key, value in list(doc.items()):
            if isinstance(value, list) and key not in ("chunks", "entities", "memory_edges"):
                doc[key] = [*value, 1, "x", [None]]
        return doc


class MaiAnswersMistyped(ReferenceBrain):
    """Import reports whose counters sections are arrays, warnings an object, success and the model match
    strings; decay and delete_chunk answers of the wrong type."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        answer = super().import_bundle(body, **params)
        report = answer["report"]
        for key, value in list(report.items()):
            report[key] = [value] if isinstance(value, dict) else {"v": value} if isinstance(value, list) else value
        report.update(embedding_model_match="yes", bundle_version=["1"], bundle_format=5)
        return {"success": "true", "report": report}

    def decay(self, body: Any = None, **params: Any) -> Any:
        super().decay(body, **params)
        return [{"decayed": "1"}]

    def delete_chunk(self, body: Any = None, **params: Any) -> Any:
        return {"deleted": [super().delete_chunk(body, **params)["deleted"]]}


MAI_FAKES = ["MaiManifestIsList", "MaiLaterManifestIsList", "MaiChunkFieldsMistyped", "MaiSectionsMistyped",
             "MaiRecordsMistyped", "MaiAnswersMistyped"]


@pytest.mark.parametrize("fake", MAI_FAKES)
def test_memoryai_sweep_no_check_errors_on_hostile_types(fake: str) -> None:
    assert harness_errors("memoryai", fake) == []


# --- MemoRizz ----------------------------------------------------------------------------------------------

class MzStoresIsList(ReferenceArchiveStore):
    """`stores` an array holding the stores object; the manifest's scope, includes and warnings mistyped."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        archive["stores"] = [archive["stores"]]
        archive["manifest"].update(scope=["s"], includes="all", warnings={"w": 1}, external_references=5)
        return mz.reseal(archive)


class MzStoreIsNumber(ReferenceArchiveStore):
    """Every other store a number, a string or an object of records."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for i, store in enumerate(sorted(archive["stores"])):
            if i % 3 == 0:
                archive["stores"][store] = 7
            elif i % 3 == 1:
                archive["stores"][store] = {r["id"]: r for r in archive["stores"][store]}
        return mz.reseal(archive)


class MzRecordIdsMistyped(ReferenceArchiveStore):
    """Record ids arrays and objects by turn, every third record's data an array, links (memory_id, memory_ids,
    delegates, automations) of the wrong type; records that are not objects among them."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        n = 0
        for store, records in archive["stores"].items():
            for record in records:
                n += 1
                record["id"] = [record["id"]] if n % 2 else {"id": record["id"]}
                data = record["data"]
                if n % 3 == 0:
                    record["data"] = [data]
                    continue
                for key in ("memory_id", "agent_id"):
                    if key in data:
                        data[key] = [data[key]]
                data.update({k: {"x": data[k]} for k in ("memory_ids", "delegates", "source_message_ids")
                             if k in data})
                if "automations" in data:
                    data["automations"] = {"a": 1}
                if "automations_enabled" in data:
                    data["automations_enabled"] = "false"
            if store == "knowledge_base":
                records.extend([7, ["r"], None])
        return mz.reseal(archive)


class MzDataMistyped(ReferenceArchiveStore):
    """Ids strings but every record's data an array or a string, and imported agents' ids numbers."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for i, (_, record) in enumerate(mz.records_of(archive)):
            record["data"] = [record["data"]] if i % 2 else "data"
        return mz.reseal(archive)


class MzAnswersMistyped(ReferenceArchiveStore):
    """Import reports with id_map an array, conflicts an object, counters strings, errors and warnings of the
    wrong type."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_archive(body, **params)
        return dict(report, id_map=[report.get("id_map")], conflicts={"c": report.get("conflicts")},
                    planned=str(report.get("planned")), imported=[report.get("imported")], skipped="0",
                    errors={"e": 1}, warnings=5, dry_run="no", ok="yes")


MZ_FAKES = ["MzStoresIsList", "MzStoreIsNumber", "MzRecordIdsMistyped", "MzDataMistyped", "MzAnswersMistyped"]


@pytest.mark.parametrize("fake", MZ_FAKES)
def test_memorizz_sweep_no_check_errors_on_hostile_types(fake: str) -> None:
    assert harness_errors("memorizz", fake) == []
