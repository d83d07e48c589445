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
from memconform.suites.memorizz.reference import ReferenceArchiveStore


class PreviewWrites(ReferenceArchiveStore):
    """Treats a preview as a restore: the 'dry run' writes."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and body.get("mode") == "preview":
            report = super().import_archive({**body, "mode": "restore", "conflict": "skip"})
            return {**report, "dry_run": True, "imported": 0}
        return super().import_archive(body, **params)


class PreviewHidesConflicts(ReferenceArchiveStore):
    """A preview never lists conflicts (a restore still refuses them)."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_archive(body, **params)
        if isinstance(body, dict) and body.get("mode") == "preview":
            report = {**report, "conflicts": [], "ok": True}
        return report


class OverwritesOnConflict(ReferenceArchiveStore):
    """conflict=error overwrites existing records instead of refusing before writing."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and body.get("mode") == "restore" and body.get("conflict", "error") == "error":
            body = {**body, "conflict": "replace"}
        return super().import_archive(body, **params)


class WritesUntilFirstConflict(ReferenceArchiveStore):
    """A restore with conflict=error writes records in order and refuses only when it meets the first
    that exists: what was before it stays written."""

    def conflicts(self, planned: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, str]]:
        found = super().conflicts(planned)
        if found and not getattr(self, "_previewing", False):
            for store, rid, data in planned:
                if self.exists(store, rid):
                    break
                self.write(store, rid, data)
        return found

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        mode = body.get("mode", "preview") if isinstance(body, dict) else None
        self._previewing = mode == "preview"
        return super().import_archive(body, **params)


class RenumbersOnRestore(ReferenceArchiveStore):
    """A restore gives every record but the agents a new id (as if preserving ids were a clone)."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        if not mapping and store != "agents":
            return super().incoming(store, record, {record["id"]: self.new_id(record["id"])})
        return super().incoming(store, record, mapping)


class CloneForgetsLinks(ReferenceArchiveStore):
    """A clone renumbers records but leaves delegates and source_message_ids pointing at the originals."""

    def rewrite(self, value: Any, mapping: dict[str, str], key: str = "") -> Any:
        if key in ("delegates", "source_message_ids"):
            return value
        return super().rewrite(value, mapping, key)


class CloneRewritesProse(ReferenceArchiveStore):
    """A clone replaces every old id wherever it occurs, prose included."""

    def rewrite(self, value: Any, mapping: dict[str, str], key: str = "") -> Any:
        if isinstance(value, str) and key not in memorizz.REFERENCE_FIELDS:
            for old, new in mapping.items():
                value = value.replace(old, new)
            return value
        return super().rewrite(value, mapping, key)


class CloneMergesNamespaces(ReferenceArchiveStore):
    """A clone moves every namespace, delegate-private ones too, into one new namespace."""

    def new_namespace(self, old: str, mapping: dict[str, str]) -> str:
        merged = mapping.setdefault("\0merged", super().new_namespace(old, mapping))
        return merged

    def id_map(self, archive: dict[str, Any]) -> dict[str, str]:
        mapping = super().id_map(archive)
        mapping.pop("\0merged", None)
        return mapping


class KeepsEmbeddings(ReferenceArchiveStore):
    """A standard import stores the archive's embeddings."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        for key in record["data"]:
            if memorizz.embedding_key(key) is not None:
                data[key] = record["data"][key]
        return rid, data


class LeaksCredentials(ReferenceArchiveStore):
    """Keeps credential fields, on import and on export."""

    def clean(self, data: Any, omitted: list[str], where: str, keep_embeddings: bool = False, parent: str = "") -> Any:
        if isinstance(data, dict):
            return {k: self.clean(v, omitted, where, keep_embeddings, k) for k, v in data.items()
                    if keep_embeddings or memorizz.embedding_key(k) is None}
        if isinstance(data, list):
            return [self.clean(v, omitted, where, keep_embeddings, parent) for v in data]
        return data


class StripsSchemaCredentials(ReferenceArchiveStore):
    """Strips every key named like a credential at any depth, a tool schema's `properties.api_key` too."""

    def clean(self, data: Any, omitted: list[str], where: str, keep_embeddings: bool = False, parent: str = "") -> Any:
        return super().clean(data, omitted, where, keep_embeddings, "")  # never "inside properties"


class KeepsAutomations(ReferenceArchiveStore):
    """Imported agents keep the automations_enabled they arrived with."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        if store == "agents":
            for key in ("automations_enabled", "automations"):
                if key in record["data"]:
                    data[key] = record["data"][key]
        return rid, data


class ClaimsRollback(ReferenceArchiveStore):
    """A failed import reports nothing imported, though its records stay committed."""

    def progress(self, report: dict[str, Any]) -> dict[str, Any]:
        return {**report, "imported": 0, "rolled_back": True}


class NoExternalReferences(ReferenceArchiveStore):
    """Exports links to deleted or unselected records without reporting them."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        archive["manifest"].pop("external_references", None)
        return memorizz.seal(archive)


class SelectionIgnored(ReferenceArchiveStore):
    """A type selection is ignored: every store of the namespace is exported."""

    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        return super().select({k: v for k, v in body.items() if k != "types"})


class DropsEmptyStores(ReferenceArchiveStore):
    """Leaves empty stores out of the archive (and their counts)."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        archive["stores"] = {k: v for k, v in archive["stores"].items() if v}
        return memorizz.seal(archive)


class AsciiChecksum(ReferenceArchiveStore):
    """Hashes JSON with non-ASCII characters escaped as \\u sequences."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        memorizz.seal(archive)
        body = memorizz.without_integrity(archive)
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        archive["integrity"]["digest"] = hashlib.sha256(text.encode()).hexdigest()
        return archive


class PythonNumbersChecksum(ReferenceArchiveStore):
    """Hashes Python's json.dumps: 1.0 stays 1.0 and 1e-7 is written 1e-07."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        memorizz.seal(archive)
        text = json.dumps(memorizz.without_integrity(archive), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        archive["integrity"]["digest"] = hashlib.sha256(text.encode()).hexdigest()
        return archive


class CountsSkipZeros(ReferenceArchiveStore):
    """manifest.counts names only the stores that hold records."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        memorizz.seal(archive)
        archive["manifest"]["counts"] = {k: n for k, n in archive["manifest"]["counts"].items() if n}
        archive.pop("integrity")
        archive["integrity"] = {"algorithm": "sha256", "digest": memorizz.digest(archive)}
        return archive


class LocalTimestamps(ReferenceArchiveStore):
    """Writes created_at in local time without a zone."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        archive["manifest"]["created_at"] = "2026-07-01T09:30:00"
        return memorizz.seal(archive)


class ExportsEmbeddings(ReferenceArchiveStore):
    """Exports embeddings though includes.embeddings says they were not requested."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for _, record in memorizz.records_of(archive):
            record["data"].setdefault("embedding", [0.5, 0.25])
        return memorizz.seal(archive)


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


from memconform.suites.memorizz.mutants import domain  # noqa: E402
from memconform.suites.memorizz.mutants.domain import (  # noqa: E402, F401  (the contract names them here)
    CloneSkipsHeldIds,
    DataIdNullAsAbsent,
    NormalisesText,
    NullStoresAsEmpty,
    TypesIgnoredWithAgent,
)

MUTANTS.update(domain.MUTANTS)
EXPECTED_KILLS.update(domain.EXPECTED_KILLS)
