"""Validation of AI Memory Portability Standard v0.1 exports (stdlib only).

Three layers, all of which must pass before an import touches the store:

1. strict JSON parsing (UTF-8, no BOM, no NaN/Infinity, no duplicate object keys);
2. the spec's JSON Schema (ai-memory-portability.v0.1.json, copied verbatim from the spec),
   checked by a small validator for the subset of JSON Schema 2020-12 that the schema uses:
   type, required, properties, items, $ref (local), enum, const, maxLength, minimum, maximum,
   format (date-time per RFC 3339, uri per RFC 3986); annotations are ignored;
3. the rules stated in prose: provenance (inferred needs artifact_ids and an extractor,
   observed needs artifact_ids), unique atom/artifact ids, no embeddings as atom text.

Bugs (see bugs.json) are passed in as a set of names; with an empty set this is correct.
"""

from __future__ import annotations

import calendar
import json
import math
import re
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).with_name("ai-memory-portability.v0.1.json")
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
EXPORT_VERSION = SCHEMA["properties"]["export_version"]["const"]

# Minimum number of artifact_ids each derivation needs (spec "Provenance rules").
MIN_SOURCES = {"stated": 0, "inferred": 1, "observed": 1}


class Invalid(Exception):
    """The document is refused; `errors` lists every problem found, each with its JSON pointer."""

    def __init__(self, errors: list[dict[str, str]]):
        super().__init__("; ".join(f"{e['path'] or '/'}: {e['message']}" for e in errors[:20]))
        self.errors = errors


# --------------------------------------------------------------------------- strict JSON

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text} overflows a double")
    return value


def parse_json(raw: bytes) -> Any:
    """Parse a JSON text strictly (RFC 8259); raises Invalid with a single well-formedness error."""
    try:
        if raw.startswith(b"\xef\xbb\xbf"):
            raise ValueError("byte order mark before the JSON text")
        text = raw.decode("utf-8")  # strict: invalid UTF-8 is refused
        return json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise Invalid([{"path": "", "message": "not well-formed JSON: nesting too deep"}]) from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise Invalid([{"path": "", "message": f"not well-formed JSON: {exc}"}]) from None


# --------------------------------------------------------------------------- formats

_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)


def is_date_time(value: str) -> bool:
    """RFC 3339 date-time (section 5.6): full-date "T" full-time, an offset is mandatory."""
    m = _DATE_TIME.fullmatch(value)
    if not m:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12:
        return False
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    off = 0
    if not m.group(7):
        oh, om = int(m.group(9)), int(m.group(10))
        if oh > 23 or om > 59:
            return False
        off = (oh * 60 + om) * (1 if m.group(8) == "+" else -1)
    if second == 60:  # a leap second only ever falls on 23:59:60 UTC
        if (hour * 60 + minute - off) % 1440 != 23 * 60 + 59:
            return False
    return True


def _lax_date_time(value: str) -> bool:
    # bug lax_datetime: what many Python services do, and what RFC 3339 is not.
    from datetime import datetime

    try:
        datetime.fromisoformat(value)
        return True
    except ValueError:
        return False


_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*",
    re.ASCII,
)


def is_uri(value: str) -> bool:
    """RFC 3986 URI (absolute: a scheme is required); at most one fragment delimiter."""
    return bool(_URI.fullmatch(value)) and value.count("#") <= 1


# --------------------------------------------------------------------------- schema subset

def _is_type(value: Any, name: str, bugs: frozenset[str]) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "number":
        if "confidence_accepts_bool" in bugs:
            return isinstance(value, (int, float))
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise ValueError(f"schema uses unknown type {name!r}")


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema means it (true is not 1, 1 is 1.0)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _ptr(path: str, key: str | int) -> str:
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def schema_errors(instance: Any, schema: dict[str, Any], bugs: frozenset[str] = frozenset(),
                  path: str = "", root: dict[str, Any] | None = None) -> list[dict[str, str]]:
    root = root if root is not None else schema
    errors: list[dict[str, str]] = []

    def err(message: str, at: str = path) -> None:
        errors.append({"path": at, "message": message})

    if "$ref" in schema:
        errors += schema_errors(instance, _resolve(schema["$ref"], root), bugs, path, root)

    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(instance, n, bugs) for n in names):
            err(f"expected {' or '.join(names)}, got {_describe(instance)}")
            return errors  # the other keywords would only repeat the same cause

    if "const" in schema and not _json_equal(instance, schema["const"]):
        err(f"must be {json.dumps(schema['const'])}, got {_describe(instance)}")

    if "enum" in schema and not any(_json_equal(instance, v) for v in schema["enum"]):
        err(f"must be one of {', '.join(json.dumps(v) for v in schema['enum'])}, got {_describe(instance)}")

    if isinstance(instance, str):
        if "maxLength" in schema:
            # JSON Schema counts characters (Unicode code points), which is len() of a str.
            length = len(instance.encode("utf-8")) if "text_length_in_bytes" in bugs else len(instance)
            if length > schema["maxLength"]:
                err(f"longer than {schema['maxLength']} characters ({length})")
        fmt = schema.get("format")
        if fmt == "date-time":
            ok = _lax_date_time(instance) if "lax_datetime" in bugs else is_date_time(instance)
            if not ok:
                err(f"not an RFC 3339 date-time: {instance!r}")
        elif fmt == "uri" and not is_uri(instance):
            err(f"not an absolute URI (RFC 3986): {instance!r}")

    if isinstance(instance, (int, float)) and not isinstance(instance, bool) or (
        "confidence_accepts_bool" in bugs and isinstance(instance, bool)
    ):
        if "minimum" in schema and instance < schema["minimum"]:
            err(f"less than the minimum {schema['minimum']}: {instance}")
        if "maximum" in schema and instance > schema["maximum"]:
            err(f"greater than the maximum {schema['maximum']}: {instance}")

    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                err(f"required property {key!r} is missing")
        for key, sub in schema.get("properties", {}).items():
            if key in instance:
                errors += schema_errors(instance[key], sub, bugs, _ptr(path, key), root)

    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            errors += schema_errors(item, schema["items"], bugs, _ptr(path, i), root)

    return errors


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- prose rules

def provenance_errors(atom: dict[str, Any], index: int, bugs: frozenset[str] = frozenset()) -> list[dict[str, str]]:
    """Spec "Provenance rules" for one schema-valid atom."""
    errors: list[dict[str, str]] = []
    prov = atom["provenance"]
    derivation = prov["derivation"]
    at = f"/atoms/{index}/provenance"
    need = MIN_SOURCES[derivation]
    if need:
        ids = prov.get("artifact_ids")
        if "inferred_empty_artifact_ids" in bugs:
            missing = ids is None
        else:
            missing = not ids
        if missing:
            errors.append({"path": f"{at}/artifact_ids",
                           "message": f"derivation {derivation!r} requires artifact_ids (at least one)"})
    if derivation == "inferred" and not (prov.get("extractor") or "").strip():
        errors.append({"path": f"{at}/extractor", "message": "derivation 'inferred' requires an extractor"})
    return errors


def _looks_like_embedding(text: str) -> bool:
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    return (isinstance(value, list) and len(value) >= 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))


def document_errors(doc: Any, bugs: frozenset[str] = frozenset(), *, provenance: bool = True) -> list[dict[str, str]]:
    """Every reason to refuse `doc` (already parsed). Empty list: the export is acceptable."""
    errors = schema_errors(doc, SCHEMA, bugs)
    if errors:
        return errors
    seen: set[str] = set()
    for i, atom in enumerate(doc["atoms"]):
        if atom["atom_id"] in seen:
            errors.append({"path": f"/atoms/{i}/atom_id", "message": f"duplicate atom_id {atom['atom_id']!r}"})
        seen.add(atom["atom_id"])
        if _looks_like_embedding(atom["text"]):
            errors.append({"path": f"/atoms/{i}/text",
                           "message": "atom text is a vector embedding, not a human-readable sentence"})
        if provenance:
            errors += provenance_errors(atom, i, bugs)
    seen = set()
    for i, art in enumerate(doc["artifacts"]):
        if art["artifact_id"] in seen:
            errors.append({"path": f"/artifacts/{i}/artifact_id",
                           "message": f"duplicate artifact_id {art['artifact_id']!r}"})
        seen.add(art["artifact_id"])
    return errors
