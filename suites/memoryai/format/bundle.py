"""MemoryAI Protocol v1: constants, canonical serialisation, checksum, embeddings, HTTP routes."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import struct
from decimal import Decimal
from typing import Any

import orjson
from memconform.core.orjson_floats import NotFinite, python_floats
from memconform.suites.memoryai.detect import detect as detect_bundle
from memconform.targets.base import Route

SUITE = "memoryai"
FORMAT = "memoryai-bundle"
MAX_VERSION = 1
RECORD_SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
SCOPES = ("full", "dna_only", "since")
ZONES = ("standard", "important", "critical", "ephemeral")
TIERS = ("hot", "warm", "cold")
CORE_TYPES = ("fact", "episodic", "goal", "error", "preference", "decision", "identity", "pitfall", "procedure", "life_event")
DNA_TYPES = frozenset({"preference", "decision", "identity", "pitfall", "procedure"})
DNA_ZONES = frozenset({"critical", "important"})
# errata E3: `_kind` of an NDJSON stream line -> the bundle section it belongs to
STREAM_KINDS = {
    **{s: s for s in RECORD_SECTIONS},
    "chunk": "chunks", "memory_edge": "memory_edges", "edge": "memory_edges", "entity": "entities",
    "l2_session": "l2_sessions", "mood_state": "mood_states", "mood": "mood_states", "agent": "agents",
    "header": "envelope", "envelope": "envelope", "manifest": "envelope", "bundle": "envelope", "meta": "envelope",
    "footer": "trailer", "trailer": "trailer", "end": "trailer", "done": "trailer", "summary": "trailer",
}

ROUTES: dict[str, Route] = {
    "export": Route("POST", "/v1/brain/export"),
    "export_stream": Route("POST", "/v1/brain/export/stream", response="ndjson"),
    "import_bundle": Route("POST", "/v1/brain/import"),
    "import_file": Route("POST", "/v1/brain/import/file", body="multipart"),
    "spec": Route("GET", "/v1/spec", body="none", response="text"),
    # not in the spec: optional hooks a target may offer so DNA protection and deletion can be tested
    "decay": Route("POST", "/v1/x-memconform/decay"),
    "delete_chunk": Route("POST", "/v1/x-memconform/delete"),
    "delete_chunks": Route("POST", "/v1/x-memconform/delete-many"),  # the run's cleanup, many at once
}

# Readings of ambiguous sentences: each is explained in suites/memoryai/errata.md.


def canonical_bytes(bundle: dict[str, Any], unicode: str = "literal") -> bytes:
    """§3.6: the bundle without manifest.checksum, sorted keys, no whitespace, UTF-8 (as Python's
    json.dumps writes it; the literal reading through orjson where its bytes are the same)."""
    body = dict(bundle)
    manifest = body.get("manifest")
    if isinstance(manifest, dict) and "checksum" in manifest:
        body["manifest"] = {k: v for k, v in manifest.items() if k != "checksum"}
    if unicode == "literal" and (fast := _literal_by_orjson(body)) is not None:
        return fast
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=(unicode == "ascii"),
                      allow_nan=False).encode("utf-8")


def canonical_value_bytes(value: Any) -> bytes:
    """One JSON value as canonical_bytes writes it inside a bundle (the literal reading): a bundle read
    in windows is written a slice of records at a time (windows.py). ValueError for NaN or infinity."""
    fast = _literal_by_orjson(value)
    if fast is not None:
        return fast
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


# orjson writes strings, keys (sorted by code point), integers and most floats byte for byte as
# json.dumps(ensure_ascii=False, separators=(",", ":")) does (tests/test_memoryai_canonical_fast.py);
# floats of magnitude below 1e-4 it writes its own way (0.00001, 1e-7 for Python's 1e-05, 1e-07),
# so those are written by Python's repr and put in place as fragments (core/orjson_floats.py).


def _literal_by_orjson(body: Any) -> bytes | None:
    """The literal canonical bytes at orjson's speed, or None where only json.dumps can say (a NaN or
    infinity, which json.dumps refuses; an integer past 64 bits, a lone surrogate or a key that is no
    string, which orjson refuses)."""
    try:
        return orjson.dumps(python_floats(body), option=orjson.OPT_SORT_KEYS)
    except (NotFinite, TypeError, orjson.JSONEncodeError):
        return None


def checksum(bundle: dict[str, Any], unicode: str = "literal", numbers: str = "python") -> str:
    data = canonical_bytes(bundle, unicode) if numbers == "python" else canonical_bytes_es(bundle, unicode)
    return hashlib.sha256(data).hexdigest()


def es_number(value: float) -> str:
    """A finite float as ECMAScript's Number::toString (JSON.stringify) writes it: 1, 0.00001, 1e+21."""
    if value == 0:
        return "0"
    digits, exponent = Decimal(repr(value)).normalize().as_tuple()[1:]
    text = "".join(map(str, digits))
    k, n = len(text), len(text) + int(exponent)
    sign = "-" if value < 0 else ""
    if k <= n <= 21:
        return sign + text + "0" * (n - k)
    if 0 < n <= 21:
        return sign + text[:n] + "." + text[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + text
    e = n - 1
    mantissa = text if k == 1 else text[0] + "." + text[1:]
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def _es_json(value: Any, ascii_only: bool, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        # JavaScript sorts keys by UTF-16 code units
        for i, key in enumerate(sorted(value, key=lambda k: str(k).encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=ascii_only))
            out.append(":")
            _es_json(value[key], ascii_only, out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _es_json(item, ascii_only, out)
        out.append("]")
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("NaN or Infinity has no JSON form")
        out.append(es_number(value))
    else:
        out.append(json.dumps(value, ensure_ascii=ascii_only))


def canonical_bytes_es(bundle: dict[str, Any], unicode: str = "literal") -> bytes:
    """§3.6 as a JavaScript implementer writes it: the same, with JSON.stringify's numbers and key order."""
    body = dict(bundle)
    manifest = body.get("manifest")
    if isinstance(manifest, dict) and "checksum" in manifest:
        body["manifest"] = {k: v for k, v in manifest.items() if k != "checksum"}
    out: list[str] = []
    _es_json(body, unicode == "ascii", out)
    return "".join(out).encode("utf-8")


def has_float(value: Any) -> bool:
    """Does any number of the document print differently under the two number readings?"""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, float):
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


CHECKSUM_READINGS = {  # reading name -> (unicode, numbers)
    "utf8-literal": ("literal", "python"),
    "ascii-escapes": ("ascii", "python"),
    "utf8-literal+ecmascript-numbers": ("literal", "ecmascript"),
    "ascii-escapes+ecmascript-numbers": ("ascii", "ecmascript"),
}


def checksum_readings(unicode: str = "either", numbers: str = "either") -> list[str]:
    """The §3.6 readings the options accept, literal UTF-8 with Python numbers first."""
    return [name for name, (u, n) in CHECKSUM_READINGS.items()
            if unicode in ("either", u) and numbers in ("either", n)]


def checksum_reading_of(bundle: dict[str, Any], unicode: str = "either", numbers: str = "either") -> str | None:
    """Which accepted reading of §3.6 the bundle's checksum follows, or None."""
    claimed = bundle.get("manifest", {}).get("checksum")
    floats = None
    for name in checksum_readings(unicode, numbers):
        u, n = CHECKSUM_READINGS[name]
        if n == "ecmascript":
            floats = has_float(bundle) if floats is None else floats
            if not floats and numbers == "either":
                continue  # prints as the Python reading did
        if checksum(bundle, u, n) == claimed:
            return name
    return None


def checksum_matches(bundle: dict[str, Any], unicode: str, numbers: str = "either") -> bool:
    return checksum_reading_of(bundle, unicode, numbers) is not None


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in text (JSON can escape one, UTF-8 cannot write it), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def encode_embedding(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def decode_embedding(text: str) -> bytes:
    """Strict base64 decode; raises ValueError on bad input."""
    try:
        # strict mode (3.11+): only the alphabet, padding only at the end; one C pass, no regex first
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not base64: {exc}") from None


def decoded_sizes(texts: list[str]) -> list[int | ValueError]:
    """The byte length of each strict-base64 text, or why it does not decode (`decode_embedding`).
    A text without padding whose length is a multiple of 4 and whose characters are all in the
    alphabet is strict base64 (every group of four decodes to three bytes): when every text is one,
    the sizes follow without decoding. Otherwise each is decoded, one by one."""
    if all(len(t) % 4 == 0 for t in texts) and all(map(_only_base64_alphabet, texts)):
        return [len(t) // 4 * 3 for t in texts]
    sizes: list[int | ValueError] = []
    for text in texts:
        try:
            sizes.append(len(decode_embedding(text)))
        except ValueError as exc:
            sizes.append(exc)
    return sizes


_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _only_base64_alphabet(text: str) -> bool:
    """Is every character of the text one of base64's 64 (no padding)? One C pass deleting the alphabet,
    several times faster than decoding to learn the same (text by text: no copy of all of them at once)."""
    return text.isascii() and not text.encode("ascii").translate(None, _BASE64_ALPHABET)  # strict a2b_base64 refuses the rest


def embedding_floats(text: str) -> tuple[float, ...]:
    raw = decode_embedding(text)
    return struct.unpack(f"<{len(raw) // 4}f", raw[: len(raw) - len(raw) % 4])


def is_dna(chunk: dict[str, Any], rule: str = "union") -> bool:
    if chunk.get("memory_type") in DNA_TYPES:
        return True
    if rule == "type-only":
        return False
    return chunk.get("zone") in DNA_ZONES or chunk.get("is_pinned") is True


def detect(doc: Any) -> bool:
    """A MemoryAI bundle (suites/memoryai/detect.py, which `validate` asks without loading the suite; defined
    here, its windows.py is found beside it)."""
    return detect_bundle(doc)


def seal(bundle: dict[str, Any], unicode: str = "literal", numbers: str = "python") -> dict[str, Any]:
    """Fill manifest.counts and manifest.checksum, as a producer must."""
    manifest = bundle.setdefault("manifest", {})
    manifest["counts"] = {s: len(bundle.get(s, [])) for s in RECORD_SECTIONS if isinstance(bundle.get(s), list)}
    manifest.pop("checksum", None)
    manifest["checksum"] = checksum(bundle, unicode, numbers)
    return bundle
