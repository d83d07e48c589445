"""§6 "Bundles MUST NOT include API keys, audit logs, or other credentials": what counts as one.

A key is judged by its words (split on `_`, `-`, `.`, spaces and camelCase), so every spelling
of a secret field is found (`openai_api_key`, `githubToken`, `session_cookie`, `x_audit_log`, a
top-level `audit` section) while counters such as `max_tokens` or `token_count` are not.
A value is a credential when it has the shape of a well-known token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import repeat
from typing import Any

import orjson
from memconform.core.model import Failure
from memconform.formats import SECRET_VALUE, VALUE_MARKERS, audit_key, secret_key

# the one list of what a credential looks like, shared by every suite (formats/common.py)
CREDENTIAL_VALUES = SECRET_VALUE


def credential_key(key: str) -> bool:
    """Does a field name say it holds a credential or an audit log?"""
    return secret_key(key) or audit_key(key)


_AKIA_TAIL = re.compile(r"[0-9A-Z]{16}")


def scan(value: Any, path: str) -> Iterator[Failure]:
    """The precise walk: every credential-named field with a value, and every token-shaped string."""
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}"
            if isinstance(key, str) and credential_key(key) and item not in (None, "", [], {}, False, 0):
                yield Failure(f"bundle carries a credential or audit field {key!r}", "<redacted>", "no credentials or audit logs", sub)
            else:
                yield from scan(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from scan(item, f"{path}[{i}]")
    elif isinstance(value, str) and len(value) < 100_000 and CREDENTIAL_VALUES.search(value):
        yield Failure("bundle carries what looks like a secret token", "<redacted>", "no credentials", path)


# ChunkRecord fields of §3.2; a chunk with only these keeps nested keys in metadata and tags alone
_CHUNK_FIELDS = frozenset({
    "id", "content", "content_hash", "memory_type", "embedding", "embedding_model", "tags", "zone", "importance",
    "is_pinned", "decay_score", "tier", "created_at", "accessed_at", "valid_until", "metadata"})


def all_keys(doc: dict[str, Any]) -> set[str]:
    """Every dict key of a bundle, visiting containers only (strings, numbers and embeddings are skipped)."""
    keys: set[str] = set()
    stack: list[Any] = []
    for key, value in doc.items():
        keys.add(key)
        if key == "chunks" and type(value) is list:
            chunks = [c for c in value if type(c) is dict]
            stack.extend(c for c in value if type(c) is list)
            chunk_keys = set().union(*chunks)
            keys |= chunk_keys
            if chunk_keys <= _CHUNK_FIELDS:
                # the common case, in C: only metadata and tags can hold nested keys
                for field in ("metadata", "tags"):
                    stack.extend(v for v in map(dict.get, chunks, repeat(field)) if type(v) is dict or type(v) is list)
            else:
                stack.extend(chunks)
        elif type(value) is dict or type(value) is list:
            stack.append(value)
    while stack:
        node = stack.pop()
        if type(node) is dict:
            keys.update(node)
            stack.extend(v for v in node.values() if type(v) is dict or type(v) is list)
        else:
            stack.extend(v for v in node if type(v) is dict or type(v) is list)
    return keys


def value_marker_in(doc: dict[str, Any], canonical: bytes | None = None) -> bool:
    """Could a string of the bundle (chunk embeddings aside, as in the walk) hold a token? Every
    CREDENTIAL_VALUES match starts with ASCII that JSON writes as is, so a marker search over the bundle's
    JSON without chunk embeddings is a superset of the walk; the walk decides. `canonical`: the bundle's
    §3.6 canonical bytes, when already in hand, are that JSON (keys sorted, manifest.checksum left out,
    so that one string is searched on its own) and save writing the bundle again."""
    text = _json_without_embeddings(doc, canonical)  # UTF-8 bytes: the markers are ASCII, a byte search is faster
    if canonical is not None:
        manifest = doc.get("manifest")
        left_out = manifest.get("checksum") if type(manifest) is dict else None
        if type(left_out) is str:
            text += b"\0" + left_out.encode("utf-8", "surrogatepass")
    if any(m in text for m in _MARKER_BYTES):
        return True
    at = text.find(b"AKIA")
    while at != -1:
        if _AKIA_TAIL_BYTES.match(text, at + 4):
            return True
        at = text.find(b"AKIA", at + 1)
    return False


_MARKER_BYTES = tuple(m.encode("ascii") for m in VALUE_MARKERS)
_AKIA_TAIL_BYTES = re.compile(_AKIA_TAIL.pattern.encode("ascii"))


def _json_without_embeddings(doc: dict[str, Any], written: bytes | None = None) -> bytes:
    """The bundle's JSON text (as json.dumps writes its strings) without the chunks' embedding strings.

    Fast way: orjson writes the whole bundle once and each chunk's embedding is cut out of the text as
    its quoted form, found in order. An ASCII embedding without quote or backslash is written as it is
    (one with a control character is escaped, so its quoted form is not found), so a cut removes one
    whole quoted string with exactly its characters: if a cut lands on another string with the same
    characters, the embedding's own copy stays, with the same markers in it. Anything else (an
    embedding with a quote, a backslash or non-ASCII text, one not found) takes the slow way: copies of
    the chunks without embeddings, written again. `written`: the bundle's JSON text, written already
    (by orjson or json.dumps, in any key order), used instead of writing it once more."""
    chunks = doc.get("chunks")
    embeddings = [c["embedding"] for c in chunks if type(c) is dict and type(c.get("embedding")) is str] \
        if type(chunks) is list else []
    try:
        raw = orjson.dumps(doc) if written is None else written
    except (TypeError, orjson.JSONEncodeError):
        return _json_text(_without_embeddings(doc))
    pieces, pos = [], 0
    for embedding in embeddings:
        if not embedding.isascii() or '"' in embedding or "\\" in embedding:
            return _json_text(_without_embeddings(doc))  # (a control character orjson escapes: not found below)
        text = embedding.encode("ascii")
        key = raw.find(_EMBEDDING_KEY, pos)
        at = key + len(_EMBEDDING_KEY) - 1  # where the value's quote should be
        if key < 0 or not (raw.startswith(text, at + 1) and raw[at + 1 + len(text):at + 2 + len(text)] == b'"'):
            at = raw.find(b'"' + text + b'"', pos)  # not where expected: anywhere after the last cut
            if at < 0:
                return _json_text(_without_embeddings(doc))
        pieces.append(raw[pos:at])
        pos = at + len(text) + 2
    pieces.append(raw[pos:])
    return b'""'.join(pieces)


_EMBEDDING_KEY = b'"embedding":"'  # then the value: a quote after a colon always opens a string


def _without_embeddings(doc: dict[str, Any]) -> dict[str, Any]:
    chunks = doc.get("chunks")
    if type(chunks) is list:
        doc = dict(doc, chunks=[{k: v for k, v in c.items() if k != "embedding"} if type(c) is dict else c
                                for c in chunks])
    return doc


def _json_text(doc: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(doc, default=str)  # the text json.dumps writes, at C speed
    except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits, a lone surrogate, a non-string key
        try:
            return json.dumps(doc, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        except ValueError:
            return b"".join(_MARKER_BYTES)  # not writable as JSON (a cycle, say): let the walk look


def suspicious(doc: dict[str, Any], canonical: bytes | None = None) -> bool:
    """The fast prefilter: False only when the walk cannot find anything (`canonical`: value_marker_in)."""
    return any(credential_key(k) for k in all_keys(doc) if isinstance(k, str)) or value_marker_in(doc, canonical)
