"""A target's export holding a value of the wrong JSON type where a check reads it: the check fails, naming
the field, and never errors (an exception in a check is a harness bug).

Each fake is the reference with one hostile export: a content_hash that is a number, an array or an object,
an entity frequency that is an array, entities or edge ends of the wrong type, a MemoRizz store that is a
number, `stores` that is an array."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.formats import memorizz as mz
from memconform.reference.memorizz import ReferenceArchiveStore
from memconform.reference.memoryai import ReferenceBrain
from memconform.session import execute_run


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


def test_round_trip_with_a_numeric_content_hash_fails_naming_it() -> None:
    result = run_check("memoryai.own_export_imported_back_large", "RoundTripHashIsNumber")
    naming = failed_naming(result, "content_hash")
    assert naming[0]["received"] == 5, naming
    titles = [f.title for f in result.failures]
    assert any("chunks were lost" in t for t in titles), titles  # the well-typed chunks are still compared


@pytest.mark.parametrize("fake", ["IdemHashIsList", "IdemHashIsObject", "IdemHashIsNumber", "IdemHashIsZero"])
def test_reimport_with_a_mistyped_content_hash_fails_naming_it(fake: str) -> None:
    result = run_check("memoryai.reimport_inserts_nothing", fake)
    naming = failed_naming(result, "content_hash")
    assert naming[0]["path"] == "$.chunks[?].content_hash", naming


@pytest.mark.parametrize("check", ["existing_row_preserved", "core_memory_types_recognized", "invalid_chunks_skipped"])
def test_other_consumer_checks_name_a_mistyped_content_hash(check: str) -> None:
    result = run_check(f"memoryai.{check}", "EveryHashIsList")
    failed_naming(result, "content_hash")


def test_reimport_with_a_list_frequency_fails_naming_it() -> None:
    result = run_check("memoryai.reimport_inserts_nothing", "FrequencyIsList")
    naming = failed_naming(result, "frequency")
    assert naming[0]["received"] == [4] or naming[0]["received"] == [2], naming


def test_upsert_with_a_list_frequency_fails_naming_it() -> None:
    failed_naming(run_check("memoryai.entities_upserted", "FrequencyIsList"), "frequency")


def test_upsert_with_numeric_entities_fails_naming_them() -> None:
    failed_naming(run_check("memoryai.entities_upserted", "EntitiesIsNumber"), "entities")


def test_edges_with_array_ends_fail_naming_the_edges() -> None:
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


def test_one_type_export_with_a_numeric_store_fails_naming_it() -> None:
    result = run_check("memorizz.selected_export_only_selected", "OtherStoreIsNumber")
    naming = failed_naming(result, "$.stores.")
    assert any("not an array" in f["title"] for f in naming), naming


@pytest.mark.parametrize("check", ["unselected_links_reported", "selected_export_only_selected",
                                   "credentials_never_exported"])
def test_stores_as_an_array_fails_naming_it(check: str) -> None:
    naming = failed_naming(run_check(f"memorizz.{check}", "StoresIsList"), "stores")
    assert any(f["path"] == "$.stores" for f in naming), naming


def test_credentials_check_with_array_record_ids_fails() -> None:
    failed_naming(run_check("memorizz.credentials_never_exported", "RecordIdIsList"), "id")
