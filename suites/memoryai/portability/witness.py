"""A reader of MemoryAI bundles apart from the translator (it must not import it): what a reader of the format
sees in a document, against which every ledger line is judged (harness/portability/ledger_truth.py, with the helpers of witness.py)."""

from __future__ import annotations

import base64
import struct
from typing import Any

from memconform.portability.witness import Named, Seen, Witness, outside, seen, walk

# canonical name -> native path (a tuple walks objects)
NATIVE = {"text": ("content",), "type": ("memory_type",), "created_at": ("created_at",),
          "accessed_at": ("accessed_at",), "valid_until": ("valid_until",), "tags": ("tags",),
          "embedding_model": ("embedding_model",), "content_hash": ("content_hash",)}
CHUNK = {"id", "content", "memory_type", "created_at", "accessed_at", "valid_until", "tags", "embedding",
         "embedding_model", "content_hash", "metadata", "zone", "importance", "is_pinned", "decay_score", "tier"}


def records(doc: Any) -> dict[str, Seen]:
    out = Named()
    model = walk(doc, ("manifest", "embedding_model"))
    for i, chunk in enumerate(doc.get("chunks") or []):
        key = str(chunk["id"]) if "id" in chunk else f"#{i + 1}"
        s = seen(NATIVE, key, chunk, chunk.get("metadata"))
        if isinstance(chunk.get("embedding"), str):
            raw = base64.b64decode(chunk["embedding"])
            s.fields["embedding"] = list(struct.unpack(f"<{len(raw) // 4}f", raw[: len(raw) // 4 * 4]))
            if "embedding_model" not in s.fields and model is not None:
                s.fields["embedding_model"] = model
        protection = {k: chunk[k] for k in ("zone", "importance", "is_pinned", "decay_score", "tier") if k in chunk}
        if protection:
            s.fields["protection"] = protection
        outside(s, chunk, CHUNK)
        out.add(key, s)
    return out


WITNESS = Witness(
    records, native=NATIVE, envelope={"exported_at": ("exported_at",), "producer": ("generator",)},
    spoken_for=frozenset({"format", "version", "generator", "exported_at", "manifest", "chunks", "checksum", "counts",
                          "memory_edges", "entities", "l2_sessions", "mood_states", "agents",
                          "manifest.tenant_id", "manifest.tenant_name", "manifest.tenant_plan", "manifest.embedding_model",
                          "manifest.embedding_dim", "manifest.checksum", "manifest.counts", "manifest.scope"}),
    manifest=True)
