"""AI Memory Portability Standard v0.1: the published schema, a validator, and the prose rules.

The schema is kept byte-for-byte as published (fixtures/amps/schema.json). The prose rules the
schema cannot say (provenance, time, cross-record references) are helpers here; every reading of
ambiguous prose is an option of suites/amps/options.py, explained in suites/amps/errata.md.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from memconform.kit.fixtures_loader import fixture_root
from memconform.kit.shared_rules import now_iso as now_iso  # re-exported: the suite's clock
from memconform.kit.windows import NotWindowable, computed
from memconform.suites.amps.detect import detect as detect_export
from memconform.suites.amps.format.rules import RULES, Problem, Rule, Scan, scan
from memconform.suites.amps.format.schema_sites import format_sites_of
from memconform.suites.amps.format.string_formats import (
    PLAIN_DATE_TIME_PATTERN,
    PLAIN_URI_PATTERN,
    is_date_time,
    is_uri,
    parse_date_time,
    plain_date_times,
)

SUITE = "amps"
SPEC = "AI Memory Portability Standard v0.1"
EXPORT_VERSION = "0.1.0"
SENSITIVITIES = ("public", "private", "medical", "financial", "legal")
ATOM_KINDS = ("fact", "preference", "relationship", "belief", "goal", "skill")
ARTIFACT_KINDS = ("chat", "document", "journal", "voice", "message", "email", "calendar")
DERIVATIONS = ("stated", "inferred", "observed")
TEXT_MAX = 500


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads((fixture_root() / "amps" / "schema.json").read_text("utf-8"))


@functools.cache
def format_checker() -> Any:
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("date-time")(is_date_time)
    checker.checks("uri")(is_uri)
    return checker


@functools.cache
def validator() -> Any:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema(), format_checker=format_checker())


@functools.cache
def format_sites() -> tuple[tuple[tuple[str | None, ...], str], ...] | None:
    return format_sites_of(schema(), set(FORMAT_CHECKS))


def json_path(parts: Any) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(p)) else f"[{json.dumps(p)}]")
    return out


@functools.cache
def fast_validator() -> Any:
    """jsonschema-rs on the same schema with the same format rules: it says yes or no ten times faster
    than jsonschema; jsonschema still writes every error message, so reports read the same."""
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(
        schema(), formats={"date-time": is_date_time, "uri": is_uri}, validate_formats=True)


@functools.cache
def structure_validator() -> Any:
    """jsonschema-rs on the same schema, formats not asserted: `formats_hold` judges them in bulk."""
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(schema(), validate_formats=False)


FORMAT_CHECKS = {"date-time": is_date_time, "uri": is_uri}


def schema_surely_valid(doc: Any) -> bool:
    """True when the published schema (with our format checker) accepts doc; False means "ask
    jsonschema for the errors". Where the schema says where its formats apply (`format_sites`), the
    structure is judged in Rust and the format strings in bulk, each distinct string once; else
    jsonschema-rs calls back into Python for every formatted string."""
    sites = format_sites()
    if sites is None:
        return bool(fast_validator().is_valid(doc))
    if not structure_validator().is_valid(doc):
        return False
    return all(formats_hold(name, values_at(doc, steps)) for steps, name in sites)


def formats_hold(name: str, values: list[str]) -> bool:
    """Does every string hold the format? Date-times in the common shape are passed by one match over
    all of them; any other string is judged by the format's own check."""
    distinct = set(values)
    if name == "date-time" and plain_date_times(distinct):
        return True
    check = FORMAT_CHECKS[name]
    return all(check(value) for value in distinct)


def values_at(doc: Any, steps: tuple[str | None, ...]) -> list[str]:
    """The strings at one place of a document: property names, None for every item of an array (as
    `properties` and `items` apply: only to an object, only to an array)."""
    level = [doc]
    for step in steps:
        kinds = set(map(type, level))  # when every node is of the kind the step takes, the step runs in C
        if step is None:
            level = (list(itertools.chain.from_iterable(level)) if kinds == {list}
                     else [item for node in level if type(node) is list for item in node])
        elif kinds == {dict}:  # absent keys read as None, which no later step takes and no string is
            level = list(map(dict.get, level, itertools.repeat(step)))
        else:
            level = [node[step] for node in level if type(node) is dict and step in node]
    return level if set(map(type, level)) <= {str} else [value for value in level if type(value) is str]


def schema_errors(doc: Any) -> list[tuple[str, str, Any]]:
    """(JSON path, message, offending value) for every schema error, in document order."""
    windowed = computed(doc, "schema_errors")
    if windowed is not None:  # a file read in windows (suites/amps/format/windows.py): judged as it was read
        return list(windowed)
    return [(json_path(parts), message, instance) for parts, message, instance in schema_error_entries(doc)]


SchemaError = tuple[list[Any], str, Any]  # (the path's parts, message, offending value)


def error_order(error: SchemaError) -> tuple[list[str], str]:
    """The order schema errors are reported in (by path, as text, then message)."""
    return list(map(str, error[0])), error[1]


def schema_error_entries(doc: Any) -> list[SchemaError]:
    """Every schema error as (path parts, message, value), in report order."""
    if schema_surely_valid(doc):  # jsonschema walks 100,000 atoms in ~15 s; jsonschema-rs in under 1 s
        return []
    return sorted(((list(e.absolute_path), e.message, e.instance) for e in validator().iter_errors(doc)),
                  key=error_order)


@functools.cache
def _section_schema(section: str) -> dict[str, Any] | None:
    """The published schema's subschema of one top-level array (`properties.<section>`), with the
    definitions its references name; None when the schema has no such plain subschema."""
    root = schema()
    sub = root.get("properties", {}).get(section)
    if not isinstance(sub, dict) or sub.get("type") != "array":
        return None
    return {**{k: root[k] for k in ("$schema", "$defs") if k in root}, **sub}


@functools.cache
def _section_structure(section: str) -> tuple[Any, Any] | None:
    """(jsonschema-rs on the structure, the format sites) for one section's subschema; None when the
    schema has no plain subschema for it. The pure-Python jsonschema (an import of ~0.06 s CPU) is
    built only for a window that holds an error (`_section_full`)."""
    import jsonschema_rs

    sub = _section_schema(section)
    if sub is None:
        return None
    return jsonschema_rs.Draft202012Validator(sub, validate_formats=False), format_sites_of(sub, set(FORMAT_CHECKS))


# A `pattern` each of whose strings the format holds (a subset of the format, never more).
PLAIN_PATTERNS = {"date-time": PLAIN_DATE_TIME_PATTERN, "uri": PLAIN_URI_PATTERN}


def with_plain_patterns(node: Any) -> Any:
    """A copy of a schema in which every subschema asserting a format we know also asserts its plain
    pattern; None when one already has a `pattern` (the two would have to be combined). Whatever the
    copy accepts the schema with our format checks accepts (each pattern is a subset of its format),
    so a yes from it is final and a no means "ask the exact path"."""
    if isinstance(node, list):
        items = [with_plain_patterns(item) for item in node]
        return None if any(item is None and orig is not None for item, orig in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        copied = with_plain_patterns(value) if key not in ("enum", "const", "examples", "default") else value
        if copied is None and value is not None:
            return None
        out[key] = copied
    name = node.get("format")
    if isinstance(name, str) and name in PLAIN_PATTERNS:
        if "pattern" in node:
            return None
        out["pattern"] = PLAIN_PATTERNS[name]
    return out


@functools.cache
def _section_plain(section: str) -> Any:
    """jsonschema-rs on one section's subschema with the plain patterns (`with_plain_patterns`): the
    formats of a window in the common shapes are then judged in Rust, in the same pass as the structure;
    None when the subschema cannot be so extended."""
    import jsonschema_rs

    sub = _section_schema(section)
    plain = None if sub is None else with_plain_patterns(sub)
    return None if plain is None else jsonschema_rs.Draft202012Validator(plain, validate_formats=False)


@functools.cache
def _section_full(section: str) -> Any:
    """jsonschema on one section's subschema, with our format checker: it writes the error messages."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_section_schema(section), format_checker=format_checker())


def settles_columns(root: Any) -> bool:
    """Does this schema settle every type the rule columns check of an atom (rules.scan_columns,
    `schema_held`)? Each atom an object holding `text`, a string of at most TEXT_MAX characters, and
    `provenance`, an object holding `derivation`, one of DERIVATIONS, whose `artifact_ids` is an array
    and `extractor` a string where present; `valid_from` a string and `valid_to` a string or null where
    present. Read from the schema's own keywords (each place's subschema and what its local `$ref`s
    point to, applied together), so a schema saying less, or saying it where this reading does not
    look, settles nothing."""
    if not isinstance(root, dict) or not isinstance(root.get("properties"), dict):
        return False
    section = _applied(root["properties"].get("atoms"), root)
    if not section or any("prefixItems" in node for node in section):  # `items` then skips the first items
        return False
    atom = [sub for node in section if isinstance(node.get("items"), dict) for sub in _applied(node["items"], root)]
    text, provenance = _property(atom, "text", root), _property(atom, "provenance", root)
    max_lengths = [node["maxLength"] for node in text if type(node.get("maxLength")) is int]
    return (_typed(atom, "object") and _required(atom, "text") and _required(atom, "provenance")
            and _typed(text, "string") and any(length <= TEXT_MAX for length in max_lengths)
            and _typed(provenance, "object") and _required(provenance, "derivation")
            and _one_of(_property(provenance, "derivation", root), DERIVATIONS)
            and _typed(_property(provenance, "artifact_ids", root), "array")
            and _typed(_property(provenance, "extractor", root), "string")
            and _typed(_property(atom, "valid_from", root), "string")
            and _typed(_property(atom, "valid_to", root), "string", "null"))


def _applied(node: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """The subschemas applied together at one place: the node and what its local `$ref`s point to
    (`#/$defs/<name>` with a plain name only; a subschema with an `$id` of its own changes how references
    resolve: none is read there)."""
    out: list[dict[str, Any]] = []
    while isinstance(node, dict) and len(out) < 16:
        if "$id" in node:
            return []
        out.append(node)
        ref = node.get("$ref")
        defs = root.get("$defs")
        name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
        plain = name is not None and not any(mark in name for mark in "/~%")  # no pointer escape to undo
        node = defs.get(name) if plain and isinstance(defs, dict) else None
    return out


def _property(nodes: list[dict[str, Any]], name: str, root: dict[str, Any]) -> list[dict[str, Any]]:
    return [sub for node in nodes if isinstance(props := node.get("properties"), dict)
            for sub in _applied(props.get(name), root)]


def _typed(nodes: list[dict[str, Any]], *kinds: str) -> bool:
    """Does one of the subschemas limit the instance to these JSON types (or fewer)?"""
    for node in nodes:
        kind = node.get("type")
        named = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
        if named and all(isinstance(k, str) for k in named) and set(named) <= set(kinds):
            return True
    return False


def _one_of(nodes: list[dict[str, Any]], values: tuple[str, ...]) -> bool:
    """Does one of the subschemas limit the instance to some of these strings (`enum` or `const`)?"""
    for node in nodes:
        allowed = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else None
        if allowed is not None and all(type(value) is str and value in values for value in allowed):
            return True
    return False


def _required(nodes: list[dict[str, Any]], name: str) -> bool:
    return any(isinstance(node.get("required"), list) and name in node["required"] for node in nodes)


@functools.cache
def columns_settled() -> bool:
    """settles_columns of the published schema (it does: tests/test_amps_scan_columns.py)."""
    return settles_columns(schema())


def section_schema_errors(section: str, items: list[Any], first: int) -> list[SchemaError]:
    """The schema errors a slice of one top-level array holds, as the whole document's validation
    reports them (paths from the root, `first` the slice's first index). The subschema of a section
    judges its items alone: nothing else in the schema reaches into them."""
    found = _section_structure(section)
    if found is None:
        raise NotWindowable(f"the schema has no plain subschema for {section}")
    structure, sites = found
    plain = _section_plain(section)
    if plain is not None and plain.is_valid(items):  # every formatted string in a plain shape: valid
        return []
    if sites is not None and structure.is_valid(items) and all(
            formats_hold(name, values_at(items, steps)) for steps, name in sites):
        return []
    return [([section, first + e.absolute_path[0], *list(e.absolute_path)[1:]] if e.absolute_path else [section],
             e.message, e.instance) for e in _section_full(section).iter_errors(items)]


def detect(doc: Any) -> bool:
    """An AMPS export by its top-level shape: export_version plus subject/atoms/artifacts (suites/amps/detect.py,
    which `validate` asks without loading the suite; defined here, its windows.py is found beside it)."""
    return detect_export(doc)


def atoms(doc: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    items = doc.get("atoms") if isinstance(doc, dict) else None
    for i, a in enumerate(items if isinstance(items, list) else []):
        if isinstance(a, dict):
            yield i, a


def artifacts(doc: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    items = doc.get("artifacts") if isinstance(doc, dict) else None
    for i, a in enumerate(items if isinstance(items, list) else []):
        if isinstance(a, dict):
            yield i, a


def provenance(atom: dict[str, Any]) -> dict[str, Any]:
    p = atom.get("provenance")
    return p if isinstance(p, dict) else {}


def artifact_ids_of(atom: dict[str, Any]) -> list[Any]:
    ids = provenance(atom).get("artifact_ids")
    return ids if isinstance(ids, list) else []


def has_sources(atom: dict[str, Any]) -> bool:
    return len(artifact_ids_of(atom)) > 0


def unsourced_inferred(doc: Any) -> list[int]:
    """Indexes of inferred atoms that cite no artifact: the export an importer should reject."""
    return [i for i, a in atoms(doc) if provenance(a).get("derivation") == "inferred" and not has_sources(a)]


def is_extension_key(key: str, reading: str = "x-prefix") -> bool:
    return key == "x-provider" if reading == "x-provider-key" else key.startswith("x-")


def is_flagged_unsourced(atom: dict[str, Any]) -> bool:
    """suites/amps/errata.md: 're-flagged as unsourced' is an extension key naming 'unsourced' set truthy."""
    for holder in (atom, provenance(atom)):
        for key, value in holder.items():
            if isinstance(key, str) and key.startswith("x-") and "unsourced" in key.lower() and value:
                return True
    return False


def dangling(doc: Any) -> Iterator[tuple[str, str]]:
    """(JSON path, id) of every reference that resolves to nothing in the same export."""
    atom_ids = {a.get("atom_id") for _, a in atoms(doc)}
    artifact_ids = {a.get("artifact_id") for _, a in artifacts(doc)}
    for i, a in atoms(doc):
        for j, ref in enumerate(artifact_ids_of(a)):
            if ref not in artifact_ids:
                yield f"$.atoms[{i}].provenance.artifact_ids[{j}]", ref
    for i, art in artifacts(doc):
        refs = art.get("atom_ids")
        for j, ref in enumerate(refs if isinstance(refs, list) else []):
            if ref not in atom_ids:
                yield f"$.artifacts[{i}].atom_ids[{j}]", ref


__all__ = ["RULES", "Problem", "Rule", "Scan", "is_date_time", "is_uri", "parse_date_time", "scan"]
