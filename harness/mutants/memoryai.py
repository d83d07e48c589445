"""Known-broken variants of the MemoryAI reference, one broken rule each.

EXPECTED_KILLS names, for every mutant, the checks that must fail on it; tests/test_mutants_memoryai.py
asserts that, and that every check of the suite is killed by some mutant or invalid fixture.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.model import Unsupported
from ..formats import memoryai as mai
from ..reference.memoryai import ReferenceBrain
from ..targets.base import Rejected
from .memoryai_branches import (  # noqa: F401  (mutants by name: python:memconform.mutants.memoryai:<Name>)
    ChecksumBeforeExportedAt,
    DedupAgainstLastImportOnly,
    DnaOnlyByTypeOnly,
    EdgeKeepFirst,
    EdgeUpdatedAtKept,
    EdgeUpsertIgnoresType,
    EntityKeepFirst,
    ExportedAtNotIso,
    ExportFilenameNotJson,
    ExportsAuditSection,
    ExportsNamedSecrets,
    FileImportSkipsVersionGate,
    NoChecksum,
    NoSpecNoStream,
    OldMemoryTypeList,
    PythonJsonLoads,
    RejectsUnknownFields,
    RejectsVendorTypes,
    RequiresOptionalChunkFields,
    ResetsDecayThenDecaysDna,
    ScopedChecksumStale,
    ScopedCountsOfWholeStore,
    SinceIgnoresOffset,
    StreamExportsDeleted,
)


class WrongChecksum(ReferenceBrain):
    """§3.6: the checksum is not over the canonical body."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        sealed = mai.seal(bundle)
        sealed["manifest"]["checksum"] = mai.checksum(dict(bundle, generator="other"))
        return sealed


class CountsOff(ReferenceBrain):
    """§5 Level 1: manifest.counts is off by one."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        mai.seal(bundle)
        bundle["manifest"]["counts"]["chunks"] += 1
        bundle["manifest"].pop("checksum")
        bundle["manifest"]["checksum"] = mai.checksum(bundle)
        return bundle


class BadEmbeddingLength(ReferenceBrain):
    """§3.5: exported embeddings are one float short of embedding_dim."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, embedding=mai.encode_embedding([0.25] * 383))


class EmbeddingNotBase64(ReferenceBrain):
    """§3.5: embeddings exported as a JSON list of floats instead of base64 float32."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, embedding="[0.1, 0.2]")


class FormatWrong(ReferenceBrain):
    """§3.1: format is not the literal memoryai-bundle."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        return mai.seal(dict(bundle, format="memoryai"))


class VersionBool(ReferenceBrain):
    """§3.1: version is JSON true, not an integer."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        return mai.seal(dict(bundle, version=True))


class ManifestMissingModel(ReferenceBrain):
    """§3.1: the manifest has no embedding_model (and so no scope either)."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        bundle["manifest"] = {k: v for k, v in bundle["manifest"].items() if k not in ("embedding_model",)}
        return mai.seal(bundle)

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body)
        if (body or {}).get("scope") == "dna_only":  # let the suite learn the model; break the full export
            doc["manifest"]["embedding_model"] = "memconform-hash-384"
        return doc


class BadZoneAndRange(ReferenceBrain):
    """§3.2: exports zone "hot" and importance 2."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, zone="hot", importance=2.0)


class WrongFieldTypes(ReferenceBrain):
    """§3.2: is_pinned as a string, tags as a string, content dropped from one record."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        out = dict(chunk, is_pinned="no", tags=",".join(chunk.get("tags") or []))
        if chunk.get("memory_type") == "preference":
            out.pop("content")
        return out


class VendorTypeUnprefixed(ReferenceBrain):
    """§3.7: vendor memory types without the x_ prefix."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        mtype = chunk.get("memory_type", "")
        return dict(chunk, memory_type=mtype[2:] if mtype.startswith("x_") else mtype)


class BrokenEdgesAndEntities(ReferenceBrain):
    """§3.3/§3.4: edges with string chunk ids, entities without names."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body)
        for e in doc["memory_edges"]:
            e["chunk_a"] = str(e["chunk_a"])
        doc["entities"] = [{k: v for k, v in e.items() if k != "name"} | {"label": e["name"]} for e in doc["entities"]]
        return mai.seal(doc)


class ExportsCredentials(ReferenceBrain):
    """§6: the bundle carries an API key."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, metadata=dict(chunk.get("metadata") or {}, api_key="sk-live-0123456789abcdef"))


class WrongContentHash(ReferenceBrain):
    """§3.2: content_hash is not sha256 of the content."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, content_hash=mai.content_hash(chunk["content"].upper() + "!"))


class ExportsDeleted(ReferenceBrain):
    """§6: chunks marked deleted are still exported."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, False, scope, since)


class VersionNotRejected(ReferenceBrain):
    """§3.1: a bundle of a newer version is imported."""

    def _max_version(self) -> int:
        return 10**6


class VersionGateOffByOne(ReferenceBrain):
    """§3.1: the gate is `version > MAX + 1` (or `>=` on the wrong side): version 2 gets in, 999 does not."""

    def _max_version(self) -> int:
        return super()._max_version() + 1


class FileUploadLatin1(ReferenceBrain):
    """§4: the uploaded file is decoded as ISO-8859-1 (a framework's default for a part without a charset)."""

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, bytes):
            body = body.decode("latin-1").encode("utf-8")
        return super().import_file(body, **params)


class DuplicatesOnReimport(ReferenceBrain):
    """§3.8: every import inserts its chunks again."""

    def _existing(self, content_hash: str) -> int | None:
        return None

    def _storage_key(self, record: dict[str, Any]) -> str:
        return f"{record['content_hash']}:{uuid.uuid4()}"


class OverwritesExistingRow(ReferenceBrain):
    """§3.8: a duplicate overwrites the existing row instead of being skipped."""

    def _existing(self, content_hash: str) -> int | None:
        found = super()._existing(content_hash)
        if found is not None:
            self.db.execute("DELETE FROM chunks WHERE id = ?", (found,))
        return None


class EdgesNotAccumulated(ReferenceBrain):
    """§3.8: edges keep their first co_activation_count and weight."""

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return old


class EdgeWeightLastWins(ReferenceBrain):
    """§3.8: the last import's weight wins instead of the MAX."""

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return dict(super()._merge_edge(old, new), weight=new.get("weight"))


class EntitiesReplaced(ReferenceBrain):
    """§3.8: an entity re-import replaces it (no accumulated frequency, no OR of is_dna)."""

    def _merge_entity(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return dict(new)


class DnaDecayed(ReferenceBrain):
    """§3.7: DNA chunks decay like any other (only memory_type protects)."""

    def _protect(self, chunk: dict[str, Any]) -> bool:
        return False


class DnaTypeOnly(ReferenceBrain):
    """§3.7: zone critical/important and is_pinned do not protect (the §2 reading only)."""

    def _protect(self, chunk: dict[str, Any]) -> bool:
        return mai.is_dna(chunk, "type-only")


class TenantIdAdopted(ReferenceBrain):
    """§3.8: the consumer takes the bundle's tenant_id as its own."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_bundle(body)
        if isinstance(body, dict) and body.get("manifest", {}).get("tenant_id"):
            self.tenant_id = body["manifest"]["tenant_id"]
        return report


class MismatchEmbeddingsKept(ReferenceBrain):
    """§3.5: embeddings of a different model are kept."""

    def _handle_model_mismatch(self, record: dict[str, Any]) -> dict[str, Any]:
        return record


class InvalidChunksAbort(ReferenceBrain):
    """§5 Level 2: one invalid chunk makes the whole import fail."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and any(not self._valid_chunk(c, body.get("manifest") or {}) for c in body.get("chunks") or []):
            from ..targets.base import Rejected

            raise Rejected(self._report(body, warnings=["invalid chunk"], success=False))
        return super().import_bundle(body)


class ReportShapeWrong(ReferenceBrain):
    """§4: the ImportReport lacks its counters."""

    def _report(self, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
        report = super()._report(body, **kw)
        report["report"].pop("memory_edges")
        report["report"]["chunks"].pop("skipped_invalid")
        return report


class ChecksumMismatchRejected(ReferenceBrain):
    """§3.6: a checksum mismatch is rejected instead of warned about."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and not mai.checksum_matches(body, "either"):
            from ..targets.base import Rejected

            raise Rejected(self._report(body, warnings=["bad checksum"], success=False))
        return super().import_bundle(body)


class DnaOnlyLeaks(ReferenceBrain):
    """§4: the dna_only scope exports every chunk."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, deleted, "full" if scope == "dna_only" else scope, since)


class SinceIgnored(ReferenceBrain):
    """§4: the since scope exports everything."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, deleted, "full" if scope == "since" else scope, since)


class BrokenStream(ReferenceBrain):
    """§4: stream lines are not JSON."""

    def _stream_lines(self, bundle: dict[str, Any]) -> list[bytes]:
        return [line[:-1] for line in super()._stream_lines(bundle)]


class StreamDropsRecords(ReferenceBrain):
    """§4: the stream carries the envelope only."""

    def _stream_lines(self, bundle: dict[str, Any]) -> list[bytes]:
        return super()._stream_lines(bundle)[:1]


class NoImportFile(ReferenceBrain):
    """§4: import/file answers nothing useful."""

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return {"ok": True}


class SpecEmpty(ReferenceBrain):
    """§4: /v1/spec answers an empty document."""

    def spec(self, body: Any = None, **params: Any) -> bytes:
        return b""


class RoundtripLosesData(ReferenceBrain):
    """§5 Level 3: tags and entities do not survive the round trip."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, tags=[])

    def _exported_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return []


class CrashesOnImport(ReferenceBrain):
    """Not a rule: a target that crashes. Its checks must error, never fail or pass."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        raise RuntimeError("simulated crash")


def _id(name: str) -> str:
    return f"memoryai.{name}"


class RefusesEverything(ReferenceBrain):
    """Not a rule: a target that refuses every request. No negative check may pass on it."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("export", "export_stream", "import_bundle", "import_file", "spec", "decay", "delete_chunk"):
            def refuse(body: Any = None, **params: Any) -> Any:
                raise Rejected({"error": "refused"}, "refused")
            return refuse
        return super().__getattribute__(name)


class EmptyExportOnly(ReferenceBrain):
    """Not a rule: an export-only producer with an empty store. Its levels are not assessed."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        raise Unsupported("import_bundle")

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        raise Unsupported("import_file")

    def decay(self, body: Any = None, **params: Any) -> dict[str, int]:
        raise Unsupported("decay")

    def delete_chunk(self, body: Any = None, **params: Any) -> dict[str, int]:
        raise Unsupported("delete_chunk")


NOT_MUTANTS = (CrashesOnImport, RefusesEverything, EmptyExportOnly)
MUTANTS: dict[str, type[ReferenceBrain]] = {
    cls.__name__: cls for cls in ReferenceBrain.__subclasses__() if cls not in NOT_MUTANTS
}
# mutants only an HTTP target can reveal (a 404 is an absent endpoint there); served over loopback in the tests
HTTP_ONLY = {"NoSpecNoStream", "VersionNotRejected", "VersionGateOffByOne", "ExportFilenameNotJson"}


def http_app(name: str) -> Any:
    """The mutant served over HTTP (tests/test_mutant_kills.py serves HTTP_ONLY mutants on loopback)."""
    from ..reference.memoryai_http import make_app

    return make_app(MUTANTS[name]())

EXPECTED_KILLS: dict[str, set[str]] = {name: {_id(c) for c in checks} for name, checks in {
    "WrongChecksum": ["checksum_present_and_valid"],
    "CountsOff": ["counts_accurate"],
    "BadEmbeddingLength": ["embedding_length_matches_dim", "roundtrip_equivalent"],
    "EmbeddingNotBase64": ["embedding_base64_float32"],
    "FormatWrong": ["envelope_format_literal"],
    "VersionBool": ["envelope_version_integer"],
    "ManifestMissingModel": ["manifest_required_fields"],
    "BadZoneAndRange": ["chunk_enums_and_ranges"],
    "WrongFieldTypes": ["chunk_field_types", "chunk_required_fields"],
    "VendorTypeUnprefixed": ["memory_type_known_or_vendor"],
    "BrokenEdgesAndEntities": ["edge_fields", "entity_required_fields"],
    "ExportsCredentials": ["no_credentials_in_bundle"],
    "WrongContentHash": ["content_hash_matches"],
    "ExportsDeleted": ["deleted_not_exported"],
    "VersionNotRejected": ["rejects_newer_version"],
    "VersionGateOffByOne": ["rejects_newer_version"],
    "FileUploadLatin1": ["import_file_multipart"],
    "DuplicatesOnReimport": ["reimport_inserts_nothing"],
    "OverwritesExistingRow": ["existing_row_preserved"],
    "EdgesNotAccumulated": ["edges_upserted"],
    "EdgeWeightLastWins": ["edges_upserted"],
    "EntitiesReplaced": ["entities_upserted"],
    "DnaDecayed": ["dna_never_decayed"],
    "DnaTypeOnly": ["dna_never_decayed"],
    "TenantIdAdopted": ["tenant_id_not_adopted"],
    "MismatchEmbeddingsKept": ["embedding_mismatch_dropped"],
    "InvalidChunksAbort": ["invalid_chunks_skipped"],
    "ReportShapeWrong": ["import_report_shape"],
    "ChecksumMismatchRejected": ["checksum_mismatch_warned"],
    "DnaOnlyLeaks": ["export_scope_dna_only"],
    "SinceIgnored": ["export_scope_since"],
    "BrokenStream": ["export_stream_equivalent"],
    "StreamDropsRecords": ["export_stream_equivalent"],
    "NoImportFile": ["import_file_multipart"],
    "SpecEmpty": ["spec_endpoint"],
    "RoundtripLosesData": ["roundtrip_equivalent"],
    "ChecksumBeforeExportedAt": ["checksum_present_and_valid", "checksum_valid_scoped"],
    "NoChecksum": ["checksum_present_and_valid", "checksum_valid_scoped"],
    "ScopedCountsOfWholeStore": ["counts_accurate_scoped"],
    "ScopedChecksumStale": ["checksum_valid_scoped"],
    "StreamExportsDeleted": ["deleted_not_exported"],
    "FileImportSkipsVersionGate": ["rejects_newer_version"],
    "EdgeKeepFirst": ["edges_upserted"],
    "EdgeUpdatedAtKept": ["edges_upserted"],
    "EdgeUpsertIgnoresType": ["edges_upserted"],
    "EntityKeepFirst": ["entities_upserted"],
    "ResetsDecayThenDecaysDna": ["dna_never_decayed"],
    "DnaOnlyByTypeOnly": ["export_scope_dna_only"],
    "SinceIgnoresOffset": ["export_scope_since"],
    "ExportsNamedSecrets": ["no_credentials_in_bundle"],
    "ExportsAuditSection": ["no_credentials_in_bundle"],
    "OldMemoryTypeList": ["core_memory_types_recognized", "dna_never_decayed", "ingests_conformant_bundles"],
    "RejectsVendorTypes": ["ingests_conformant_bundles"],
    "NoSpecNoStream": ["spec_endpoint", "export_stream_equivalent"],
    "ExportFilenameNotJson": ["export_filename_json"],
    "ExportedAtNotIso": ["envelope_optional_fields"],
    "DedupAgainstLastImportOnly": ["model_sequences"],
    "RequiresOptionalChunkFields": ["ingests_conformant_bundles"],
    "RejectsUnknownFields": ["ingests_conformant_bundles"],
    "PythonJsonLoads": ["hostile_json_refused", "hostile_json_file_refused"],
}.items()}

# issue 12: kills per failure branch. For these mutants the named check must fail with a failure whose
# title contains the given words (the branch that the old test data could not reach).
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "ChecksumBeforeExportedAt": {"checksum_present_and_valid": "does not match the canonical body under any accepted reading"},
    "NoChecksum": {"checksum_present_and_valid": "manifest.checksum is missing"},
    "ScopedCountsOfWholeStore": {"counts_accurate_scoped": "differs from the records present (export scope"},
    "ScopedChecksumStale": {"checksum_valid_scoped": "(export scope"},
    "StreamExportsDeleted": {"deleted_not_exported": "still exported (export/stream)"},
    "FileImportSkipsVersionGate": {"rejects_newer_version": "(import_file) was accepted"},
    "VersionGateOffByOne": {"rejects_newer_version": "a bundle of version 2 (import_bundle) was accepted"},
    "FileUploadLatin1": {"import_file_multipart": "the chunk uploaded as a file"},
    "EdgeKeepFirst": {"edges_upserted": "weight is not the MAX of the two imports (smaller weight first)"},
    "EdgeWeightLastWins": {"edges_upserted": "weight is not the MAX of the two imports (larger weight first)"},
    "EdgeUpdatedAtKept": {"edges_upserted": "updated_at was not refreshed"},
    "EdgeUpsertIgnoresType": {"edges_upserted": "an edge of another edge_type"},
    "EntityKeepFirst": {"entities_upserted": "last_seen is not the latest"},
    "EntitiesReplaced": {"entities_upserted": "frequency was not accumulated"},
    "ResetsDecayThenDecaysDna": {"dna_never_decayed": "decay_score was lowered"},
    "DnaDecayed": {"dna_never_decayed": "a DNA chunk was deleted by decay"},
    "DnaOnlyByTypeOnly": {"export_scope_dna_only": "a DNA chunk is missing from the dna_only export"},
    "DnaOnlyLeaks": {"export_scope_dna_only": "contains non-DNA chunks"},
    "SinceIgnoresOffset": {"export_scope_since": "`since`"},
    "ExportsNamedSecrets": {"no_credentials_in_bundle": "credential or audit field"},
    "ExportsAuditSection": {"no_credentials_in_bundle": "credential or audit field 'audit'"},
    "OldMemoryTypeList": {"core_memory_types_recognized": "a chunk of a core memory_type was not imported"},
    "RejectsVendorTypes": {"ingests_conformant_bundles": "a conformant bundle was refused (vendor_memory_type)"},
    "DedupAgainstLastImportOnly": {"model_sequences": "left the model"},
    "ExportedAtNotIso": {"envelope_optional_fields": "exported_at is not a ISO-8601 datetime"},
    "RequiresOptionalChunkFields": {"ingests_conformant_bundles": "chunks of a conformant bundle were not stored (chunk_only_required_fields)"},
    "RejectsUnknownFields": {"ingests_conformant_bundles": "a conformant bundle was refused (unknown_extension_fields)"},
}


# checks killed by a test of their own, {check id: the test}
KILLED_ELSEWHERE = {"memoryai.rejection_status": "tests/test_mutants_memoryai.py::test_every_check_is_killed (HTTP_ONLY "
                    "mutants served on loopback must fail it)"}


class ImportBodyCap(ReferenceBrain):
    """§5 Level 3 (issue 13): the import refuses bodies over 2 MiB (a web framework's default cap), so the
    brain's own export cannot be imported back once it grows; small imports all pass."""

    CAP = 2 * 1024 * 1024

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        import json

        size = len(body) if isinstance(body, (bytes, bytearray)) else len(json.dumps(body).encode("utf-8"))
        if size > self.CAP:
            raise Rejected({"error": "payload_too_large", "message": f"request body of {size} bytes over {self.CAP}"},
                           "payload too large")
        return super().import_bundle(body, **params)


MUTANTS["ImportBodyCap"] = ImportBodyCap
EXPECTED_KILLS["ImportBodyCap"] = {"memoryai.own_export_imported_back_large"}
EXPECTED_FAILURES["ImportBodyCap"] = {"own_export_imported_back_large": "was refused when imported back"}
