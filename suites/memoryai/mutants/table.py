"""The MemoryAI mutants module (SuiteSpec.mutants): the tables MUTANTS, EXPECTED_KILLS, EXPECTED_FAILURES,
HTTP_ONLY and KILLED_ELSEWHERE, and three targets that misbehave without breaking a rule. The mutants live
in export.py (producer side), imports.py (consumer side) and branches.py (one
failure branch each); every one is re-exported here, so `python:memconform.suites.memoryai.mutants:<Name>` names it.

EXPECTED_KILLS names, for every mutant, the checks that must fail on it; tests/test_suite_contract.py
asserts that, and that every check of the suite is killed by some mutant or invalid fixture.
"""

from __future__ import annotations

from typing import Any

from memconform.core.results import Unsupported
from memconform.suites.memoryai.mutants.branches import (
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
from memconform.suites.memoryai.mutants.export import (
    BadEmbeddingLength,
    BadZoneAndRange,
    BrokenEdgesAndEntities,
    BrokenStream,
    CountsOff,
    DnaOnlyLeaks,
    EmbeddingBigEndian,
    EmbeddingNotBase64,
    ExportsCredentials,
    ExportsDeleted,
    ExportsLaterVersion,
    FormatWrong,
    ManifestMissingModel,
    RoundtripLosesData,
    SinceIgnored,
    SpecEmpty,
    StreamDropsRecords,
    VendorTypeUnprefixed,
    VersionBool,
    WrongChecksum,
    WrongContentHash,
    WrongFieldTypes,
)
from memconform.suites.memoryai.mutants.imports import (
    ChecksumMismatchRejected,
    DnaDecayed,
    DnaTypeOnly,
    DuplicatesOnReimport,
    EdgesNotAccumulated,
    EdgeWeightLastWins,
    EntitiesReplaced,
    FileUploadLatin1,
    ImportBodyCap,
    InvalidChunksAbort,
    MismatchEmbeddingsKept,
    NoImportFile,
    OverwritesExistingRow,
    ReportShapeWrong,
    TenantIdAdopted,
    VersionGateOffByOne,
    VersionNotRejected,
)
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.targets.base import Rejected


class CrashesOnImport(ReferenceBrain):
    """Not a rule: a target that crashes. Its checks must error, never fail or pass."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        raise RuntimeError("simulated crash")


class RefusesEverything(ReferenceBrain):
    """Not a rule: a target that refuses every request. No negative check may pass on it."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("export", "export_stream", "import_bundle", "import_file", "spec", "decay", "delete_chunk", "delete_chunks"):
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

    def delete_chunks(self, body: Any = None, **params: Any) -> dict[str, int]:
        raise Unsupported("delete_chunks")


# by name, in the order they were written; the three targets above are not mutants (no rule broken)
MUTANTS: dict[str, type[ReferenceBrain]] = {cls.__name__: cls for cls in (
    ChecksumBeforeExportedAt, NoChecksum, ScopedCountsOfWholeStore, ScopedChecksumStale, StreamExportsDeleted,
    FileImportSkipsVersionGate, EdgeKeepFirst, EdgeUpdatedAtKept, EdgeUpsertIgnoresType, EntityKeepFirst,
    ResetsDecayThenDecaysDna, DnaOnlyByTypeOnly, SinceIgnoresOffset, ExportsNamedSecrets, ExportsAuditSection,
    OldMemoryTypeList, RejectsVendorTypes, NoSpecNoStream, DedupAgainstLastImportOnly,
    RequiresOptionalChunkFields, RejectsUnknownFields, ExportedAtNotIso, ExportFilenameNotJson, PythonJsonLoads,
    WrongChecksum, CountsOff, BadEmbeddingLength, EmbeddingNotBase64, FormatWrong, VersionBool,
    ManifestMissingModel, BadZoneAndRange, WrongFieldTypes, VendorTypeUnprefixed, BrokenEdgesAndEntities,
    ExportsCredentials, WrongContentHash, ExportsDeleted, VersionNotRejected, VersionGateOffByOne,
    FileUploadLatin1, DuplicatesOnReimport, OverwritesExistingRow, EdgesNotAccumulated, EdgeWeightLastWins,
    EntitiesReplaced, DnaDecayed, DnaTypeOnly, TenantIdAdopted, MismatchEmbeddingsKept, InvalidChunksAbort,
    ReportShapeWrong, ChecksumMismatchRejected, DnaOnlyLeaks, SinceIgnored, BrokenStream, StreamDropsRecords,
    NoImportFile, SpecEmpty, RoundtripLosesData, ImportBodyCap, EmbeddingBigEndian, ExportsLaterVersion)}
# mutants only an HTTP target can reveal (a 404 is an absent endpoint there); served over loopback in the tests
HTTP_ONLY = {"NoSpecNoStream", "VersionNotRejected", "VersionGateOffByOne", "ExportFilenameNotJson"}


def http_app(name: str) -> Any:
    """The mutant served over HTTP (tests/test_suite_contract.py serves HTTP_ONLY mutants on loopback)."""
    from memconform.suites.memoryai.reference.http_app import make_app

    return make_app(MUTANTS[name]())


def _id(name: str) -> str:
    return f"memoryai.{name}"


EXPECTED_KILLS: dict[str, set[str]] = {name: {_id(c) for c in checks} for name, checks in {
    "WrongChecksum": ["checksum_present_and_valid"],
    "CountsOff": ["counts_accurate"],
    "BadEmbeddingLength": ["embedding_length_matches_dim", "roundtrip_equivalent"],
    "EmbeddingNotBase64": ["embedding_base64_float32"],
    "EmbeddingBigEndian": ["embedding_little_endian"],
    "FormatWrong": ["envelope_format_literal"],
    "VersionBool": ["envelope_version_integer"],
    "ExportsLaterVersion": ["envelope_version_integer"],
    "ManifestMissingModel": ["manifest_required_fields"],
    "BadZoneAndRange": ["chunk_enums_and_ranges"],
    "WrongFieldTypes": ["chunk_field_types", "chunk_required_fields"],
    "VendorTypeUnprefixed": ["memory_type_known_or_vendor"],
    "BrokenEdgesAndEntities": ["edge_fields", "entity_required_fields"],
    "ExportsCredentials": ["no_credentials_in_bundle"],
    "WrongContentHash": ["content_hash_matches"],
    "ExportsDeleted": ["deleted_not_exported"],
    "VersionNotRejected": ["rejects_newer_version", "rejection_status"],
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
    "ImportBodyCap": ["own_export_imported_back_large"],
}.items()}

# kills per failure branch. For these mutants the named check must fail with a failure whose
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
    "ExportsLaterVersion": {"envelope_version_integer": "is later than MemoryAI Protocol v1"},
    "RequiresOptionalChunkFields": {"ingests_conformant_bundles": "chunks of a conformant bundle were not stored (chunk_only_required_fields)"},
    "RejectsUnknownFields": {"ingests_conformant_bundles": "a conformant bundle was refused (unknown_extension_fields)"},
    "ImportBodyCap": {"own_export_imported_back_large": "was refused when imported back"},
}


# failures in the middle of a bundle (mutants/batch.py)
from memconform.suites.memoryai.mutants.batch import ImportStopsAtInvalid  # noqa: E402

MUTANTS["ImportStopsAtInvalid"] = ImportStopsAtInvalid
EXPECTED_KILLS["ImportStopsAtInvalid"] = {"memoryai.import_batch_middle_item"}
EXPECTED_FAILURES["ImportStopsAtInvalid"] = {"import_batch_middle_item": "the write stopped at the middle item without saying so"}



class NormalisesContent(ReferenceBrain):
    """Stores every imported chunk's content NFC-normalised (its hash kept): decomposed text comes back composed."""

    def _insert_chunk(self, hash_: str, doc: dict[str, Any]) -> int:
        import unicodedata

        if isinstance(doc.get("content"), str):
            doc = dict(doc, content=unicodedata.normalize("NFC", doc["content"]))
        return super()._insert_chunk(hash_, doc)


class ImportanceUnbounded(ReferenceBrain):
    """Checks that importance is a number but not that it lies in 0..1: an importance of 5 is stored and exported."""

    def _validate_chunk(self, chunk: Any, dim: Any) -> str | None:
        if isinstance(chunk, dict) and isinstance(chunk.get("importance"), int | float) \
                and not isinstance(chunk.get("importance"), bool):
            chunk = {k: v for k, v in chunk.items() if k != "importance"}
        return super()._validate_chunk(chunk, dim)


MUTANTS.update({"NormalisesContent": NormalisesContent, "ImportanceUnbounded": ImportanceUnbounded})
EXPECTED_KILLS.update({"NormalisesContent": {_id("domain_import_every_class")},
                       "ImportanceUnbounded": {_id("domain_import_every_class")}})
EXPECTED_FAILURES.update({
    "NormalisesContent": {"domain_import_every_class": "the value changed between import and export"},
    "ImportanceUnbounded": {"domain_import_every_class": "a forbidden value was stored and exported as such"},
})


class SinceUnvalidated(ReferenceBrain):
    """Serves a `since` it cannot read as if none was given, and writes it into the manifest as it came."""

    def _build(self, body: Any) -> dict[str, Any]:
        from memconform.suites.memoryai.reference.store import _ts

        since = body.get("since") if isinstance(body, dict) else None
        if isinstance(since, str) and _ts(since) is None:
            bundle = super()._build({**body, "since": None})
            bundle["manifest"]["since"] = since
            return bundle
        return super()._build(body)


MUTANTS["SinceUnvalidated"] = SinceUnvalidated
EXPECTED_KILLS["SinceUnvalidated"] = {_id("domain_export_every_class")}
EXPECTED_FAILURES["SinceUnvalidated"] = {"domain_export_every_class": "manifest.since is not an ISO-8601 date-time"}


# only the domain table's data reveals these (mutants/domain.py): a number form, a string class, a pair
from memconform.suites.memoryai.mutants.domain import (  # noqa: E402
    DnaOnlyForgottenWithSince,
    EdgeSkipsCountedUpserted,
    EdgeTypeAsciiOnly,
    FileImportCountsDuplicatesAsInserted,
    RoundsBigIntegers,
    SkipsInvalidUncounted,
)

for _mutant in (RoundsBigIntegers, EdgeTypeAsciiOnly, DnaOnlyForgottenWithSince, FileImportCountsDuplicatesAsInserted,
                SkipsInvalidUncounted, EdgeSkipsCountedUpserted):
    MUTANTS[_mutant.__name__] = _mutant
EXPECTED_KILLS.update({
    "RoundsBigIntegers": {_id("domain_import_every_class")},
    "EdgeTypeAsciiOnly": {_id("domain_import_every_record_class")},
    "DnaOnlyForgottenWithSince": {_id("domain_export_parameters_pairwise")},
    "FileImportCountsDuplicatesAsInserted": {_id("domain_import_requests_pairwise")},
    "SkipsInvalidUncounted": {_id("domain_import_every_class")},
    "EdgeSkipsCountedUpserted": {_id("domain_import_every_record_class")},
})
EXPECTED_FAILURES.update({
    "RoundsBigIntegers": {"domain_import_every_class": "chunk.metadata:number_above_2_53"},
    "EdgeTypeAsciiOnly": {"domain_import_every_record_class": "the edge of an ingested bundle is not in the full export"},
    "DnaOnlyForgottenWithSince": {"domain_export_parameters_pairwise": "the export's chunks fit no accepted reading"},
    "FileImportCountsDuplicatesAsInserted": {"domain_import_requests_pairwise": "fits no outcome the spec allows"},
    "SkipsInvalidUncounted": {"domain_import_every_class": "dropped without being counted as skipped_invalid"},
    "EdgeSkipsCountedUpserted": {"domain_import_every_record_class": "the report counts a record it could not store as upserted"},
})
