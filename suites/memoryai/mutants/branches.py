"""MemoryAI mutants that reach one failure branch each (kills per branch, not per check): the
ways real implementers break a rule that the first mutants did not reach. MUTANTS and the
expected kills are in table.py.
"""

from __future__ import annotations

from typing import Any

from memconform.core.results import Unsupported
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reference.brain import ReferenceBrain


class ChecksumBeforeExportedAt(ReferenceBrain):
    """§3.6: the checksum is computed before exported_at is stamped (wrong under every reading)."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        stamped = bundle.pop("exported_at")
        sealed = super()._seal(bundle)
        sealed["exported_at"] = stamped
        return sealed


class NoChecksum(ReferenceBrain):
    """§5 Level 1: the manifest carries no checksum at all."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        super()._seal(bundle)["manifest"].pop("checksum")
        return bundle


class ScopedCountsOfWholeStore(ReferenceBrain):
    """§5 Level 1: scoped exports declare the counts of the whole store, not of the records sent."""

    def _counts_for(self, bundle: dict[str, Any]) -> dict[str, int]:
        if bundle["manifest"]["scope"] == "full":
            return super()._counts_for(bundle)
        return super()._counts_for(self._build({"scope": "full"}))


class ScopedChecksumStale(ReferenceBrain):
    """§3.6: scoped exports carry the checksum of the full export."""

    def _checksum_for(self, bundle: dict[str, Any]) -> str:
        if bundle["manifest"]["scope"] == "full":
            return super()._checksum_for(bundle)
        return memoryai.checksum(self._build({"scope": "full"}))


class StreamExportsDeleted(ReferenceBrain):
    """§6: the NDJSON stream still carries chunks marked deleted (the plain export does not)."""

    def export_stream(self, body: Any = None, **params: Any) -> bytes:
        self._stream_deleted = True
        try:
            return super().export_stream(body)
        finally:
            self._stream_deleted = False

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, deleted and not getattr(self, "_stream_deleted", False), scope, since)


class FileImportSkipsVersionGate(ReferenceBrain):
    """§3.1: /import/file imports a bundle of any version (only /import checks it)."""

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self._no_gate = True
        try:
            return super().import_file(body)
        finally:
            self._no_gate = False

    def _max_version(self) -> int:
        return 10**6 if getattr(self, "_no_gate", False) else super()._max_version()


class EdgeKeepFirst(ReferenceBrain):
    """§3.8: co_activation_count accumulates, but weight and updated_at keep the first import's values."""

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        merged = super()._merge_edge(old, new)
        return dict(merged, weight=old.get("weight"), updated_at=old.get("updated_at"))


class EdgeUpdatedAtKept(ReferenceBrain):
    """§3.8: updated_at is never refreshed by an upsert."""

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return dict(super()._merge_edge(old, new), updated_at=old.get("updated_at"))


class EdgeUpsertIgnoresType(ReferenceBrain):
    """§3.8: edges upsert on (source, target) only: an edge of another type merges into the first."""

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        for edge in bundle.get("memory_edges") or []:
            if isinstance(edge, dict):
                edge["edge_type"] = "co_recall"
        super()._import_edges(bundle, idmap, report)


class EntityKeepFirst(ReferenceBrain):
    """§3.8: frequency accumulates, but last_seen and is_dna keep the first import's values."""

    def _merge_entity(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        merged = super()._merge_entity(old, new)
        return dict(merged, last_seen=old.get("last_seen"), is_dna=old.get("is_dna"))


class ResetsDecayThenDecaysDna(ReferenceBrain):
    """§3.7: decay_score is reset to 1 on import, then decay lowers DNA chunks too (never below deletion)."""

    def _insert_chunk(self, hash_: str, doc: dict[str, Any]) -> int:
        return super()._insert_chunk(hash_, dict(doc, decay_score=1.0))

    def _protect(self, chunk: dict[str, Any]) -> bool:
        return False


class DnaOnlyByTypeOnly(ReferenceBrain):
    """§3.7: the dna_only export keeps chunks DNA by memory_type, not by zone or is_pinned."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        if scope == "dna_only" and not deleted:
            return memoryai.is_dna(chunk, "type-only")
        return super()._exportable(chunk, deleted, scope, since)


class SinceIgnoresOffset(ReferenceBrain):
    """§3.1: `since` is read as a wall-clock time, its UTC offset dropped."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        if scope == "since" and since is not None and not deleted:
            naive = since.replace("Z", "")[:19]
            return str(chunk.get("created_at", "")).replace("Z", "")[:19] >= naive
        return super()._exportable(chunk, deleted, scope, since)


class ExportsNamedSecrets(ReferenceBrain):
    """§6: chunk metadata carries a github_token and a session_cookie of no well-known token shape."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        meta = dict(chunk.get("metadata") or {}, github_token="0f3a9c2e7b", session_cookie="sid=7f00a1")
        return dict(super()._exported_chunk(chunk), metadata=meta)


class ExportsAuditSection(ReferenceBrain):
    """§6: the bundle carries a top-level `audit` section."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        bundle["audit"] = [{"who": "admin", "what": "export", "at": "2026-05-28T12:00:00Z"}]
        return super()._seal(bundle)


class OldMemoryTypeList(ReferenceBrain):
    """§3.7: the consumer knows only the older types: pitfall, procedure and life_event are skipped as invalid."""

    def _validate_chunk(self, chunk: Any, dim: Any) -> str | None:
        if isinstance(chunk, dict) and chunk.get("memory_type") in ("pitfall", "procedure", "life_event"):
            return f"unknown memory_type {chunk['memory_type']!r}"
        return super()._validate_chunk(chunk, dim)


class RejectsVendorTypes(ReferenceBrain):
    """§5 Level 2: a bundle with an x_ vendor memory type is rejected whole."""

    def _envelope_problems(self, bundle: Any) -> list[str]:
        problems = super()._envelope_problems(bundle)
        if isinstance(bundle, dict) and any(isinstance(c, dict) and str(c.get("memory_type", "")).startswith("x_")
                                            for c in bundle.get("chunks") or []):
            problems.append("vendor memory types are not supported")
        return problems


class NoSpecNoStream(ReferenceBrain):
    """§4: /v1/spec and /v1/brain/export/stream are not exposed (404)."""

    def spec(self, body: Any = None, **params: Any) -> bytes:
        raise Unsupported("spec")

    def export_stream(self, body: Any = None, **params: Any) -> bytes:
        raise Unsupported("export_stream")


class DedupAgainstLastImportOnly(ReferenceBrain):
    """§3.8: duplicates are found only among the previous import's chunks (an in-memory cache of one batch)."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self._batch: set[str] = set()
        report = super().import_bundle(body)
        self._last = self._batch
        return report

    def _existing(self, hash_: str) -> int | None:
        found = super()._existing(hash_)
        return found if hash_ in getattr(self, "_last", set()) | self._batch else None

    def _insert_chunk(self, hash_: str, doc: dict[str, Any]) -> int:
        self._batch.add(hash_)
        return super()._insert_chunk(hash_, doc)

    def _on_duplicate(self, local_id: int, chunk: dict[str, Any], report: dict[str, Any]) -> int:
        self._batch.add(chunk.get("content_hash") or "")
        return super()._on_duplicate(local_id, chunk, report)


class RequiresOptionalChunkFields(ReferenceBrain):
    """§5 Level 2: chunks without zone or tags (optional fields) are skipped as invalid."""

    def _validate_chunk(self, chunk: Any, dim: Any) -> str | None:
        if isinstance(chunk, dict) and not {"zone", "tags"} <= chunk.keys():
            return "zone and tags are required"
        return super()._validate_chunk(chunk, dim)


class RejectsUnknownFields(ReferenceBrain):
    """§5 Level 2: a bundle with fields the consumer does not know is rejected whole."""

    def _envelope_problems(self, bundle: Any) -> list[str]:
        known = {"format", "version", "generator", "exported_at", "manifest", *memoryai.RECORD_SECTIONS}
        extra = sorted(set(bundle) - known) if isinstance(bundle, dict) else []
        return super()._envelope_problems(bundle) + [f"unknown fields {extra}" for _ in extra[:1]]


class ExportedAtNotIso(ReferenceBrain):
    """§3: exported_at is a Unix timestamp and tenant_id a plain integer, not ISO-8601 and uuid."""

    def _envelope(self) -> dict[str, Any]:
        return dict(super()._envelope(), exported_at=1780000000)

    def _manifest(self, scope: str, since: str | None) -> dict[str, Any]:
        return dict(super()._manifest(scope, since), tenant_id=42)


class ExportFilenameNotJson(ReferenceBrain):
    """§6: the export is served as a file named brain.memoryai (the reserved, unstandardised extension)."""

    export_filename = "brain.memoryai"


class PythonJsonLoads(ReferenceBrain):
    """Request bytes read with plain json.loads: duplicate names (the last wins), NaN and UTF-16 bodies are
    accepted and stored; nesting 10,000 deep raises RecursionError (a crash)."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, (bytes, bytearray)):
            import json

            try:
                body = json.loads(bytes(body))
            except ValueError as exc:
                raise self._rejection(None, [f"body is not JSON: {exc}"]) from None
        return super().import_bundle(body, **params)
