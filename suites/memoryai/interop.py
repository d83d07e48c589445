"""MemoryAI's producer/consumer pairing for the interop-hole sweep (harness/matrix/interop_sweep.py): a Level 1
producer writes every `export` field of the domain table into a bundle, a Level 2 consumer reads it on `import`.
Each class is placed in an otherwise valid, sealed bundle the way the import checks place it (a chunk's content
rehashed, placeholders named as this bundle makes them, counts and checksum set after sealing), so the document
checks judge the very value the consumer check sends."""

from __future__ import annotations

import base64
import copy
import struct
import unicodedata
from typing import Any

from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai import readings

MODEL, DIM = "memconform-embed", 4
# sealing writes these; a class of them is set on the sealed bundle (the import check does the same)
AFTER_SEAL = frozenset({"manifest.counts", "manifest.checksum"})
CHUNK_IMPORT, RECORD_IMPORT = "memoryai.domain_import_every_class", "memoryai.domain_import_every_record_class"


def base_bundle() -> dict[str, Any]:
    """A valid bundle of two chunks, one edge between them and one entity, as a producer writes it."""
    chunks = [readings.example_chunk(f"interop sweep {n}", id=n, embedding_model=MODEL, embedding=None) for n in (1, 2)]
    edge = {"chunk_a": 1, "chunk_b": 2, "edge_type": "related", "weight": 0.5, "co_activation_count": 1,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    entity = {"name": "interop sweep entity", "frequency": 2, "first_seen": "2026-01-01T00:00:00Z",
              "last_seen": "2026-01-02T00:00:00Z", "is_dna": False}
    bundle = readings.example_bundle(chunks, [entity])
    bundle["manifest"].update(embedding_model=MODEL, embedding_dim=DIM, tenant_id="550e8400-e29b-41d4-a716-446655440000")
    bundle.update(memory_edges=[edge], l2_sessions=[], mood_states=[], agents=[])
    return bundle


def _owner(bundle: dict[str, Any], field_id: str) -> dict[str, Any]:
    where = field_id.split(".", 1)[0]
    owners = {"bundle": bundle, "manifest": bundle["manifest"], "chunk": bundle["chunks"][0],
              "edge": bundle["memory_edges"][0], "entity": bundle["entities"][0]}
    return dict.__getitem__(owners, where)


def _embedding(class_id: str) -> Any:
    floats = [0.25 * n for n in range(1, DIM + 1)]
    if class_id == "little_endian":
        return memoryai.encode_embedding(floats)
    if class_id == "big_endian":
        return base64.b64encode(struct.pack(f">{DIM}f", *floats)).decode("ascii")
    if class_id == "wrong_length":
        return memoryai.encode_embedding(floats[:-1])
    return None


def document(field: domain.Field, vc: domain.ValueClass, value: Any) -> dict[str, Any]:
    """A sealed bundle holding `value` of class `vc` where a producer writes it (see the module)."""
    bundle = copy.deepcopy(base_bundle())
    owner, key = _owner(bundle, field.id), field.id.split(".", 1)[1]
    chunk = bundle["chunks"][0]
    if field.id == "chunk.embedding":
        value = _embedding(vc.id) if vc.id in ("little_endian", "big_endian", "wrong_length") else value
    elif field.id == "chunk.content" and isinstance(value, str) and value:
        value = f"interop sweep {value}"  # the import check prefixes its marker the same way: the class kept
    elif field.id == "chunk.content_hash":  # as the import check does: content not in NFC, so E2's readings differ
        chunk["content"] = f"{chunk['content']} cafe\u0301"
    if field.id not in AFTER_SEAL:
        content = str(chunk.get("content"))
        digest = memoryai.content_hash(content)
        names = {"model": MODEL, "hash": digest, "HASH": digest.upper(), "id": 1 if key == "chunk_a" else 2,
                 "id_text": "1" if key == "chunk_a" else "2",
                 "nfc_hash": memoryai.content_hash(unicodedata.normalize("NFC", content)),
                 "other_hash": memoryai.content_hash("another content")}
        _place(owner, key, _named(value, names))
        if field.id == "chunk.content" and isinstance(value, str):
            chunk["content_hash"] = memoryai.content_hash(value)
        return memoryai.seal(bundle)
    memoryai.seal(bundle)
    sealed = bundle["manifest"]["checksum"]
    _place(owner, key, _named(value, {"checksum": sealed, "CHECKSUM": sealed.upper()}))
    if field.id == "manifest.counts":  # the checksum then seals the counts as placed
        bundle["manifest"].pop("checksum", None)
        bundle["manifest"]["checksum"] = memoryai.checksum(bundle)
    return bundle


def _named(value: Any, names: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in names:
        return names[value[1:-1]]
    return value


def _place(owner: dict[str, Any], key: str, value: Any) -> None:
    if value is domain.ABSENT:
        owner.pop(key, None)
    else:
        owner[key] = value


def documents(field: domain.Field, vc: domain.ValueClass) -> list[dict[str, Any]]:
    return [document(field, vc, value) for value in vc.values()]


def expectation(vc: domain.ValueClass) -> str:
    """As the import checks expect it: the chunk and envelope classes through the table's consumer-open ones
    (E42), an edge's and an entity's through the table's word (E61)."""
    return vc.expect if vc.field.startswith(readings.RECORD_PREFIXES) else readings.import_expectation(vc)


def consumer_checks(field: domain.Field) -> tuple[str, ...]:
    return (RECORD_IMPORT,) if field.id.startswith(readings.RECORD_PREFIXES) else (CHUNK_IMPORT,)


def pairing() -> Pairing:
    return Pairing("memoryai", "export", "import", documents, expectation, consumer_checks)
