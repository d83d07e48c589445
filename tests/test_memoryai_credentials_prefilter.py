"""MemoryAI's credential prefilter (`credentials.suspicious`) never says no where the walk finds one.

The prefilter gathers the bundle's keys and strings (chunk embeddings aside) a column at a time;
these tests put token-shaped strings and credential-named keys everywhere a bundle can hold them
(next to, inside and equal to embeddings) and hold the prefilter to the precise walk.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from memconform.suites.memoryai import credentials

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



class _Text(str):
    """A str subclass: read by the walk as a string."""


def _reference_gather(node: Any, keys: set[Any], strings: list[str], chunk_level: bool = False) -> None:
    """What the walk reads, node by node: every key, every string, chunk embeddings aside."""
    if isinstance(node, dict):
        for key, value in node.items():
            keys.add(key)
            if chunk_level and key == "embedding":
                continue
            _reference_gather(value, keys, strings)
    elif isinstance(node, list):
        for item in node:
            _reference_gather(item, keys, strings)
    elif isinstance(node, str):
        strings.append(node)


def _value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(12 if depth < 3 else 7)
    leaves = [lambda: "s" + str(rng.randrange(9)), lambda: rng.randrange(5), lambda: 0.5, lambda: True, lambda: None,
              lambda: _Text("sub"), lambda: ("a", "tuple")]
    if pick < 7:
        return leaves[pick]()
    if pick < 9:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["k", "embedding", "api_key", "x"]) + str(rng.randrange(3)): _value(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def test_the_gather_reads_exactly_the_keys_and_strings_the_walk_reads() -> None:
    """Columns of one kind and of mixed kinds, str subclasses, tuples, chunks that are no dict, an
    `embedding` that is a container, and embeddings named below the chunk level (read)."""
    rng = random.Random(8)
    for _ in range(2000):
        chunks: list[Any] = []
        for _ in range(rng.randrange(6)):
            if rng.random() < 0.15:
                chunks.append(_value(rng, 1))
                continue
            chunk = {"id": 1, "content": "c", "embedding": rng.choice([_embedding(rng), None, _value(rng, 1)])}
            for field in rng.sample(["tags", "metadata", "zone", "extra", "weight"], rng.randrange(4)):
                chunk[field] = _value(rng, 1)
            chunks.append(chunk)
        doc: dict[str, Any] = {"format": "memoryai-bundle", "manifest": _value(rng), "chunks": chunks}
        if rng.random() < 0.3:
            doc["entities"] = [_value(rng, 1) for _ in range(3)]
        keys, strings = credentials.keys_and_strings(doc)
        want_keys: set[Any] = set(doc)
        want_strings: list[str] = []
        for key, value in doc.items():
            if key == "chunks":
                for chunk in chunks:
                    _reference_gather(chunk, want_keys, want_strings, chunk_level=isinstance(chunk, dict))
            else:
                _reference_gather(value, want_keys, want_strings)
        assert keys == want_keys, doc
        assert sorted(strings) == sorted(want_strings), doc
