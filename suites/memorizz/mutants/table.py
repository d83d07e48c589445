"""Known-broken MemoRizz archive stores: each breaks ONE rule and must be caught by the checks named for it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.mutants.imports import (
    AcceptsBadChecksum,
    AcceptsOtherVersions,
    AcceptsUnknownEnvelopeFields,
    BigIntegersAsNumbers,
    FillsMissingStores,
    LastDuplicateWins,
    NarrowCharacterSet,
    NarrowCredentialFilter,
    NoRecordLimit,
    OnlyDataIdChecked,
    PreviewNeedsAgent,
    PythonJsonParser,
    RecordLimitExclusive,
    RecountsStores,
    SkipMeansAbort,
    TaxonomyKeysOnly,
    WritesBeforeValidating,
)
from memconform.suites.memorizz.mutants.stores import (
    AsciiChecksum,
    ClaimsRollback,
    CloneForgetsLinks,
    CloneMergesNamespaces,
    CloneRewritesProse,
    CountsSkipZeros,
    DropsEmptyStores,
    ExportsEmbeddings,
    KeepsAutomations,
    KeepsEmbeddings,
    LeaksCredentials,
    LocalTimestamps,
    NoExternalReferences,
    OverwritesOnConflict,
    PreviewHidesConflicts,
    PreviewWrites,
    PythonNumbersChecksum,
    RenumbersOnRestore,
    SelectionIgnored,
    StripsSchemaCredentials,
    WritesUntilFirstConflict,
)
from memconform.suites.memorizz.reference import ReferenceArchiveStore

MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    PreviewWrites, PreviewHidesConflicts, OverwritesOnConflict, WritesUntilFirstConflict, RenumbersOnRestore,
    CloneForgetsLinks,
    CloneRewritesProse, CloneMergesNamespaces, KeepsEmbeddings, LeaksCredentials, StripsSchemaCredentials,
    KeepsAutomations, ClaimsRollback,
    AcceptsBadChecksum, NoExternalReferences, SelectionIgnored, DropsEmptyStores, AsciiChecksum,
    PythonNumbersChecksum, CountsSkipZeros, LocalTimestamps, ExportsEmbeddings, AcceptsOtherVersions,
    AcceptsUnknownEnvelopeFields, TaxonomyKeysOnly, FillsMissingStores, LastDuplicateWins, OnlyDataIdChecked,
    RecountsStores, WritesBeforeValidating, NarrowCredentialFilter, NarrowCharacterSet, PreviewNeedsAgent,
    PythonJsonParser, SkipMeansAbort, BigIntegersAsNumbers, RecordLimitExclusive, NoRecordLimit,
)}

# mutant -> {check id: a fragment of the failure title it must raise}: kills are keyed by failure branch,
# so each way a check can fail is shown to fire (the shared kill test reads the check ids, the keys)
EXPECTED_KILLS: dict[str, dict[str, str]] = {
    "PreviewWrites": {"memorizz.preview_writes_nothing": "records were written by an import that must not write"},
    "PreviewHidesConflicts": {"memorizz.preview_reports_conflicts": "does not list them as conflicts"},
    "OverwritesOnConflict": {
        "memorizz.restore_refuses_conflicts": "a restore refused for conflicts overwrote existing records",
    },
    "WritesUntilFirstConflict": {
        "memorizz.restore_refuses_conflicts": "wrote the records it met before the first conflict",
    },
    "RenumbersOnRestore": {"memorizz.restore_keeps_ids": "a restored record has a new id"},
    "CloneForgetsLinks": {"memorizz.clone_rewrites_ids": "does not point at the cloned records"},
    "CloneRewritesProse": {"memorizz.clone_keeps_prose": "prose changed in the clone"},
    "CloneMergesNamespaces": {"memorizz.clone_keeps_namespaces_separate": "merged or split in the clone"},
    "KeepsEmbeddings": {"memorizz.import_discards_embeddings": "an embedding survived a standard import"},
    "LeaksCredentials": {"memorizz.credentials_never_exported": "a credential field is in the export"},
    "StripsSchemaCredentials": {"memorizz.tool_schemas_remain_data": "a restored tool's parameter schema changed"},
    "KeepsAutomations": {"memorizz.imported_automations_disabled": "automations are not disabled"},
    "ClaimsRollback": {"memorizz.failed_import_reports_progress": "imported count is not the progress committed"},
    "AcceptsBadChecksum": {"memorizz.rejects_checksum_mismatch": "with a record edited after sealing was accepted"},
    "AcceptsOtherVersions": {"memorizz.rejects_unsupported_version": "with version 2 was accepted"},
    "AcceptsUnknownEnvelopeFields": {
        "memorizz.rejects_unknown_envelope_field": "an unknown envelope field was accepted",
    },
    "TaxonomyKeysOnly": {"memorizz.rejects_incorrect_taxonomy": "agents filed under long_term.semantic was accepted"},
    "FillsMissingStores": {"memorizz.rejects_missing_store_key": "shared_memory missing was accepted"},
    "LastDuplicateWins": {
        "memorizz.rejects_duplicate_or_inconsistent_ids": "a record id twice in one store was accepted",
    },
    "OnlyDataIdChecked": {
        "memorizz.rejects_duplicate_or_inconsistent_ids": "persona_id not the persona's record id was accepted",
    },
    "RecountsStores": {
        "memorizz.rejects_incorrect_counts": "a store count that is not the store's length was accepted",
    },
    "WritesBeforeValidating": {
        "memorizz.rejects_unsupported_version": "was refused, but its records were written",
        "memorizz.rejects_checksum_mismatch": "was refused, but its records were written",
    },
    "NarrowCredentialFilter": {"memorizz.credentials_never_exported": "a credential field is in the export"},
    "NarrowCharacterSet": {"memorizz.accepts_valid_archive": "a valid archive was refused"},
    "PreviewNeedsAgent": {"memorizz.previews_spec_example": "complete example was refused"},
    "PythonJsonParser": {"memorizz.hostile_json_refused": "import_archive:"},
    "SkipMeansAbort": {"memorizz.model_sequences": "the namespace left the model"},
    "BigIntegersAsNumbers": {"memorizz.integers_safe": "an integer beyond JavaScript's safe range"},
    "NoExternalReferences": {
        "memorizz.external_references_reported": "links to records outside the archive are not reported",
        "memorizz.unselected_links_reported": "is not an external reference",
    },
    "SelectionIgnored": {"memorizz.selected_export_only_selected": "an export of summaries only holds"},
    "DropsEmptyStores": {"memorizz.selected_export_only_selected": "a one-type export: store key"},
    "AsciiChecksum": {"memorizz.integrity_digest": "is not the sha256 of the canonical JSON"},
    "PythonNumbersChecksum": {"memorizz.integrity_digest": "is not the sha256 of the canonical JSON"},
    "CountsSkipZeros": {"memorizz.selected_export_only_selected": "a one-type export: manifest.counts"},
    "LocalTimestamps": {"memorizz.created_at_utc": "is not a UTC timestamp"},
    "ExportsEmbeddings": {"memorizz.embeddings_follow_includes": "is exported while includes.embeddings is not true"},
    "RecordLimitExclusive": {"memorizz.record_limit_at_the_boundary": "an archive of exactly 100000 records was refused"},
    "NoRecordLimit": {"memorizz.record_limit_at_the_boundary": "an archive of 100001 records was restored"},
}


class ExportTruncatesPastN(ReferenceArchiveStore):
    """Issue 13: the export silently holds at most the first 50 records of each store (one page of a
    paginated backend query, never followed), counts and digest made to match: small exports are whole."""

    PAGE = 50

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for store, records in archive["stores"].items():
            archive["stores"][store] = records[:self.PAGE]
        return memorizz.seal(archive)


MUTANTS["ExportTruncatesPastN"] = ExportTruncatesPastN
EXPECTED_KILLS["ExportTruncatesPastN"] = {"memorizz.own_export_imported_back_large": "records restored"}


class ImportStopsAtInvalid(ReferenceArchiveStore):
    """"Validation rejects ... duplicate or inconsistent IDs": records are validated one by one while they are
    written, and the first one refused ends the restore without a word: the knowledge_base records before it
    are written, those after it dropped, and the report says ok."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        from memconform.kit.hostile import parse_or_reject

        body = parse_or_reject(body)
        archive = body.get("archive") if isinstance(body, dict) else None
        if isinstance(archive, dict) and isinstance(archive.get("stores"), dict) and self.problems(archive):
            records = list(archive["stores"].get("knowledge_base") or [])
            for i in range(len(records)):
                if self.problems(_with_knowledge(archive, records[:i + 1])):
                    return super().import_archive({**body, "archive": _with_knowledge(archive, records[:i])}, **params)
        return super().import_archive(body, **params)


def _with_knowledge(archive: dict[str, Any], records: list[Any]) -> dict[str, Any]:
    import copy

    trial = copy.deepcopy(archive)
    trial["stores"]["knowledge_base"] = records
    return memorizz.seal(trial)


MUTANTS["ImportStopsAtInvalid"] = ImportStopsAtInvalid
EXPECTED_KILLS["ImportStopsAtInvalid"] = {"memorizz.import_batch_middle_item": "the write stopped at the middle item without saying so"}


class ReplaceDeletesBeforeValidating(ReferenceArchiveStore):
    """"Imports preview conflicts before writing": under conflict=replace the records an archive would replace
    are deleted first, before the archive is validated, so a refused archive loses them."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        from memconform.kit.hostile import parse_or_reject

        body = parse_or_reject(body)
        archive = body.get("archive") if isinstance(body, dict) else None
        if isinstance(body, dict) and body.get("conflict") == "replace" and isinstance(archive, dict):
            for store, records in (archive.get("stores") or {}).items():
                for record in records if isinstance(records, list) else []:
                    if isinstance(record, dict) and isinstance(record.get("id"), str) and self.exists(store, record["id"]):
                        with self.db:
                            self.db.execute("DELETE FROM records WHERE store = ? AND id = ?", (store, record["id"]))
        return super().import_archive(body, **params)


MUTANTS["ReplaceDeletesBeforeValidating"] = ReplaceDeletesBeforeValidating
EXPECTED_KILLS["ReplaceDeletesBeforeValidating"] = {"memorizz.import_batch_middle_item": "a record stored before the batch was lost"}


class IdsOfAnyLength(ReferenceArchiveStore):
    """Stores ids in a column without a length check: an id over 512 characters is restored."""

    def problems(self, archive: Any) -> list[str]:
        found = super().problems(archive)
        return [p for p in found if not p.startswith("record_id_form")] if _overlong_only(archive) else found


def _overlong_only(archive: Any) -> bool:
    """Every record id problem of the archive is one of length (a string over 512 characters)."""
    ids = [r.get("id") for _, r in memorizz.records_of(archive) if isinstance(r, dict)] if isinstance(archive, dict) else []
    return all(isinstance(rid, str) and rid for rid in ids)


class NumbersAsDoubles(ReferenceArchiveStore):
    """Keeps record data as a JavaScript backend would: every number a double, so 2^53 + 1 comes back 2^53."""

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        super().write(store, rid, json.loads(json.dumps(data), parse_int=lambda text: int(float(text))))


MUTANTS.update({"IdsOfAnyLength": IdsOfAnyLength, "NumbersAsDoubles": NumbersAsDoubles})
EXPECTED_KILLS["IdsOfAnyLength"] = {"memorizz.domain_records_every_class": "record.id:above_max"}
EXPECTED_KILLS["NumbersAsDoubles"] = {"memorizz.domain_records_every_class": "the number changed"}


class DigestAnyCase(ReferenceArchiveStore):
    """Compares the integrity digest case-insensitively: an upper-case digest is accepted."""

    def digest_ok(self, archive: dict[str, Any], canonical: bytes) -> bool:
        return hashlib.sha256(canonical).hexdigest() == str(archive["integrity"]["digest"]).lower()

    def problems(self, archive: Any) -> list[str]:
        if isinstance(archive, dict) and isinstance(archive.get("integrity"), dict) \
                and isinstance(archive["integrity"].get("digest"), str):
            archive = {**archive, "integrity": {**archive["integrity"], "digest": archive["integrity"]["digest"].lower()}}
        return super().problems(archive)


MUTANTS["DigestAnyCase"] = DigestAnyCase
EXPECTED_KILLS["DigestAnyCase"] = {"memorizz.domain_envelope_every_class": "archive.integrity.digest:uppercase"}


from memconform.suites.memorizz.mutants.domain import EXPECTED_KILLS as DOMAIN_EXPECTED_KILLS  # noqa: E402
from memconform.suites.memorizz.mutants.domain import MUTANTS as DOMAIN_MUTANTS  # noqa: E402
from memconform.suites.memorizz.mutants.domain import (  # noqa: E402, F401  (the contract names them here)
    CloneSkipsHeldIds,
    DataIdNullAsAbsent,
    NormalisesText,
    NullStoresAsEmpty,
    TypesIgnoredWithAgent,
)

MUTANTS.update(DOMAIN_MUTANTS)
EXPECTED_KILLS.update(DOMAIN_EXPECTED_KILLS)
