"""Mutants only the domain table's data reveals: values and combinations no hand-written example sends."""

from __future__ import annotations

import json
from typing import Any

from memconform.suites.memoryai.reference.brain import ReferenceBrain


class RoundsBigIntegers(ReferenceBrain):
    """Stores a chunk's metadata through a float parse: an integer beyond 2^53 comes back rounded."""

    def _insert_chunk(self, hash_: str, doc: dict[str, Any]) -> int:
        if isinstance(doc.get("metadata"), dict):
            doc = dict(doc, metadata=json.loads(json.dumps(doc["metadata"]), parse_int=float))
        return super()._insert_chunk(hash_, doc)


class EdgeTypeAsciiOnly(ReferenceBrain):
    """Skips an edge whose edge_type is not ASCII (a column in a single-byte charset, say)."""

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        edges = bundle.get("memory_edges")
        if isinstance(edges, list):
            kept = [e for e in edges if not (isinstance(e, dict) and isinstance(e.get("edge_type"), str) and not e["edge_type"].isascii())]
            report["memory_edges"]["skipped"] += len(edges) - len(kept)
            bundle = {**bundle, "memory_edges": kept}
        super()._import_edges(bundle, idmap, report)


class DnaOnlyForgottenWithSince(ReferenceBrain):
    """Given a `since` beside scope dna_only, filters by since alone and forgets the DNA rule."""

    def _build(self, body: Any) -> dict[str, Any]:
        if isinstance(body, dict) and body.get("scope") == "dna_only" and isinstance(body.get("since"), str):
            bundle = super()._build({**body, "scope": "since"})
            bundle["manifest"]["scope"] = "dna_only"
            return bundle
        return super()._build(body)


class FileImportCountsDuplicatesAsInserted(ReferenceBrain):
    """The multipart import reports every valid chunk as inserted, duplicates too (§4 ImportReport counters)."""

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        answer = super().import_file(body, **params)
        chunks = answer["report"]["chunks"]
        chunks["inserted"] += chunks["skipped_duplicate"]
        chunks["skipped_duplicate"] = 0
        return answer


class SkipsInvalidUncounted(ReferenceBrain):
    """Skips a chunk whose zone, tier or decay_score breaks §3.2 without counting it under skipped_invalid."""

    def _on_invalid_chunk(self, index: int, reason: str, report: dict[str, Any]) -> None:
        if not reason.startswith(("zone", "tier", "decay_score")):
            super()._on_invalid_chunk(index, reason, report)


class EdgeSkipsCountedUpserted(ReferenceBrain):
    """Counts every edge of a bundle as upserted, the ones it had to skip (an end missing) too."""

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        super()._import_edges(bundle, idmap, report)
        report["memory_edges"]["upserted"] += report["memory_edges"]["skipped"]
        report["memory_edges"]["skipped"] = 0


__all__ = ["DnaOnlyForgottenWithSince", "EdgeSkipsCountedUpserted", "EdgeTypeAsciiOnly", "FileImportCountsDuplicatesAsInserted", "RoundsBigIntegers",
           "SkipsInvalidUncounted"]
