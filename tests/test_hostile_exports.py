"""A target's export holding a value of the wrong JSON type where a check reads it: the check fails, naming
the field, and never errors (an exception in a check is a harness bug).

Each fake is the reference with one hostile export: a content_hash that is a number, an array or an object,
an entity frequency that is an array, entities or edge ends of the wrong type, chunks, a manifest, a
memory_type or a stream envelope's section of the wrong type, a MemoRizz store that is a number, `stores`
that is an array or null, a record id that is an array. Tests are named test_memoryai_* and test_memorizz_*
so that `-k "memoryai or memorizz"` selects them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.memorizz import format as mz
from memconform.suites.memorizz.client import by_content, ids_in
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.suites.memoryai.reference.brain import ReferenceBrain

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


def run_check(check_id: str, fake: str) -> Any:
    suite = check_id.split(".")[0]
    outcome = execute_run([suite], f"python:{__name__}:{fake}", Profile.named("ci"), report_dir=None,
                          check_ids=[check_id])
    (result,) = outcome.results
    return result


def failed_naming(result: Any, field: str) -> list[dict[str, Any]]:
    """The result failed (not errored), and the failures that name `field` in their title or path."""
    assert result.outcome.value == "failed", (result.outcome.value, result.reason, [f.to_json() for f in result.failures])
    naming = [f.to_json() for f in result.failures if field in f.title or field in f.path]
    assert naming, [f.to_json() for f in result.failures]
    return naming


# --- MemoryAI ----------------------------------------------------------------------------------------------

class _HostileChunks(ReferenceBrain):
    """Exports chunks whose content holds MARK with content_hash = VALUE."""

    MARK = ""
    VALUE: Any = None

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        record = super()._exported_chunk(chunk)
        if self.MARK and self.MARK in str(record.get("content")):
            record["content_hash"] = self.VALUE
        return record


class RoundTripHashIsNumber(ReferenceBrain):
    """The several-MB round trip: the first seeded chunk is exported with content_hash 5; once that export
    came back, it is exported with its hash and the second seeded chunk no longer is (before the fix the
    lost set mixed 5 and hex strings, and sorted() raised)."""

    reimported = False

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and any(isinstance(ch, dict) and ch.get("content_hash") == 5
                                          for ch in body.get("chunks") or []):
            self.reimported = True
        return super().import_bundle(body, **params)

    def _build(self, body: Any) -> dict[str, Any]:
        bundle = super()._build(body)
        kept = []
        for ch in bundle["chunks"]:
            content = str(ch.get("content"))
            if "-rt-mb-" in content and " #1 " in content and self.reimported:
                continue
            if "-rt-mb-" in content and " #0 " in content and not self.reimported:
                ch = dict(ch, content_hash=5)
            kept.append(ch)
        bundle["chunks"] = kept
        return bundle


class IdemHashIsList(_HostileChunks):
    MARK, VALUE = "-idem0-", ["not", "a", "hash"]


class IdemHashIsObject(_HostileChunks):
    MARK, VALUE = "-idem0-", {"sha256": "0" * 64}


class IdemHashIsNumber(_HostileChunks):
    MARK, VALUE = "-idem0-", 5


class IdemHashIsZero(_HostileChunks):
    MARK, VALUE = "-idem0-", 0


class EveryHashIsList(_HostileChunks):
    MARK, VALUE = "memconform-", ["x"]


class FrequencyIsList(ReferenceBrain):
    """Entities exported with frequency [4]."""

    def _exported_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(e, frequency=[e.get("frequency")]) for e in entities]


class EntitiesIsNumber(ReferenceBrain):
    def _build(self, body: Any) -> dict[str, Any]:
        return dict(super()._build(body), entities=5)


class EdgeEndsAreLists(ReferenceBrain):
    """Edges exported with chunk_a an array and edge_type an array; chunk ids exported as arrays."""

    def _build(self, body: Any) -> dict[str, Any]:
        bundle = super()._build(body)
        bundle["chunks"] = [dict(ch, id=[ch.get("id")]) for ch in bundle["chunks"]]
        bundle["memory_edges"] = [dict(e, chunk_a=[e.get("chunk_a")], edge_type=[e.get("edge_type")])
                                  for e in bundle["memory_edges"]]
        return bundle


def test_memoryai_round_trip_with_a_numeric_content_hash_fails_naming_it() -> None:
    result = run_check("memoryai.own_export_imported_back_large", "RoundTripHashIsNumber")
    naming = failed_naming(result, "content_hash")
    assert naming[0]["received"] == 5, naming
    titles = [f.title for f in result.failures]
    assert any("chunks were lost" in t for t in titles), titles  # the well-typed chunks are still compared


@pytest.mark.parametrize("fake", ["IdemHashIsList", "IdemHashIsObject", "IdemHashIsNumber", "IdemHashIsZero"])
def test_memoryai_reimport_with_a_mistyped_content_hash_fails_naming_it(fake: str) -> None:
    result = run_check("memoryai.reimport_inserts_nothing", fake)
    naming = failed_naming(result, "content_hash")
    assert naming[0]["path"] == "$.chunks[?].content_hash", naming


@pytest.mark.parametrize("check", ["existing_row_preserved", "core_memory_types_recognized", "invalid_chunks_skipped"])
def test_memoryai_other_consumer_checks_name_a_mistyped_content_hash(check: str) -> None:
    result = run_check(f"memoryai.{check}", "EveryHashIsList")
    failed_naming(result, "content_hash")


def test_memoryai_reimport_with_a_list_frequency_fails_naming_it() -> None:
    result = run_check("memoryai.reimport_inserts_nothing", "FrequencyIsList")
    naming = failed_naming(result, "frequency")
    assert naming[0]["received"] == [4] or naming[0]["received"] == [2], naming


def test_memoryai_upsert_with_a_list_frequency_fails_naming_it() -> None:
    failed_naming(run_check("memoryai.entities_upserted", "FrequencyIsList"), "frequency")


def test_memoryai_upsert_with_numeric_entities_fails_naming_them() -> None:
    failed_naming(run_check("memoryai.entities_upserted", "EntitiesIsNumber"), "entities")


def test_memoryai_edges_with_array_ends_fail_naming_the_edges() -> None:
    failed_naming(run_check("memoryai.edges_upserted", "EdgeEndsAreLists"), "memory_edges")


# --- MemoRizz ----------------------------------------------------------------------------------------------

class OtherStoreIsNumber(ReferenceArchiveStore):
    """A one-type export whose other stores are the number 7 instead of []."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        wanted = (body or {}).get("types") if isinstance(body, dict) else None
        if isinstance(wanted, list) and len(wanted) == 1:
            for store in archive["stores"]:
                if store not in wanted:
                    archive["stores"][store] = 7
            mz.reseal(archive)
        return archive


class StoresIsList(ReferenceArchiveStore):
    """Exports `stores` as an array holding the stores object."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        archive["stores"] = [archive["stores"]]
        return mz.reseal(archive)


class RecordIdIsList(ReferenceArchiveStore):
    """Exports every record id as an array."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for records in archive["stores"].values():
            for record in records:
                record["id"] = [record["id"]]
        return mz.reseal(archive)


def test_memorizz_one_type_export_with_a_numeric_store_fails_naming_it() -> None:
    result = run_check("memorizz.selected_export_only_selected", "OtherStoreIsNumber")
    naming = failed_naming(result, "$.stores.")
    assert any("not an array" in f["title"] for f in naming), naming


@pytest.mark.parametrize("check", ["unselected_links_reported", "selected_export_only_selected",
                                   "credentials_never_exported"])
def test_memorizz_stores_as_an_array_fails_naming_it(check: str) -> None:
    naming = failed_naming(run_check(f"memorizz.{check}", "StoresIsList"), "stores")
    assert any(f["path"] == "$.stores" for f in naming), naming


def test_memorizz_credentials_check_with_array_record_ids_fails() -> None:
    failed_naming(run_check("memorizz.credentials_never_exported", "RecordIdIsList"), "id")


# --- MemoryAI: the round trip's equivalence, the HTTP profile, sequences and deletion ------------------------

class EveryHashIsObject(_HostileChunks):
    MARK, VALUE = "memconform-", {"sha256": "0" * 64}


class EveryHashIsFalse(_HostileChunks):
    """false, not a string: before the fix `content_hash or sha256(content)` took the text's hash instead."""

    MARK, VALUE = "memconform-", False


class ChunksIsNumber(ReferenceBrain):
    """Every export's chunks is the number 5 and its entities the number 7."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return dict(super().export(body, **params), chunks=5, entities=7)


class MemoryTypeIsList(ReferenceBrain):
    """Chunks exported with memory_type and zone arrays (before the fix mai.is_dna hashed them)."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        record = super()._exported_chunk(chunk)
        return dict(record, memory_type=[record.get("memory_type")], zone=[record.get("zone")])


class ScopedManifestIsList(ReferenceBrain):
    """A dna_only export's manifest is an array holding the manifest, but for the first (the suite reads the
    target's embedding model from it once, in suites/memoryai/client.py) and in full exports."""

    scoped = 0

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        if isinstance(body, dict) and body.get("scope") == "dna_only":
            self.scoped += 1
            if self.scoped > 1:
                doc["manifest"] = [doc["manifest"]]
        return doc


class StreamEnvelopeChunksIsNumber(ReferenceBrain):
    """The stream's envelope line carries chunks 5 and entities {} besides the section lines."""

    def export_stream(self, body: Any = None, **params: Any) -> bytes:
        bundle = self.export(body)
        first, *rest = self._stream_lines(bundle)
        envelope = dict(json.loads(first), chunks=5, entities={"a": 1})
        return b"".join([json.dumps(envelope).encode("utf-8") + b"\n", *rest])


class SinceIgnoredBeforeHashIsNumber(ReferenceBrain):
    """Ignores `since` (exports every chunk) and exports the chunk created before it with content_hash 5:
    before the fix that chunk counted as absent and the check passed."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, deleted, "full" if scope == "since" else scope, since)

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        record = super()._exported_chunk(chunk)
        if "-since-before-" in str(record.get("content")):
            record["content_hash"] = 5
        return record


class DeletedKeptWithNumericHash(ReferenceBrain):
    """delete_chunk says it deleted, but the chunk is still exported, with content_hash 5: before the fix it
    counted as absent and deleted_not_exported passed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.doomed: set[str] = set()

    def delete_chunk(self, body: Any = None, **params: Any) -> dict[str, int]:
        if isinstance(body, dict) and isinstance(body.get("content_hash"), str):
            self.doomed.add(body["content_hash"])
        return {"deleted": 1}

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        record = super()._exported_chunk(chunk)
        if record.get("content_hash") in self.doomed:
            record["content_hash"] = 5
        return record


@pytest.mark.parametrize("fake", ["EveryHashIsList", "EveryHashIsObject", "EveryHashIsFalse"])
def test_memoryai_roundtrip_equivalent_with_a_mistyped_content_hash_fails_naming_it(fake: str) -> None:
    naming = failed_naming(run_check("memoryai.roundtrip_equivalent", fake), "content_hash")
    assert "content_hash" in naming[0]["path"], naming


def test_memoryai_roundtrip_equivalent_with_numeric_chunks_fails_naming_them() -> None:
    failed_naming(run_check("memoryai.roundtrip_equivalent", "ChunksIsNumber"), "chunks")


def test_memoryai_roundtrip_differences_mixed_hash_types_and_a_list_manifest() -> None:
    """An original holding a numeric content_hash (a replayed file) beside a string one, an export with a
    list manifest: before the fix sorted() mixed int and str, h[:12] sliced an int, .get hit a list."""
    from memconform.suites.memoryai.format import content_hash
    from memconform.suites.memoryai.format.equivalence import roundtrip_differences

    def doc(manifest: Any, *chunks: dict[str, Any]) -> dict[str, Any]:
        return {"manifest": manifest, "chunks": list(chunks), "entities": []}

    a, b = {"content": "a", "content_hash": 5, "tags": ["x"]}, {"content": "b", "content_hash": content_hash("b"), "tags": ["y"]}
    first = doc([], dict(a, tags=["changed"]), dict(b, tags=["z"]))
    failures = list(roundtrip_differences(doc({"embedding_model": "m"}, a, b), first, first))
    titles = [(f.title, f.path) for f in failures]
    assert any("content_hash" in f.title and f.received == 5 for f in failures), titles
    assert any("a chunk changed" in t and content_hash("b")[:12] in p for t, p in titles), titles
    assert not any("missing" in t for t, _ in titles), titles  # the chunk with a mistyped hash is left out


@pytest.mark.parametrize("check", ["export_scope_dna_only", "export_scope_since", "export_stream_equivalent",
                                   "import_file_multipart", "model_sequences"])
def test_memoryai_profile_and_sequence_checks_name_a_mistyped_content_hash(check: str) -> None:
    failed_naming(run_check(f"memoryai.{check}", "EveryHashIsList"), "content_hash")


def test_memoryai_dna_only_with_array_memory_types_fails_naming_them() -> None:
    failed_naming(run_check("memoryai.export_scope_dna_only", "MemoryTypeIsList"), "memory_type")


def test_memoryai_dna_only_with_a_list_manifest_fails_naming_it() -> None:
    failed_naming(run_check("memoryai.export_scope_dna_only", "ScopedManifestIsList"), "manifest")


def test_memoryai_stream_with_a_numeric_envelope_section_fails_naming_it() -> None:
    failed_naming(run_check("memoryai.export_stream_equivalent", "StreamEnvelopeChunksIsNumber"), "chunks")


def test_memoryai_deletion_views_with_a_numeric_envelope_section_do_not_error() -> None:
    result = run_check("memoryai.deleted_not_exported", "StreamEnvelopeChunksIsNumber")
    assert result.outcome.value != "errored", result.reason


def test_memoryai_since_with_a_numeric_hash_on_the_earlier_chunk_fails_naming_it() -> None:
    failed_naming(run_check("memoryai.export_scope_since", "SinceIgnoredBeforeHashIsNumber"), "content_hash")


def test_memoryai_deleted_chunk_exported_with_a_numeric_hash_fails_naming_it() -> None:
    naming = failed_naming(run_check("memoryai.deleted_not_exported", "DeletedKeptWithNumericHash"), "content_hash")
    assert naming[0]["received"] == 5, naming


# --- MemoRizz: walking the records of a hostile archive ------------------------------------------------------

class StoresIsNull(ReferenceArchiveStore):
    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return dict(super().export(body, **params), stores=None)


@pytest.mark.parametrize("stores", [[{"agents": []}], None, "stores", 5])
def test_memorizz_records_of_reads_stores_of_the_wrong_type_as_empty(stores: Any) -> None:
    archive = {"stores": stores}
    assert list(mz.records_of(archive)) == []
    assert by_content(archive) == {}
    assert ids_in(archive) == set()


def test_memorizz_records_of_skips_stores_and_records_of_the_wrong_type() -> None:
    good = {"id": "r1", "data": {"content": "text"}}
    archive = {"stores": {"agents": 7, "personas": "x", "knowledge_base": [1, "x", [good], None, good]}}
    assert list(mz.records_of(archive)) == [("knowledge_base", good)]


def test_memorizz_ids_in_and_by_content_with_array_record_ids() -> None:
    first, clone = {"id": ["old"], "data": {"content": "same prose"}}, {"id": {"new": 1}, "data": {"content": "same prose"}}
    archive = {"stores": {"knowledge_base": [first, clone, {"id": "s", "data": {"content": "other"}}]}}
    assert ids_in(archive) == {("knowledge_base", "s")}  # an array or object id names no record
    found = by_content(archive, avoid_ids=frozenset({"old"}))
    assert found["same prose"][1] is clone and found["other"][1]["id"] == "s"


@pytest.mark.parametrize("fake", ["StoresIsList", "StoresIsNull"])
@pytest.mark.parametrize("check", ["restore_keeps_ids", "own_export_imported_back_large"])
def test_memorizz_consumer_checks_with_stores_of_the_wrong_type_fail(check: str, fake: str) -> None:
    failed_naming(run_check(f"memorizz.{check}", fake), "$.stores")


@pytest.mark.parametrize("fake", ["StoresIsList", "StoresIsNull"])
@pytest.mark.parametrize("check", ["preview_writes_nothing", "restore_refuses_conflicts", "tool_schemas_remain_data",
                                   "clone_rewrites_ids", "clone_keeps_prose", "clone_keeps_namespaces_separate",
                                   "failed_import_reports_progress", "rejects_checksum_mismatch", "model_sequences"])
def test_memorizz_checks_reading_records_never_error_on_stores_of_the_wrong_type(check: str, fake: str) -> None:
    result = run_check(f"memorizz.{check}", fake)
    assert result.outcome.value != "errored" or not result.reason.startswith("harness error"), result.reason
