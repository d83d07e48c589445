"""MemoryAI's credential prefilter (`credentials.suspicious`) never says no where the walk finds one.

The prefilter cuts each chunk's embedding out of one orjson text of the bundle; these tests put
token-shaped strings and credential-named keys everywhere a bundle can hold them (next to, inside
and equal to embeddings) and hold the prefilter to the precise walk.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from memconform.suites.memoryai import credentials
from memconform.suites.memoryai import format as mai

TOKENS = ["sk-" + "a" * 40, "ghp_" + "A" * 36, "AKIA" + "ABCDEFGHIJKLMNOP", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.sig",
          "xoxb-123-456-abc", "-----BEGIN PRIVATE KEY-----", "AIza" + "S" * 35, "Bearer abc.def"]


def walk_finds(doc: dict[str, Any]) -> bool:
    """The check's walk (suites/memoryai/checks/document.py no_credentials_in_bundle), without a context."""
    for key, value in doc.items():
        if key == "chunks" and isinstance(value, list):
            for i, chunk in enumerate(value):
                target = {k: v for k, v in chunk.items() if k != "embedding"} if isinstance(chunk, dict) else chunk
                if any(credentials.scan(target, f"$.chunks[{i}]")):
                    return True
        elif any(credentials.scan({key: value}, "$")):
            return True
    return False


def _embedding(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(rng.randrange(0, 64))).decode()


def _bundle(rng: random.Random) -> dict[str, Any]:
    chunks: list[Any] = []
    for i in range(rng.randrange(1, 6)):
        chunk: dict[str, Any] = {"id": i, "content": f"note {i}", "embedding": _embedding(rng)}
        if rng.random() < 0.4:
            chunk["metadata"] = {"k": rng.choice(["x", 1, [1, {"y": "z"}]])}
        if rng.random() < 0.3:
            chunk["tags"] = ["a", "b"]
        chunks.append(chunk)
    if rng.random() < 0.2:
        chunks.append(["not", "a", "chunk"])
    return {"format": "memoryai-bundle", "manifest": {"scope": "full"}, "chunks": chunks}


def _plant(rng: random.Random, doc: dict[str, Any]) -> None:
    """One secret somewhere: a token in a field, in metadata, as a chunk's embedding, in an embedding
    of metadata, equal to another chunk's embedding, or a credential-named key."""
    token = rng.choice(TOKENS)
    dicts = [c for c in doc["chunks"] if isinstance(c, dict)]
    chunk = rng.choice(dicts)
    where = rng.randrange(7)
    if where == 0:
        chunk["content"] = f"see {token} here"
    elif where == 1:
        chunk.setdefault("metadata", {})["note"] = token
    elif where == 2:
        chunk["embedding"] = token  # skipped by the walk: a chunk's embedding is not looked at
    elif where == 3:
        chunk.setdefault("metadata", {})["embedding"] = token  # not a chunk's embedding: looked at
    elif where == 4:
        chunk["copy"] = rng.choice(dicts)["embedding"] + token[:0]
        chunk["copy2"] = token
    elif where == 5:
        chunk.setdefault("metadata", {})["api_key"] = "x"
    else:
        doc["manifest"]["githubToken"] = token


def test_prefilter_is_never_quieter_than_the_walk() -> None:
    rng = random.Random(6)
    for _ in range(3000):
        doc = _bundle(rng)
        for _ in range(rng.randrange(3)):
            _plant(rng, doc)
        if walk_finds(doc):
            assert credentials.suspicious(doc), doc


def test_markers_only_inside_chunk_embeddings_are_not_suspicious() -> None:
    """The cut is real: base64 noise in embeddings (which holds "eyJ", "xox", "AIza" often) is passed over."""
    noise = base64.b64encode(b"\x7b\x22" * 30).decode() + "eyJxoxAIzaBearer"
    doc = {"format": "memoryai-bundle", "chunks": [{"id": 1, "content": "plain", "embedding": noise}] * 3}
    assert not walk_finds(doc) and not credentials.suspicious(doc)
    doc["chunks"][0] = {"id": 1, "content": "plain", "embedding": noise, "other": noise}
    assert credentials.suspicious(doc)  # the same text outside an embedding is looked at


def test_prefilter_over_the_canonical_bytes_is_never_quieter_than_the_walk() -> None:
    """The check passes the §3.6 canonical bytes it shares with the checksum check (keys sorted, the
    checksum left out) instead of writing the bundle again: the same guarantee, with secrets in the
    checksum too, and in either writer's text (orjson's, or json.dumps' where a float is below 1e-4)."""
    rng = random.Random(7)
    for _ in range(3000):
        doc = _bundle(rng)
        for _ in range(rng.randrange(3)):
            _plant(rng, doc)
        if rng.random() < 0.2:
            doc["manifest"]["checksum"] = rng.choice(TOKENS + ["0" * 64])
        if rng.random() < 0.2:
            doc["manifest"]["ratio"] = 1e-05  # written by Python's repr in the canonical bytes
        canonical = mai.canonical_bytes(doc, "literal")
        assert (credentials.suspicious(doc, canonical) or not walk_finds(doc)), doc
        assert credentials.suspicious(doc, canonical) == credentials.suspicious(doc), doc


def test_a_token_only_in_the_checksum_is_found_though_the_canonical_bytes_leave_it_out() -> None:
    doc = {"format": "memoryai-bundle", "manifest": {"scope": "full", "checksum": TOKENS[0]}, "chunks": []}
    canonical = mai.canonical_bytes(doc, "literal")
    assert TOKENS[0].encode() not in canonical
    assert walk_finds(doc) and credentials.suspicious(doc, canonical)
