"""Rule-including floor for a MemoryAI bundle: the straightforward Python (orjson) checking the rules
`memconform validate` checks on the bench's bundles: envelope literals, manifest fields, each chunk's
required fields, types and ranges, content_hash, base64 float32 embeddings of manifest.embedding_dim,
declared counts, and the §3.6 checksum (sorted keys, no whitespace, UTF-8). Exit 0 valid, 1 not.

    python bench/floors/memoryai_floor.py FILE
"""

import base64
import hashlib
import sys

import orjson

SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")


def main(path: str) -> int:
    doc = orjson.loads(open(path, "rb").read())
    problems = 0
    manifest = doc.get("manifest", {})
    dim = manifest.get("embedding_dim")
    problems += doc.get("format") != "memoryai-bundle" or type(doc.get("version")) is not int
    problems += not all(k in manifest for k in ("scope", "embedding_model", "embedding_dim"))
    for chunk in doc.get("chunks", []):
        content = chunk.get("content")
        problems += type(content) is not str or type(chunk.get("memory_type")) is not str
        problems += hashlib.sha256(content.encode()).hexdigest() != chunk.get("content_hash", "").lower()
        problems += not 0 <= chunk.get("importance", 0) <= 1 or not 0 <= chunk.get("decay_score", 0) <= 1
        emb = chunk.get("embedding")
        if emb is not None:
            problems += len(base64.b64decode(emb, validate=True)) != 4 * dim
    counts = manifest.get("counts", {})
    problems += any(counts.get(s, 0) != len(doc.get(s, [])) for s in SECTIONS)
    claimed = manifest.get("checksum")
    body = dict(doc, manifest={k: v for k, v in manifest.items() if k != "checksum"})
    problems += hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest() != claimed
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
