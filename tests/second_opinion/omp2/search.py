"""Keyword, semantic and hybrid search (§3.3 POST /v1/memories/search).

The embedding is an honest local one: a signed, hashed bag of crudely stemmed words (no model),
so "semantic" here means shared word stems weighted by cosine similarity, nothing more.
"""

import hashlib
import math
import re

DIMENSIONS = 512
SEMANTIC_THRESHOLD = 0.15
_WORD = re.compile(r"\w+")
_SUFFIXES = ("ations", "ation", "ences", "ence", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly", "e")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have i in is it its of on or that the this to was were will with user "
    "users about".split()
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in words(text):
        if word in _STOPWORDS:
            continue
        digest = hashlib.blake2b(stem(word).encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % DIMENSIONS
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def cosine(left: list[float], right: list[float]) -> float:
    return sum(a * b for a, b in zip(left, right, strict=True))


def keyword_score(query: str, content: str) -> int:
    """Every query word must occur in the content (case-insensitive substring); score = occurrences."""
    haystack = content.casefold()
    terms = words(query) or [query.casefold().strip()]
    counts = [haystack.count(term) for term in terms if term]
    if not counts or min(counts) == 0:
        return 0
    return sum(counts)


def rank(records: list, query: str, mode: str) -> list[tuple[float, object]]:
    """(score, record) pairs that match, best first; ties keep the newest first."""
    query_vector = embed(query) if mode != "keyword" else None
    keyword = (
        {id(r): keyword_score(query, r.memory["content"]) for r in records} if mode != "semantic" else {}
    )
    best_keyword = max(keyword.values(), default=0) or 1
    scored = []
    for record in records:
        kw = keyword.get(id(record), 0)
        sim = cosine(query_vector, record.vector) if query_vector is not None else 0.0
        if mode == "keyword" and kw:
            scored.append((float(kw), record))
        elif mode == "semantic" and sim >= SEMANTIC_THRESHOLD:
            scored.append((sim, record))
        elif mode == "hybrid" and (kw or sim >= SEMANTIC_THRESHOLD):
            scored.append((0.5 * kw / best_keyword + 0.5 * max(sim, 0.0), record))
    scored.sort(key=lambda pair: (-pair[0], -pair[1].created_order))
    return scored
