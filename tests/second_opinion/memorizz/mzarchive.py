"""MemoRizz Memory Archive v1: the file contract (canonical JSON, sealing, validation).

Written from the spec text alone (memorizz-archive-v1.md). Plain functions, no classes: the
archive is a dict, the validator returns a list of problems (empty when the archive is valid).

Switchable bugs (for the second-opinion exercise) are read once, at import, from the
environment variable SECOND_OPINION_BUGS (comma-separated names, see bugs.json).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from datetime import datetime, timedelta
from typing import Any

BUGS = frozenset(b.strip() for b in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if b.strip())


def bug(name: str) -> bool:
    return name in BUGS


FORMAT = "memorizz.memory"
VERSION = 1
ENVELOPE_FIELDS = ("format", "version", "taxonomy", "manifest", "stores", "integrity")

# Store key -> taxonomy category, in the spec's order.
TAXONOMY: dict[str, str] = {
    "personas": "long_term.semantic",
    "entity_memory": "long_term.semantic",
    "knowledge_base": "long_term.semantic",
    "toolbox": "long_term.procedural",
    "workflow_memory": "long_term.procedural",
    "skillbox": "long_term.procedural",
    "conversation_memory": "long_term.episodic",
    "summaries": "long_term.episodic",
    "tool_log": "long_term.episodic",
    "short_term_memory": "short_term",
    "semantic_cache": "short_term",
    "shared_memory": "coordination",
    "agents": "agent_configuration",
}
STORE_KEYS = tuple(TAXONOMY)

# The natural identity field the spec names per store ("such as agent_id for agents, persona_id for
# personas, and summary_id for summaries"); only the named ones are enforced (README: readings).
NATURAL_ID = {"agents": "agent_id", "personas": "persona_id", "summaries": "summary_id"}

MANIFEST_REQUIRED = ("created_at", "memorizz_version", "source_provider", "scope", "counts",
                     "record_count", "includes", "warnings")

# The default archive limits; a deployment (a transport with smaller requests) may lower them.
MAX_BYTES = int(os.environ.get("MEMORIZZ_ARCHIVE_MAX_BYTES") or 50 * 1024 * 1024)
MAX_RECORDS = int(os.environ.get("MEMORIZZ_ARCHIVE_MAX_RECORDS") or 100_000)
MAX_ID_CHARS = 512
MAX_ERRORS = 200  # the validator stops collecting after this many problems

_HEX64 = re.compile(r"[0-9a-f]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class NotWellFormed(ValueError):
    """The bytes are not a JSON document this format accepts (not UTF-8, NaN/Infinity, too deep...)."""


# ---------------------------------------------------------------------------------------------
# Strict parsing


def _reject_constant(name: str) -> Any:
    raise NotWellFormed(f"{name} is not allowed (no NaN or Infinity)")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotWellFormed(f"number {text[:40]} overflows to Infinity")
    return value


def _allow_constant(name: str) -> Any:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def parse_json(raw: bytes) -> Any:
    """Strict JSON: UTF-8 only (no BOM), no NaN/Infinity (nor numbers that overflow to it)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotWellFormed(f"not UTF-8: {exc}") from None
    if text.startswith("\ufeff"):
        raise NotWellFormed("a byte order mark is not allowed")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float)
    except RecursionError:
        raise NotWellFormed("JSON nested too deeply") from None
    except NotWellFormed:
        raise
    except ValueError as exc:  # JSONDecodeError, int too long, ...
        raise NotWellFormed(f"not JSON: {exc}") from None


# ---------------------------------------------------------------------------------------------
# Canonical JSON (the bytes the checksum covers)


def js_number(value: float) -> str:
    """A float as the shared Python/browser representation (ECMAScript Number::toString)."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError("NaN and Infinity have no canonical form")
    if value == 0:
        return "0"  # negative zero is 0
    sign = "-" if value < 0 else ""
    text = repr(abs(value))  # shortest round-trip digits
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    scale = exponent - len(frac_part)  # value = int(digits) * 10**scale
    stripped = digits.rstrip("0")
    scale += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + scale  # value = 0.digits * 10**n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    # Literal Unicode, but a lone surrogate cannot be UTF-8: escape it as a browser does.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _canonical(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if bug("canonical_python_floats"):
            if math.isnan(value) or math.isinf(value):
                raise ValueError("NaN and Infinity have no canonical form")
            out.append(float.__repr__(value))
        else:
            out.append(js_number(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key in sorted(value):
            if not isinstance(key, str):
                raise TypeError("object keys must be strings")
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _canonical(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _canonical(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")


def _needs_slow_path(value: Any) -> bool:
    """True when value holds a float, a lone surrogate or a non-string key: json.dumps alone
    would not write those in the canonical form."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if not isinstance(key, str) or _SURROGATE.search(key):
                    return True
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float):
            return True
        elif isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif node is not None and not isinstance(node, (bool, int)):
            return True
    return False


def canonical_bytes(value: Any) -> bytes:
    """Sorted keys, compact separators, literal Unicode, JS number form, UTF-8."""
    if not _needs_slow_path(value):  # same bytes, written by the C encoder
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    out: list[str] = []
    _canonical(value, out)
    return "".join(out).encode("utf-8")


def body_bytes(archive: dict[str, Any]) -> bytes:
    """The canonical bytes the checksum covers: every field except integrity."""
    return canonical_bytes({k: v for k, v in archive.items() if k != "integrity"})


def compute_digest(archive: dict[str, Any], body: bytes | None = None) -> str:
    return hashlib.sha256(body_bytes(archive) if body is None else body).hexdigest()


def seal(archive: dict[str, Any]) -> dict[str, Any]:
    """Set integrity from the other fields (the archive is modified and returned)."""
    archive.pop("integrity", None)
    archive["integrity"] = {"algorithm": "sha256", "digest": compute_digest(archive)}
    return archive


# ---------------------------------------------------------------------------------------------
# Validation


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _utc_timestamp_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be a nonempty string (an ISO 8601 UTC timestamp)"
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return f"{value[:60]!r} is not an ISO 8601 timestamp"
    if parsed.tzinfo is not None and parsed.utcoffset() != timedelta(0):
        return f"{value[:60]!r} is not in UTC"
    return None


def validate_archive(archive: Any, *, check_digest: bool = True, body: bytes | None = None) -> list[str]:
    """Every problem found (path: message), at most MAX_ERRORS; [] means valid. `body`: the
    archive's canonical bytes without integrity, when the caller has them already."""
    errors: list[str] = []

    def err(path: str, message: str) -> None:
        if len(errors) < MAX_ERRORS:
            errors.append(f"{path}: {message}" if path else message)

    if not isinstance(archive, dict):
        return ["archive: must be a JSON object"]

    for field in ENVELOPE_FIELDS:
        if field not in archive:
            err(field, "missing envelope field")
    if not bug("envelope_unknown_field_accepted"):
        for field in archive:
            if field not in ENVELOPE_FIELDS:
                err(str(field)[:80], "unknown envelope field (an archive has exactly six top-level fields)")

    if "format" in archive and archive["format"] != FORMAT:
        err("format", f"must be {FORMAT!r}")
    if "version" in archive:
        version = archive["version"]
        if not _is_int(version):
            err("version", "must be the integer 1")
        elif version != VERSION:
            err("version", f"unsupported archive version {version}")

    taxonomy = archive.get("taxonomy")
    if "taxonomy" in archive:
        if not isinstance(taxonomy, dict):
            err("taxonomy", "must be an object")
        elif bug("taxonomy_values_unchecked"):
            if set(taxonomy) != set(TAXONOMY):
                err("taxonomy", "must map exactly the 13 store keys")
        else:
            for key, category in TAXONOMY.items():
                if key not in taxonomy:
                    err(f"taxonomy.{key}", "missing store key")
                elif taxonomy[key] != category:
                    err(f"taxonomy.{key}", f"must be {category!r}")
            for key in taxonomy:
                if key not in TAXONOMY:
                    err(f"taxonomy.{str(key)[:80]}", "unknown store key")

    stores = archive.get("stores")
    store_sizes: dict[str, int] = {}
    total_records = 0
    if "stores" in archive:
        if not isinstance(stores, dict):
            err("stores", "must be an object")
        else:
            for key in STORE_KEYS:
                if key not in stores:
                    err(f"stores.{key}", "missing store key")
            for key in stores:
                if key not in TAXONOMY:
                    err(f"stores.{str(key)[:80]}", "unknown store key")
            for key in STORE_KEYS:
                records = stores.get(key)
                if key not in stores:
                    continue
                if not isinstance(records, list):
                    err(f"stores.{key}", "must be an array of records")
                    continue
                store_sizes[key] = len(records)
                total_records += len(records)
            too_many = total_records >= MAX_RECORDS if bug("record_limit_off_by_one") else total_records > MAX_RECORDS
            if too_many:
                err("stores", f"{total_records} records exceed the limit of {MAX_RECORDS}")
                return errors  # do not walk an oversized archive
            for key in STORE_KEYS:
                if isinstance(stores.get(key), list):
                    _validate_records(key, stores[key], err)

    manifest = archive.get("manifest")
    if "manifest" in archive:
        _validate_manifest(manifest, store_sizes, isinstance(stores, dict), err)

    integrity = archive.get("integrity")
    if "integrity" in archive:
        if not isinstance(integrity, dict):
            err("integrity", "must be an object")
        else:
            for key in integrity:
                if key not in ("algorithm", "digest"):
                    err(f"integrity.{str(key)[:80]}", "unknown field")
            if integrity.get("algorithm") != "sha256":
                err("integrity.algorithm", "must be 'sha256'")
            digest = integrity.get("digest")
            if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
                err("integrity.digest", "must be 64 lowercase hexadecimal characters")
            elif check_digest and not errors:
                try:
                    actual = compute_digest(archive, body)
                except (ValueError, TypeError, RecursionError) as exc:
                    err("integrity.digest", f"cannot compute the canonical form: {exc}")
                else:
                    if actual != digest:
                        err("integrity.digest", f"checksum mismatch: the content hashes to {actual}")
    return errors


def _validate_records(key: str, records: list[Any], err: Any) -> None:
    seen: set[str] = set()
    natural = NATURAL_ID.get(key)
    for i, record in enumerate(records):
        path = f"stores.{key}[{i}]"
        if not isinstance(record, dict):
            err(path, "a record must be an object with exactly id and data")
            continue
        extra = [k for k in record if k not in ("id", "data")]
        if extra or "id" not in record or "data" not in record:
            err(path, "a record must have exactly the fields id and data")
        rid = record.get("id")
        if not isinstance(rid, str) or not rid:
            err(f"{path}.id", "must be a nonempty string")
            rid = None
        elif len(rid) > MAX_ID_CHARS:
            err(f"{path}.id", f"{len(rid)} characters exceed the limit of {MAX_ID_CHARS}")
        elif rid in seen:
            err(f"{path}.id", f"duplicate id {rid[:80]!r} in store {key}")
        else:
            seen.add(rid)
        data = record.get("data")
        if "data" in record and not isinstance(data, dict):
            err(f"{path}.data", "must be an object")
            continue
        if rid is None or not isinstance(data, dict):
            continue
        for field in ("id", "_id"):
            if field in data and data[field] != rid:
                err(f"{path}.data.{field}", "must match the enclosing id")
        if natural and natural in data and not bug("natural_id_unchecked") and data[natural] != rid:
            err(f"{path}.data.{natural}", "must agree with the enclosing id")


def _validate_manifest(manifest: Any, store_sizes: dict[str, int], stores_ok: bool, err: Any) -> None:
    if not isinstance(manifest, dict):
        err("manifest", "must be an object")
        return
    for field in MANIFEST_REQUIRED:
        if field not in manifest:
            err(f"manifest.{field}", "missing required field")
    if "created_at" in manifest:
        problem = _utc_timestamp_problem(manifest["created_at"])
        if problem:
            err("manifest.created_at", problem)
    for field in ("memorizz_version", "source_provider"):
        if field in manifest and not isinstance(manifest[field], str):
            err(f"manifest.{field}", "must be a string")
    for field in ("scope", "includes"):
        if field in manifest and not isinstance(manifest[field], dict):
            err(f"manifest.{field}", "must be an object")
    scope = manifest.get("scope")
    if isinstance(scope, dict) and "user_scoped" in scope and not isinstance(scope["user_scoped"], bool):
        err("manifest.scope.user_scoped", "must be a boolean")
    if "warnings" in manifest and not isinstance(manifest["warnings"], list):
        err("manifest.warnings", "must be an array")
    for field in ("omitted_fields", "external_references"):
        if field in manifest and not isinstance(manifest[field], list):
            err(f"manifest.{field}", "must be an array when present")
    counts = manifest.get("counts")
    if "counts" in manifest:
        if not isinstance(counts, dict):
            err("manifest.counts", "must be an object")
        else:
            for key in STORE_KEYS:
                if key not in counts:
                    if not bug("counts_omit_zero_stores"):
                        err(f"manifest.counts.{key}", "missing (counts lists every store, including zeros)")
                    continue
                value = counts[key]
                if not _is_int(value) or value < 0:
                    err(f"manifest.counts.{key}", "must be a non-negative integer")
                elif stores_ok and key in store_sizes and value != store_sizes[key]:
                    err(f"manifest.counts.{key}", f"is {value} but the store holds {store_sizes[key]} records")
            for key in counts:
                if key not in TAXONOMY:
                    err(f"manifest.counts.{str(key)[:80]}", "unknown store key")
    if "record_count" in manifest:
        record_count = manifest["record_count"]
        if not _is_int(record_count) or record_count < 0:
            err("manifest.record_count", "must be a non-negative integer")
        else:
            if isinstance(counts, dict) and all(_is_int(v) for v in counts.values()):
                if record_count != sum(counts.values()):
                    err("manifest.record_count", "must be the sum of the per-store counts")
            if stores_ok and len(store_sizes) == len(STORE_KEYS) and record_count != sum(store_sizes.values()):
                err("manifest.record_count", f"is {record_count} but the stores hold {sum(store_sizes.values())} records")
