"""Where a JSON Schema applies `format`, found from the schema alone, when it can be.

A schema whose only applicators are `properties`, `items` (one schema) and local `$ref`s applies each
`format` at places a path of property names and "every item" describes, whatever the instance is
(`properties` applies only to an object, `items` only to an array, `format` only to a string). Any
other keyword that applies subschemas (anyOf, if, patternProperties, a remote $ref ...) or a $ref
cycle makes the answer None: the caller then lets the validator call back for every string.
"""

from __future__ import annotations

from typing import Any

# keywords that apply no subschema (assertions and annotations), and the three applicators followed
_PLAIN = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default", "version",
                    "deprecated", "readOnly", "writeOnly", "type", "enum", "const", "required", "format",
                    "maxLength", "minLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "multipleOf", "maxItems", "minItems", "uniqueItems", "maxProperties",
                    "minProperties", "contentEncoding", "contentMediaType"})
_FOLLOWED = frozenset({"properties", "items", "$ref", "$defs"})
Sites = tuple[tuple[tuple[str | None, ...], str], ...]


class _Unfollowable(Exception):
    pass


def format_sites_of(schema: Any, known_formats: set[str], max_depth: int = 64) -> Sites | None:
    """(steps, format name) for every place the schema applies a format (steps: property names, None for
    every item of an array), or None when the schema cannot be read this way or names a format not known."""
    out: list[tuple[tuple[str | None, ...], str]] = []
    try:
        _walk(schema, schema, (), out, (), max_depth)
    except _Unfollowable:
        return None
    if any(name not in known_formats for _, name in out):
        return None
    return tuple(out)


def _walk(node: Any, root: Any, steps: tuple[str | None, ...], out: list[tuple[tuple[str | None, ...], str]],
          refs: tuple[str, ...], depth: int) -> None:
    if isinstance(node, bool):
        return  # true and false apply no format
    if not isinstance(node, dict) or depth <= 0 or not set(node) <= _PLAIN | _FOLLOWED:
        raise _Unfollowable
    if "$id" in node and node is not root:
        raise _Unfollowable  # a new base: "#/..." would resolve against it
    if "format" in node:
        if not isinstance(node["format"], str):
            raise _Unfollowable
        out.append((steps, node["format"]))
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise _Unfollowable
    for name, sub in properties.items():
        _walk(sub, root, (*steps, name), out, refs, depth - 1)
    if "items" in node:
        _walk(node["items"], root, (*steps, None), out, refs, depth - 1)
    for sub in _defs(node):
        _check_plain(sub, max_depth=depth - 1)
    if "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or ref in refs:
            raise _Unfollowable  # a cycle: the places are not finitely many paths
        _walk(_resolve(root, ref), root, steps, out, (*refs, ref), depth - 1)


def _defs(node: dict[str, Any]) -> list[Any]:
    defs = node.get("$defs", {})
    if not isinstance(defs, dict):
        raise _Unfollowable
    return list(defs.values())


def _check_plain(node: Any, max_depth: int) -> None:
    """A definition is applied only through a $ref (then walked there); it must still hold only keywords
    this reading knows, so that a $ref into it never meets one it does not."""
    if isinstance(node, bool):
        return
    if not isinstance(node, dict) or max_depth <= 0 or not set(node) <= _PLAIN | _FOLLOWED or "$id" in node:
        raise _Unfollowable
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise _Unfollowable
    for sub in properties.values():
        _check_plain(sub, max_depth - 1)
    if "items" in node:
        _check_plain(node["items"], max_depth - 1)
    for sub in _defs(node):
        _check_plain(sub, max_depth - 1)


def _resolve(root: Any, ref: str) -> Any:
    """A local JSON pointer ("#/$defs/Atom"); anything else is not followed."""
    if not ref.startswith("#/"):
        raise _Unfollowable
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise _Unfollowable
        node = node[part]
    return node
