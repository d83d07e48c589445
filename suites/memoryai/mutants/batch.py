"""MemoryAI consumers that fail in the middle of a bundle: registered at the end of mutants/table.py."""

from __future__ import annotations

from typing import Any

from memconform.suites.memoryai.reference.brain import ReferenceBrain


class ImportStopsAtInvalid(ReferenceBrain):
    """§4 ImportReport: the import stops at the first invalid chunk: the chunks before it are stored, those
    after it dropped, and the report counts nothing as skipped_invalid (success true)."""

    def _import_chunks(self, bundle: dict[str, Any], match: bool, report: dict[str, Any]) -> dict[Any, int]:
        chunks: list[Any] = bundle["chunks"] if isinstance(bundle.get("chunks"), list) else []
        dim = bundle["manifest"].get("embedding_dim")
        for i, chunk in enumerate(chunks):
            if self._validate_chunk(chunk, dim) is not None:
                bundle = {**bundle, "chunks": chunks[:i]}
                break
        return super()._import_chunks(bundle, match, report)
