"""The MemoRizz mutant stores of preview and conflicts, restore and clone, credentials and automations, checksum,
counts and timestamps (one broken rule each, named by the class's docstring); mutants/table.py makes the tables."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.mutants.domain import (  # noqa: E402, F401  (the contract names them here)
    CloneSkipsHeldIds,
    DataIdNullAsAbsent,
    NormalisesText,
    NullStoresAsEmpty,
    TypesIgnoredWithAgent,
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
