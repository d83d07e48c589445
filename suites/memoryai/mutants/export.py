"""MemoryAI mutants of the producer side, one broken rule each: the envelope and manifest, the chunk,
edge and entity records, embeddings, checksum and counts, what an export scope or the stream carries,
/v1/spec and the round trip. MUTANTS and the expected kills are in table.py.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reference.brain import ReferenceBrain


class WrongChecksum(ReferenceBrain):
    """§3.6: the checksum is not over the canonical body."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        sealed = memoryai.seal(bundle)
        sealed["manifest"]["checksum"] = memoryai.checksum(dict(bundle, generator="other"))
        return sealed


class CountsOff(ReferenceBrain):
    """§5 Level 1: manifest.counts is off by one."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        memoryai.seal(bundle)
        bundle["manifest"]["counts"]["chunks"] += 1
        bundle["manifest"].pop("checksum")
        bundle["manifest"]["checksum"] = memoryai.checksum(bundle)
        return bundle


class BadEmbeddingLength(ReferenceBrain):
    """§3.5: exported embeddings are one float short of embedding_dim."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, embedding=memoryai.encode_embedding([0.25] * 383))


class EmbeddingBigEndian(ReferenceBrain):
    """§3.5: embeddings exported as big-endian float32 (the right length and base64, the wrong byte order)."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        out = super()._exported_chunk(chunk)
        if isinstance(out.get("embedding"), str):
            raw = memoryai.decode_embedding(out["embedding"])
            values = struct.unpack(f"<{len(raw) // 4}f", raw)
            out = dict(out, embedding=base64.b64encode(struct.pack(f">{len(values)}f", *values)).decode("ascii"))
        return out


class EmbeddingNotBase64(ReferenceBrain):
    """§3.5: embeddings exported as a JSON list of floats instead of base64 float32."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, embedding="[0.1, 0.2]")


class FormatWrong(ReferenceBrain):
    """§3.1: format is not the literal memoryai-bundle."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        return memoryai.seal(dict(bundle, format="memoryai"))


class VersionBool(ReferenceBrain):
    """§3.1: version is JSON true, not an integer."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        return memoryai.seal(dict(bundle, version=True))


class ExportsLaterVersion(ReferenceBrain):
    """§3.1/§7: a v1 producer stamps its bundles version 2, which every v1 consumer must reject."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        return memoryai.seal(dict(bundle, version=memoryai.MAX_VERSION + 1))


class ManifestMissingModel(ReferenceBrain):
    """§3.1: the manifest has no embedding_model (and so no scope either)."""

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        bundle["manifest"] = {k: v for k, v in bundle["manifest"].items() if k not in ("embedding_model",)}
        return memoryai.seal(bundle)

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
        return memoryai.seal(doc)


class ExportsCredentials(ReferenceBrain):
    """§6: the bundle carries an API key."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, metadata=dict(chunk.get("metadata") or {}, api_key="sk-live-0123456789abcdef"))


class WrongContentHash(ReferenceBrain):
    """§3.2: content_hash is not sha256 of the content."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(chunk, content_hash=memoryai.content_hash(chunk["content"].upper() + "!"))


class ExportsDeleted(ReferenceBrain):
    """§6: chunks marked deleted are still exported."""

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        return super()._exportable(chunk, False, scope, since)


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
