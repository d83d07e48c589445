"""MemoryAI mutants of the consumer side, one broken rule each: the version gate, the file upload, the
upserts of §3.8 (chunks, edges, entities), decay of DNA, embeddings of another model, the ImportReport and
the import's size cap. MUTANTS and the expected kills are in table.py.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.targets.base import Rejected


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
        return memoryai.is_dna(chunk, "type-only")


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
        if isinstance(body, dict) and not memoryai.checksum_matches(body, "either"):
            raise Rejected(self._report(body, warnings=["bad checksum"], success=False))
        return super().import_bundle(body)


class NoImportFile(ReferenceBrain):
    """§4: import/file answers nothing useful."""

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return {"ok": True}


class ImportBodyCap(ReferenceBrain):
    """§5 Level 3: the import refuses bodies over 1 MiB (a web framework's default cap), so the
    brain's own export cannot be imported back once it grows; small imports all pass."""

    CAP = 1024 * 1024

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        size = len(body) if isinstance(body, (bytes, bytearray)) else len(json.dumps(body).encode("utf-8"))
        if size > self.CAP:
            raise Rejected({"error": "payload_too_large", "message": f"request body of {size} bytes over {self.CAP}"},
                           "payload too large")
        return super().import_bundle(body, **params)
