"""Level 3 equivalence: what "an equivalent Bundle" means (errata E11).

Chunks are matched by content_hash and entities by name (§5 Level 3). For each chunk of the
original bundle, the fields a user wrote survive unchanged: content, memory_type, tags, zone,
importance, is_pinned, valid_until, metadata and (when the models match) the embedding. Ids,
accessed_at, decay_score and tier are the consumer's own state and are not compared. The
re-export after importing the first export must carry exactly the same chunk and entity sets.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deepdiff import DeepDiff

from ...core.model import Failure
from . import content_hash

PRESERVED_CHUNK_FIELDS = ("content", "memory_type", "tags", "zone", "importance", "is_pinned", "valid_until", "metadata")


def _chunks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for ch in doc.get("chunks") or []:
        if isinstance(ch, dict) and isinstance(ch.get("content"), str):
            h = ch.get("content_hash") or content_hash(ch["content"])
            out[h.lower() if isinstance(h, str) else h] = ch  # hex of either case
    return out


def _entities(doc: dict[str, Any]) -> set[str]:
    return {e["name"] for e in doc.get("entities") or [] if isinstance(e, dict) and isinstance(e.get("name"), str)}


def roundtrip_differences(original: dict[str, Any], first: dict[str, Any], second: dict[str, Any],
                          mine: str = "") -> Iterator[Failure]:
    """original → import → first export → import → second export: what did not survive.

    `mine`: a marker in every record this run wrote. Given, only records carrying it are compared between
    the two exports: on a shared instance (checks run in parallel, other users) others write and delete
    their own records meanwhile."""
    orig, one, two = _chunks(original), _chunks(first), _chunks(second)
    missing = sorted(set(orig) - set(one))
    if missing:
        yield Failure(f"{len(missing)} imported chunk(s) missing from the export", [orig[h]["content"] for h in missing[:3]], "every imported chunk", "$.chunks")
    same_model = original.get("manifest", {}).get("embedding_model") == first.get("manifest", {}).get("embedding_model")
    fields = PRESERVED_CHUNK_FIELDS + (("embedding",) if same_model else ())
    for h in sorted(set(orig) & set(one)):
        want = {k: orig[h].get(k) for k in fields if k in orig[h]}
        got = {k: one[h].get(k) for k in want}
        diff = DeepDiff(want, got, ignore_order=True, ignore_numeric_type_changes=True, significant_digits=6)
        if diff:
            path = next(iter(diff.affected_paths), "root")
            yield Failure("a chunk changed on the round trip", got, want, f"$.chunks[content_hash={h[:12]}]{path[4:]}", diff.to_json()[:300])
    lost = sorted(_entities(original) - _entities(first))
    if lost:
        yield Failure("imported entities missing from the export", lost[:5], "every imported entity name", "$.entities")
    differ = {h for h in set(one) ^ set(two) if not mine or mine in {**one, **two}[h]["content"]}
    if differ:
        yield Failure("re-export after re-import has a different chunk set", f"{len(differ)} differ",
                      "the same content_hash set", "$.chunks")
    names = {n for n in _entities(first) ^ _entities(second) if not mine or mine in n}
    if names:
        yield Failure("re-export after re-import has a different entity set", sorted(names)[:5], "the same names", "$.entities")
