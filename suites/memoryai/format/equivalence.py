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
from memconform.core.results import Failure
from memconform.suites.memoryai.format import content_hash

PRESERVED_CHUNK_FIELDS = ("content", "memory_type", "tags", "zone", "importance", "is_pinned", "valid_until", "metadata")


def _array(doc: dict[str, Any], key: str) -> list[Any]:
    """doc[key] when it is an array, else [] (absent, null or another JSON type)."""
    value = doc.get(key)
    return value if isinstance(value, list) else []


def _chunks(doc: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[tuple[int, dict[str, Any]]]]:
    """(chunks with text keyed by their content_hash lower-cased, or by the hash of their text when it is
    absent, null or ""; (index, chunk) of those whose content_hash is there but not a string). The latter
    are left out of every comparison: a number, array, object or boolean is no hash (and no dict key)."""
    out, mistyped = {}, []
    for i, ch in enumerate(_array(doc, "chunks")):
        if isinstance(ch, dict) and isinstance(ch.get("content"), str):
            h = ch.get("content_hash")
            if h is None or h == "":
                out[content_hash(ch["content"])] = ch
            elif isinstance(h, str):
                out[h.lower()] = ch  # hex of either case
            else:
                mistyped.append((i, ch))
    return out, mistyped


def _entities(doc: dict[str, Any]) -> set[str]:
    return {e["name"] for e in _array(doc, "entities") if isinstance(e, dict) and isinstance(e.get("name"), str)}


def _shape(doc: dict[str, Any], which: str) -> Iterator[Failure]:
    """A Failure for each of an export's chunks, entities (arrays) and manifest (an object) that is there
    but of another JSON type: it is read as empty."""
    for key, kind, name in (("chunks", list, "array"), ("entities", list, "array"), ("manifest", dict, "object")):
        if key in doc and not isinstance(doc[key], kind):
            yield Failure(f"the {which}'s {key} is not an {name}", type(doc[key]).__name__, name, f"$.{key}")


def _embedding_model(doc: dict[str, Any]) -> Any:
    manifest = doc.get("manifest")
    return manifest.get("embedding_model") if isinstance(manifest, dict) else None


def roundtrip_differences(original: dict[str, Any], first: dict[str, Any], second: dict[str, Any],
                          mine: str = "") -> Iterator[Failure]:
    """original → import → first export → import → second export: what did not survive.

    `mine`: a marker in every record this run wrote. Given, only records carrying it are compared between
    the two exports: on a shared instance (checks run in parallel, other users) others write and delete
    their own records meanwhile."""
    # a chunk of the original whose content_hash is not a string (a replayed file) is compared with nothing
    (orig, _), (one, one_bad), (two, two_bad) = _chunks(original), _chunks(first), _chunks(second)
    yield from _shape(first, "export")
    yield from _shape(second, "re-export")
    written = {ch["content"] for ch in _array(original, "chunks") if isinstance(ch, dict) and isinstance(ch.get("content"), str)}
    skipped: set[str] = set()  # texts of exported chunks whose content_hash is not a string: left out below
    for which, title, bad in (("export", "an exported chunk's content_hash is not a string", one_bad),
                              ("re-export", "a re-exported chunk's content_hash is not a string", two_bad)):
        for i, ch in bad:
            text = ch["content"]
            if text in skipped or (text not in written and mine and mine not in text):
                continue  # reported once; another user's chunk is in no comparison
            skipped.add(text)
            value = ch["content_hash"]
            yield Failure(title, value, "a string (sha256 hex)", f"$.chunks[{i}].content_hash",
                          f"{type(value).__name__}, in the {which}, for the chunk {text[:60]!r}")
    missing = sorted(h for h in set(orig) - set(one) if orig[h]["content"] not in skipped)
    if missing:
        yield Failure(f"{len(missing)} imported chunk(s) missing from the export", [orig[h]["content"] for h in missing[:3]], "every imported chunk", "$.chunks")
    same_model = _embedding_model(original) == _embedding_model(first)
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
    both = {**one, **two}
    differ = {h for h in set(one) ^ set(two) if (not mine or mine in both[h]["content"]) and both[h]["content"] not in skipped}
    if differ:
        yield Failure("re-export after re-import has a different chunk set", f"{len(differ)} differ",
                      "the same content_hash set", "$.chunks")
    names = {n for n in _entities(first) ^ _entities(second) if not mine or mine in n}
    if names:
        yield Failure("re-export after re-import has a different entity set", sorted(names)[:5], "the same names", "$.entities")
