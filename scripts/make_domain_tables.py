"""Write suites/<spec>/domain.json for the five specs: every field and request parameter with its
type, limits and value classes (schema harness/schemas/domain.schema.json).

Derived where a machine-readable source exists (OMP: fixtures/omp/openapi.yaml; AMPS:
fixtures/amps/schema.json), completed by hand from the prose (the FIELDS_BY_HAND of each spec).
Each field quotes the spec line it comes from, found in fixtures/specs/ (tests/test_domain.py
checks every sentence is verbatim). The standard classes of a type are made by the `*_classes`
functions below: below/at/above every limit, empty, absent, null, the string, number, timestamp
and id classes, every enum value and one unknown.

    python scripts/make_domain_tables.py          # write the five tables
    python scripts/make_domain_tables.py --check  # exit 1 when a table on disk differs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "fixtures" / "specs"
SPEC_FILES = {"omp": "open-memory-protocol-v0.1.md", "emp": "edge-memory-protocol-v1.0.md", "amps": "ai-memory-portability-standard-v0.1.md",
              "memorizz": "memorizz-archive-v1.md", "memoryai": "memoryai-protocol-v1.md"}
STRING_KINDS = ("ascii", "bmp", "astral", "combining", "nfc_nfd", "case_pair", "prefix_pair", "separators", "control")
NUMBER_EDGES = [("negative_zero", "-0.0"), ("integral_float", "5.0"), ("exp_21", "1e21"), ("small_1e_6", "1e-6"),
                ("small_1e_7", "1e-7"), ("huge_exponent", "1e308"), ("above_2_53", "9007199254740993")]


def cls(class_id: str, gen: str, expect: str, why: str = "", **args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": class_id, "gen": gen, "expect": expect}
    if args:
        out["args"] = args
    if why:
        out["why"] = why
    return out


def presence(required: bool, nullable: bool, null_expect: str | None = None) -> list[dict[str, Any]]:
    return [cls("absent", "absent", "invalid" if required else "valid", "required" if required else "optional: absent alone"),
            cls("null", "null", null_expect or ("valid" if nullable else "open"),
                "the type allows null" if nullable else "the spec does not say whether null means absent")]


def string_classes(required: bool, max_len: int | None = None, nullable: bool = False, empty: str = "open",
                   min_len: int | None = None, null_expect: str | None = None) -> list[dict[str, Any]]:
    out = presence(required, nullable, null_expect)
    out.append(cls("empty", "literal", "invalid" if min_len else empty, "an empty string; the spec sets no minimum" if not min_len
                   else f"minimum {min_len}", value=""))
    out += [cls(k, "string", "valid", kind=k) for k in STRING_KINDS]
    if max_len:
        out += [cls("below_max", "string_len", "valid", length=max_len - 1),
                cls("at_max", "string_len", "valid", length=max_len),
                cls("at_max_bmp", "string_len", "valid", "two UTF-8 bytes a character: a limit in bytes refuses it",
                    length=max_len, alphabet="bmp"),
                cls("at_max_astral", "string_len", "open", "a limit in UTF-16 units (not code points) refuses it",
                    length=max_len, alphabet="astral"),
                cls("above_max", "string_len", "invalid", length=max_len + 1)]
    return out


def enum_classes(values: list[str], required: bool, nullable: bool = False, unknown: str = "invalid") -> list[dict[str, Any]]:
    out = presence(required, nullable)
    out += [cls(f"is_{v}", "literal", "valid", value=v) for v in values]
    out += [cls("unknown", "literal", unknown, "not one of the values", value="not-a-listed-value"),
            cls("case_variant", "literal", "open", "a listed value in another case", value=values[0].upper()),
            cls("empty", "literal", "invalid" if unknown == "invalid" else "open", value="")]
    return out


def number_classes(required: bool, minimum: float | None = None, maximum: float | None = None, integer: bool = False,
                   nullable: bool = False) -> list[dict[str, Any]]:
    out = presence(required, nullable)
    edges = NUMBER_EDGES
    for class_id, text in edges:
        value = json.loads(text)
        inside = (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
        integral = float(value).is_integer()
        expect = "valid" if inside and (not integer or integral) else "invalid"
        if integer and isinstance(value, float) and integral and inside:
            expect = "open"  # 5.0 is an integer value written as a float
        out.append(cls(class_id, "number", expect, text=text))
    for name, bound, step in (("minimum", minimum, -1), ("maximum", maximum, 1)):
        if bound is None:
            continue
        out.append(cls(f"at_{name}", "number", "valid", text=json.dumps(bound)))
        delta = 1 if integer else 0.001
        out.append(cls(f"beyond_{name}", "number", "invalid", text=json.dumps(bound + step * delta)))
    out.append(cls("as_string", "literal", "invalid", "a number written as a JSON string", value="1"))
    return out


def wrong_type_classes(typed: str) -> list[dict[str, Any]]:
    """A JSON value of each other type where the spec types a field `typed` (a number, a boolean, an array, an object):
    no reading makes one of them that type."""
    values = {"number": 42, "boolean": True, "array": ["s-42"], "object": {"id": "s-42"}}
    return [cls(f"not_{typed}_{kind}", "literal", "invalid", f"a JSON {kind} where the spec types a {typed}", value=value)
            for kind, value in values.items()]


def timestamp_classes(required: bool, nullable: bool = False, null_expect: str | None = None) -> list[dict[str, Any]]:
    out = presence(required, nullable, null_expect)
    for kind, expect in (("utc_z", "valid"), ("utc_offset", "valid"), ("fraction", "valid"), ("leap_day", "valid"),
                         ("epoch", "valid"), ("far_future", "valid"), ("non_utc", "open"), ("no_zone", "open"),
                         ("date_only", "open"), ("not_a_date", "invalid"), ("impossible", "invalid"), ("lowercase", "open")):
        out.append(cls(kind, "timestamp", expect, kind=kind))
    return out


NULL_OPTIONAL = "optional (`?`), its type has no null: read as absent, or refused (errata O37)"


def null_open(classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The null class of a field §2.1 marks optional (`name?: T`) without `| null`: open, not valid."""
    return [dict(c, expect="open", why=NULL_OPTIONAL) if c["id"] == "null" else c for c in classes]


def expiry_classes() -> list[dict[str, Any]]:
    """An expiry: the timestamp classes, those in the past `open` (an already expired memory may be refused,
    or stored and hidden), and the same forms in the future `valid`."""
    out = []
    for c in timestamp_classes(False, nullable=True):
        if c["expect"] == "valid" and c["gen"] == "timestamp" and c["args"]["kind"] != "far_future":
            c = dict(c, expect="open", why="in the past: an expired memory may be refused, or stored and not served")
        out.append(c)
    out += [cls(k, "timestamp", "valid", kind=k) for k in ("future_z", "future_offset", "future_fraction")]
    return out


UTC_OFFSET = "UTC written `+00:00` rather than `Z`: read as UTC, or refused as not the UTC form (errata O52)"


def utc_offset_open(classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OMP's "ISO 8601 UTC timestamp": a valid `+00:00` form is open, not valid (errata O52)."""
    return [dict(c, expect="open", why=UTC_OFFSET) if c["gen"] == "timestamp" and c["expect"] == "valid"
            and c["args"]["kind"] in ("utc_offset", "future_offset") else c for c in classes]


def source_timestamp_classes() -> list[dict[str, Any]]:
    """§2.3 `timestamp` is part of every stored source, but a create without it may be stamped by the server
    (as it stamps id and created_at) or refused: open (errata O36)."""
    return utc_offset_open([dict(c, expect="open", why="the server may stamp when it observed the memory, or refuse (errata O36)")
                            if c["id"] == "absent" else c for c in timestamp_classes(True)])


def array_classes(required: bool, max_items: int | None = None, item_len: int = 4, nullable: bool = False) -> list[dict[str, Any]]:
    out = presence(required, nullable)
    out += [cls("empty", "array_of", "valid", count=0), cls("one", "array_of", "valid", count=1),
            cls("duplicates", "array_of", "open", "the same item twice", count=2, distinct=False),
            cls("unicode_items", "array_of", "valid", count=2, alphabet="astral")]
    if max_items:
        out += [cls("at_max_items", "array_of", "valid", count=max_items, item_len=item_len),
                cls("above_max_items", "array_of", "invalid", count=max_items + 1, item_len=item_len)]
    out.append(cls("not_array", "literal", "invalid", value="a,b"))
    return out


def object_classes(required: bool, max_keys: int | None = None, nullable: bool = True, null_expect: str | None = None) -> list[dict[str, Any]]:
    out = presence(required, nullable, null_expect)
    out += [cls("empty", "object_keys", "valid", count=0)]
    out += [cls(k, "object_value", "valid", kind=k) for k in ("nested", "number_edges", "unicode", "null_value")]
    out.append(cls("empty_key", "object_value", "open", kind="empty_key"))
    if max_keys:
        out += [cls("at_max_keys", "object_keys", "valid", count=max_keys), cls("above_max_keys", "object_keys", "invalid", count=max_keys + 1)]
    out.append(cls("not_object", "literal", "invalid", value=["a"]))
    return out


MATCHES_NOTHING = ("no_match", "prefix_of_tag", "prefix_of_namespace", "beyond_total")


def query_string_classes(values: dict[str, str], matching: str = "valid") -> list[dict[str, Any]]:
    """A list filter: absent and each named value; a value that matches nothing is tried alone."""
    out = [cls("absent", "absent", "valid", "every optional parameter alone")]
    for k, v in values.items():
        out.append(cls(k, "query", matching, values=[v]))
        if k in MATCHES_NOTHING:
            out[-1].update(why="matches nothing (a prefix is not the value): tried alone, it would mask every pair of its row",
                           combine=False)
    return out


def field(fid: str, where: str, ops: list[str], ftype: str, required: bool, section: str, sentence: str, origin: str,
          classes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    out = {"id": fid, "where": where, "operations": ops, "type": ftype, "required": required, "section": section,
           "sentence": sentence, "origin": origin, "classes": classes}
    out.update({k: v for k, v in extra.items() if v not in (None, {}, [])})
    return out


class SpecLines:
    """The spec text's lines, stripped: a field quotes the first line that holds its marker."""

    def __init__(self, spec: str) -> None:
        self.lines = [" ".join(line.split()) for line in (SPECS / SPEC_FILES[spec]).read_text("utf-8").splitlines()]

    def quote(self, *markers: str) -> str:
        for line in self.lines:
            if all(m in line for m in markers):
                return line
        raise SystemExit(f"no spec line holds {markers!r}")


# ---- OMP: derived from fixtures/omp/openapi.yaml -----------------------------------------------

def omp_table() -> dict[str, Any]:
    api = yaml.safe_load((ROOT / "fixtures" / "omp" / "openapi.yaml").read_text("utf-8"))
    schemas = api["components"]["schemas"]
    lines = SpecLines("omp")
    create = schemas["MemoryCreate"]
    writes = ["create", "update", "import"]
    fields = []
    record_quotes = {"content": ("content: string",), "type": ("type: MemoryType",), "source": ("source: MemorySource",),
                     "tags": ("tags: string[]",), "namespace": ("namespace?: string",), "expires_at": ("expires_at: string | null",),
                     "metadata": ("metadata?: Record",)}
    for name, prop in create["properties"].items():
        required = name in create["required"]
        target = schemas[prop["$ref"].split("/")[-1]] if "$ref" in prop else prop
        quote = lines.quote(*record_quotes[name])
        if name == "content":
            classes = string_classes(required, target["maxLength"])
        elif name == "type":
            classes = enum_classes(schemas["MemoryType"]["enum"], required)
        elif name == "source":
            classes = [*presence(True, False, "invalid"), cls("minimal", "literal", "valid", "tool and timestamp only",
                                                              value={"tool": "memconform", "timestamp": "2026-06-29T12:00:00Z"}),
                       cls("not_object", "literal", "invalid", value="claude")]
        elif name == "tags":
            classes = array_classes(False, target["maxItems"], target["items"]["maxLength"])
        elif name == "namespace":
            classes = null_open(string_classes(False, target["maxLength"], nullable=True))
        elif name == "expires_at":
            classes = utc_offset_open(expiry_classes())
        else:
            classes = null_open(object_classes(False, target["maxProperties"], nullable=True))
        fields.append(field(f"memory.{name}", "record", writes, {"type": "enum", "expires_at": "timestamp", "source": "object",
                                                                  "tags": "array", "metadata": "object"}.get(name, "string"),
                            required, "§2.1", quote, "derived", classes,
                            limits={k2: v for k2, v in (("max_length", target.get("maxLength")), ("max_items", target.get("maxItems")),
                                                        ("max_keys", target.get("maxProperties"))) if v is not None},
                            enum=schemas["MemoryType"]["enum"] if name == "type" else None, nullable=name == "expires_at"))
    tags = schemas["Tags"]
    fields.append(field("memory.tags[]", "record", writes, "string", False, "§2.1", lines.quote("tags: string[]"), "derived",
                        [c for c in string_classes(True, tags["items"]["maxLength"]) if c["id"] not in ("absent", "null")] +
                        [cls("null", "null", "invalid", "a tag that is not a string")],
                        limits={"max_length": tags["items"]["maxLength"]}))
    source = schemas["SourceRequest"]
    for name in ("tool", "session_id", "user_id", "timestamp"):
        required = name in source["required"]
        quote = lines.quote(f"{name}{'' if required else '?'}: string")
        classes = (source_timestamp_classes() if name == "timestamp"
                   else string_classes(required, null_expect="invalid") if required
                   else [*null_open(string_classes(False)), *wrong_type_classes("string")])
        fields.append(field(f"memory.source.{name}", "record", writes, "timestamp" if name == "timestamp" else "string", required,
                            "§2.3", quote, "derived", classes))
    fields.append(field("memory.embedding", "record", writes, "array", False, "§2.1", lines.quote("embedding?: number[]"), "prose",
                        [*null_open(presence(False, False)), cls("empty", "numbers", "open", texts=[]),
                         *[cls(cid, "numbers", "valid" if cid != "huge_exponent" else "open", texts=[text, "0.5"]) for cid, text in NUMBER_EDGES],
                         cls("not_numbers", "literal", "invalid", value=["a", "b"])]))
    fields.append(field("memory.id", "record", ["import"], "id", True, "§2.1", lines.quote('id: string // Unique ID, format: "mem_"'),
                        "prose", [cls("at_format", "prefixed_id", "valid", prefix="mem_", length=16),
                                  cls("short", "prefixed_id", "open", "an imported id that breaks the format", prefix="mem_", length=15),
                                  cls("long", "prefixed_id", "open", prefix="mem_", length=17),
                                  cls("symbol", "prefixed_id", "open", prefix="mem_", length=16, alphabet="symbol"),
                                  cls("absent", "absent", "open", "an export item without id: the server may assign one")]))
    for name in ("created_at", "updated_at"):
        fields.append(field(f"memory.{name}", "record", ["import"], "timestamp", True, "§2.1", lines.quote(f"{name}: string"), "prose",
                            utc_offset_open([c for c in timestamp_classes(True) if c["id"] != "absent"]) + [cls("absent", "absent", "open")]))
    list_op = api["paths"]["/v1/memories"]["get"]
    params = {p.get("name") or p["$ref"].split("/")[-1]: p for p in list_op["parameters"]}
    quotes = {"type": "`type` string Filter by memory type", "tool": "`tool` string Filter by source tool",
              "tags": "`tags` string Comma-separated tags", "namespace": "`namespace` string Filter by namespace",
              "limit": "`limit` integer Max results", "offset": "`offset` integer Pagination offset", "sort": "`sort` string"}
    list_values = {"type": {f"is_{t}": t for t in schemas["MemoryType"]["enum"]},
                   "tool": {"run_tool": "{tool}", "other_tool": "{other_tool}", "no_match": "{none}"},
                   "tags": {"one_tag": "{tag}", "two_tags": "{tag},{sub}", "prefix_of_tag": "{tag_prefix}", "astral_tag": "{astral_tag}"},
                   "namespace": {"run_namespace": "{namespace}", "prefix_of_namespace": "{namespace_prefix}"},
                   "limit": {"at_min": "1", "mid": "7", "at_max": "100"},
                   "offset": {"zero": "0", "one": "1", "beyond_total": "50"},
                   "sort": {f"is_{s}": s for s in params["sort"]["schema"]["enum"]}}
    alone = {"type": [cls("unknown", "query", "open", "errata O9: 422, or a page matching nothing", values=["not-a-type"]),
                      cls("empty", "query", "open", "errata O30", values=[""]),
                      cls("repeated", "query", "open", "errata O30", values=["semantic", "episodic"])],
             "tool": [cls("empty", "query", "open", "errata O30", values=[""]),
                      cls("repeated", "query", "open", "errata O30", values=["{tool}", "{other_tool}"])],
             "tags": [cls("empty", "query", "open", values=[""]), cls("repeated", "query", "open", values=["{tag}", "{sub}"])],
             "namespace": [cls("empty", "query", "open", values=[""])],
             "limit": [cls("zero", "query", "open", "errata O9", values=["0"]), cls("above_max", "query", "open", "errata O9: 422 or clamped",
                                                                                    values=["101"]),
                       cls("negative", "query", "open", values=["-1"]), cls("malformed", "query", "open", values=["abc"]),
                       cls("float", "query", "open", values=["5.0"]), cls("huge", "query", "open", values=["9007199254740993"]),
                       cls("empty", "query", "open", values=[""])],
             "offset": [cls("negative", "query", "open", values=["-1"]), cls("malformed", "query", "open", values=["abc"]),
                        cls("huge", "query", "open", values=["9007199254740993"])],
             "sort": [cls("unknown", "query", "open", values=["relevance"]), cls("case_variant", "query", "open", values=["CREATED_AT_ASC"])]}
    for name in quotes:
        classes = query_string_classes(list_values[name]) + alone[name]
        fields.append(field(f"list.{name}", "query", ["list"], {"limit": "integer", "offset": "integer", "sort": "enum", "type": "enum"}.get(name, "string"),
                            False, "§3.3", lines.quote(quotes[name]), "derived", classes,
                            enum=params[name]["schema"].get("enum") if name == "sort" else None))
    search = schemas["SearchRequest"]
    search_values: dict[str, list[dict[str, Any]]] = {
        "q": [cls("run_word", "literal", "valid", value="{word}"), cls("two_words", "literal", "valid", value="{word} {tool}"),
              cls("upper_case", "literal", "valid", value="{WORD}"), cls("empty", "literal", "open", value=""),
              cls("absent", "absent", "invalid", "q is the query"), cls("not_string", "literal", "invalid",
                                                      "errata O9: the §3.3 body gives q as the query text, a string; §4: a body failing validation is 422",
                                                      value=5)],
        "type": [cls("absent", "absent", "valid"), *[cls(f"is_{t}", "literal", "valid", value=t) for t in schemas["MemoryType"]["enum"]],
                 cls("null", "null", "open", NULL_OPTIONAL), cls("unknown", "literal", "open", value="not-a-type")],
        "tags": [cls("absent", "absent", "valid"), cls("one_tag", "literal", "valid", value=["{tag}"]),
                 cls("two_tags", "literal", "valid", value=["{tag}", "{sub}"]), cls("empty", "literal", "valid", value=[]),
                 cls("as_string", "literal", "open", "errata O9: 422, or a page", value="{tag}")],
        "namespace": [cls("absent", "absent", "valid"), cls("run_namespace", "literal", "valid", value="{namespace}"),
                      cls("null", "null", "open", NULL_OPTIONAL)],
        "limit": [cls("absent", "absent", "valid"), cls("at_min", "literal", "valid", value=1), cls("at_max", "literal", "valid", value=100),
                  cls("above_max", "literal", "open", value=101), cls("zero", "literal", "open", value=0),
                  cls("float", "literal", "open", value=5.0), cls("as_string", "literal", "open", value="5")],
        "mode": [cls("absent", "absent", "valid"), *[cls(f"is_{m}", "literal", "valid", value=m) for m in search["properties"]["mode"]["enum"]],
                 cls("unknown", "literal", "open", value="fuzzy")]}
    search_quotes = {"q": '"q": "coding preferences",', "type": '"type": "semantic",', "tags": '"tags": ["preferences"],',
                     "namespace": '"namespace": "project:myapp",', "limit": '"limit": 10,', "mode": '"mode": "keyword"'}
    for name, classes in search_values.items():
        fields.append(field(f"search.{name}", "body", ["search"], "string" if name in ("q", "namespace") else "value", name == "q", "§3.3",
                            lines.quote(search_quotes[name]), "derived", classes))
    conflicts = api["paths"]["/v1/import"]["post"]["parameters"][0]["schema"]["enum"]
    fields.append(field("import.conflict", "query", ["import"], "enum", False, "§3.3", lines.quote("conflict strategies (query param):"),
                        "derived", [cls("absent", "absent", "valid", "skip is the default"),
                                    *[cls(f"is_{s}", "query", "valid", values=[s]) for s in conflicts],
                                    cls("unknown", "query", "invalid", "not a strategy", values=["replace-all"]),
                                    cls("empty", "query", "open", "read as absent, or refused", values=[""]),
                                    cls("case_variant", "query", "open", values=["SKIP"]),
                                    cls("repeated", "query", "open", values=["skip", "overwrite"])], enum=conflicts))
    for name, classes in (("omp_version", [cls("as_exported", "literal", "valid", value="0.1"), cls("absent", "absent", "open"),
                                           cls("other_version", "literal", "open", value="0.2")]),
                          ("exported_at", [cls("utc_z", "timestamp", "valid", kind="utc_z"), cls("absent", "absent", "open")]),
                          ("server", [cls("ascii", "string", "valid", kind="ascii"), cls("absent", "absent", "valid", "not every export names it"),
                                      cls("astral", "string", "valid", kind="astral")]),
                          ("memories", [cls("empty", "literal", "valid", value=[]), cls("absent", "absent", "invalid"),
                                        cls("not_array", "literal", "invalid", value={})])):
        fields.append(field(f"export.{name}", "envelope", ["import"], "string" if name != "memories" else "array", name == "memories",
                            "§3.3", lines.quote(f'"{name}":'), "prose", classes))
    fields.append(field("memory_path.id", "path", ["get", "update", "delete"], "id", True, "§3.3",
                        lines.quote("Response 404 Not Found:"), "prose",
                        [cls("unknown_at_format", "prefixed_id", "valid", "well formed, never stored: 404", prefix="mem_", length=16),
                         cls("short", "prefixed_id", "open", "404 or 422", prefix="mem_", length=15),
                         cls("long", "prefixed_id", "open", prefix="mem_", length=17),
                         cls("wrong_prefix", "prefixed_id", "open", prefix="mom_", length=16),
                         cls("percent_encoded", "literal", "open", value="mem_%2e%2e")]))
    return {"spec": "omp", "spec_text": f"fixtures/specs/{SPEC_FILES['omp']}", "derived_from": ["fixtures/omp/openapi.yaml"],
            "fields": fields,
            "combinations": [{"id": "list_parameters", "operation": "list",
                              "parameters": [f"list.{p}" for p in ("type", "tool", "tags", "namespace", "limit", "offset", "sort")]},
                             {"id": "search_parameters", "operation": "search",
                              "parameters": [f"search.{p}" for p in ("q", "type", "tags", "namespace", "limit", "mode")]}]}


# ---- AMPS: derived from fixtures/amps/schema.json ----------------------------------------------

def amps_table() -> dict[str, Any]:
    schema = json.loads((ROOT / "fixtures" / "amps" / "schema.json").read_text("utf-8"))
    lines = SpecLines("amps")
    fields = []

    def walk(prefix: str, node: dict[str, Any], where: str) -> None:
        node = schema["$defs"][node["$ref"].split("/")[-1]] if "$ref" in node else node
        required = set(node.get("required", ()))
        for name, prop in node.get("properties", {}).items():
            fid = f"{prefix}.{name}"
            quote = lines.quote(f'"{name}":')
            if "$ref" in prop or prop.get("type") == "object":
                fields.append(field(fid, where, ["import", "export"], "object", name in required, "schema", quote, "derived",
                                    [*presence(name in required, False, "invalid")]))
                walk(fid, prop, where)
                continue
            if prop.get("type") == "array" and "$ref" in prop.get("items", {}):
                fields.append(field(fid, where, ["import", "export"], "array", name in required, "schema", quote, "derived",
                                    [*presence(name in required, False, "invalid"), cls("empty", "literal", "valid", value=[])]))
                walk(f"{fid}[]", prop["items"], "record")
                continue
            fields.append(amps_leaf(fid, where, name in required, prop, quote))

    walk("export", schema, "envelope")
    # the optional fields of one atom, pairwise (an observed atom citing one artifact: extractor optional too)
    optional = [f"export.atoms[].{p}" for p in ("confidence", "sensitivity", "valid_from", "valid_to",
                                                 "provenance.extractor", "provenance.human_reviewed")]
    return {"spec": "amps", "spec_text": f"fixtures/specs/{SPEC_FILES['amps']}", "derived_from": ["fixtures/amps/schema.json"],
            "fields": fields, "combinations": [{"id": "atom_optional_fields", "operation": "import", "parameters": optional}]}


# RFC 3339 offsets across the range in use (-12:00 to +14:00, odd minutes), each instant on the other side of
# 12:00Z than its text: a consumer refusing an offset beyond +-12:00, or ordering valid_to and valid_from as
# strings, refuses a valid export (the pairwise rows put each beside utc_z in the other end of the interval)
AMPS_OFFSETS = [cls(kind, "timestamp", "valid", "a valid RFC 3339 offset (ajv-formats: hours up to 23)", kind=kind)
                for kind in ("offset_plus_14", "offset_minus_12", "offset_plus_12_45", "offset_minus_09_30")]


def amps_leaf(fid: str, where: str, required: bool, prop: dict[str, Any], quote: str) -> dict[str, Any]:
    types = prop.get("type")
    types = types if isinstance(types, list) else [types]
    nullable = "null" in types
    if "const" in prop:
        classes = [*presence(required, False, "invalid"), cls("the_value", "literal", "valid", value=prop["const"]),
                   cls("other", "literal", "invalid", value="9.9.9")]
        ftype = "string"
    elif "enum" in prop:
        classes, ftype = enum_classes(prop["enum"], required), "enum"
    elif prop.get("format") == "uri":
        classes = [*presence(required, nullable), cls("https", "literal", "valid", value="https://example.com/media/1.png"),
                   cls("mailto", "literal", "valid", value="mailto:someone@example.com"),
                   cls("urn", "literal", "valid", value="urn:isbn:0451450523"),
                   cls("iri", "literal", "open", "non-ASCII: an IRI, not a URI", value="https://example.com/Größe"),
                   cls("relative", "literal", "invalid", "no scheme: not a URI", value="media/1.png"),
                   cls("spaces", "literal", "invalid", value="https://example.com/a b"),
                   cls("empty", "literal", "invalid", value="")]
        ftype = "string"
    elif prop.get("format") == "date-time":
        classes, ftype = timestamp_classes(required, nullable, "valid" if nullable else None) + AMPS_OFFSETS, "timestamp"
    elif "number" in types:
        classes, ftype = number_classes(required, prop.get("minimum"), prop.get("maximum")), "number"
    elif "boolean" in types:
        classes = [*presence(required, False), cls("true", "literal", "valid", value=True), cls("false", "literal", "valid", value=False),
                   cls("as_string", "literal", "invalid", value="true")]
        ftype = "boolean"
    elif "array" in types:
        classes, ftype = array_classes(required), "array"
    else:
        classes, ftype = string_classes(required, prop.get("maxLength"), nullable), "string"
    return field(fid, where, ["import", "export"], ftype, required, "schema", quote, "derived", classes,
                 limits={k: v for k, v in (("max_length", prop.get("maxLength")), ("minimum", prop.get("minimum")),
                                           ("maximum", prop.get("maximum"))) if v is not None},
                 enum=prop.get("enum"), nullable=nullable)


# ---- EMP, MemoRizz, MemoryAI: by hand from the prose -------------------------------------------

def emp_table() -> dict[str, Any]:
    lines = SpecLines("emp")
    ops = ["append", "read"]
    uuid_classes = [cls("v4", "uuid", "valid", kind="v4"), cls("v4_upper", "uuid", "open", "RFC 4122 output is lower case; input is case-insensitive", kind="v4_upper"),
                    cls("v1", "uuid", "invalid", kind="v1"), cls("short", "uuid", "invalid", kind="short"),
                    cls("long", "uuid", "invalid", kind="long"), cls("no_dashes", "uuid", "open", kind="no_dashes"),
                    cls("braced", "uuid", "open", kind="braced"), cls("not_hex", "uuid", "invalid", kind="not_hex"),
                    *presence(True, False, "invalid")]
    ts_classes = [*presence(True, False, "invalid")] + [cls(k, "millis", e, kind=k) for k, e in (
        ("now", "valid"), ("zero", "valid"), ("negative", "open"), ("seconds", "open"), ("float", "open"), ("max_safe", "valid"),
        ("above_safe", "open"), ("string", "invalid"), ("exponent", "open"))]
    fields = [
        field("entry.v", "line", ops, "string", True, "Schema", lines.quote("v: string;"), "prose",
              [*presence(True, False, "invalid"), cls("one_zero", "literal", "valid", value="1.0"), cls("one_one", "literal", "valid", "MAJOR.MINOR", value="1.1"),
               cls("number", "literal", "invalid", value=1.0), cls("no_minor", "literal", "invalid", value="1"), cls("empty", "literal", "invalid", value="")]),
        field("entry.id", "line", ops, "id", True, "Schema", lines.quote("id: string;"), "prose", uuid_classes),
        field("entry.ts", "line", ops, "number", True, "Schema", lines.quote("ts: number;"), "prose", ts_classes),
        field("entry.src", "line", ops, "string", True, "Schema", lines.quote("src: string;"), "prose",
              [*string_classes(True, null_expect="invalid"), cls("reverse_domain", "literal", "valid", value="com.example.app")]),
        field("entry.content", "line", ops, "string", True, "Schema", lines.quote("content: string;"), "prose",
              [*string_classes(True, null_expect="invalid"), cls("long", "string_len", "valid", "no length limit", length=100_000),
               cls("newline", "string", "valid", "escaped in JSONL", kind="newline"), cls("bidi", "string", "valid", kind="bidi"),
               cls("zero_width", "string", "valid", kind="zero_width"),
               cls("unicode_line_breaks", "string", "valid", "raw U+2028, U+0085 ...: JSON allows them in a string; only \\n ends a line",
                   kind="unicode_line_breaks")]),
        field("entry.type", "line", ops, "string", False, "Schema", lines.quote("type?: string;"), "prose",
              [*string_classes(False), *[cls(f"is_{t}", "literal", "valid", value=t) for t in ("preference", "fact", "event", "conversation", "note")],
               cls("custom", "literal", "valid", "apps can define custom types", value="com.example.custom")]),
        field("entry.tags", "line", ops, "array", False, "Schema", lines.quote("tags?: string[];"), "prose",
              [*array_classes(False), cls("upper_case", "literal", "open", "tags are lowercase strings", value=["UI"]),
               cls("colon", "literal", "valid", value=["person:john"])]),
        field("entry.meta", "line", ops, "object", False, "Schema", lines.quote("meta?: Record<string, any>;"), "prose", object_classes(False)),
        field("entry.emb", "line", ops, "array", False, "Schema", lines.quote("emb?: number[];"), "prose",
              [*presence(False, False), cls("empty", "numbers", "open", texts=[]),
               *[cls(cid, "numbers", "valid", texts=[text, "0.5"]) for cid, text in NUMBER_EDGES],
               cls("not_numbers", "literal", "invalid", value=["a"])]),
    ]
    fields += emp_request_fields(lines)
    return {"spec": "emp", "spec_text": f"fixtures/specs/{SPEC_FILES['emp']}", "derived_from": [], "fields": fields,
            "combinations": [{"id": "query_parameters", "operation": "query", "parameters": list(EMP_QUERY_PARAMETERS)}]}


# The data set the query classes name (suites/emp/checks/domain_query.py): entry i has ts EMP_T0 + 1000 i
EMP_T0 = 1701234560000
EMP_QUERY_PARAMETERS = ("query.start", "query.end", "query.tags", "query.type", "query.text", "query.near", "history.writes")
NOTHING = "matches nothing: tried alone, it would mask every pair of its row"


def alone(c: dict[str, Any]) -> dict[str, Any]:
    return dict(c, combine=False, why=c.get("why") or NOTHING)


def emp_request_fields(lines: SpecLines) -> list[dict[str, Any]]:
    """The read operations' parameters (errata E9: query {start, end, tags, type, text}; near, E60) and
    the write history of the file they read (every write operation), all tried pairwise."""
    time = lines.quote("Filter by Time:")
    bound_open = [cls("null", "null", "open", "errata E61: read as absent, or refused"),
                  cls("as_string", "literal", "open", "errata E61: refused, or compared as the number", value=str(EMP_T0 + 4000))]
    q = ["query"]
    return [
        field("query.start", "query", q, "number", False, "Read Operations", time, "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"),
               cls("at_entry_ts", "literal", "valid", "ts >= startTime: an entry at the bound is in", value=EMP_T0 + 4000),
               cls("between", "literal", "valid", value=EMP_T0 + 4500),
               cls("zero", "literal", "valid", value=0), cls("negative", "literal", "valid", value=-1),
               alone(cls("fraction", "literal", "valid", "a bound between two whole milliseconds", value=EMP_T0 + 3999.5)),
               alone(cls("above_all", "literal", "valid", value=2**53 - 1)), *bound_open]),
        field("query.end", "query", q, "number", False, "Read Operations", time, "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"),
               cls("at_entry_ts", "literal", "valid", "ts <= endTime: an entry at the bound is in", value=EMP_T0 + 11000),
               cls("between", "literal", "valid", value=EMP_T0 + 11500), cls("max_safe", "literal", "valid", value=2**53 - 1),
               alone(cls("below_all", "literal", "valid", value=0)),
               alone(cls("fraction", "literal", "valid", "a bound between two whole milliseconds", value=EMP_T0 + 11000.5)), *bound_open]),
        field("query.tags", "query", q, "array", False, "Read Operations", lines.quote("Filter by Tags:"), "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"), cls("one", "literal", "valid", value=["ui"]),
               cls("two", "literal", "valid", "tag(s): every one, or any one (errata E62)", value=["ui", "theme"]),
               cls("colon", "literal", "valid", value=["person:john"]),
               alone(cls("prefix_of_tag", "literal", "valid", "a prefix is not the tag", value=["the"])),
               alone(cls("unknown", "literal", "valid", value=["nobody"])),
               cls("empty", "literal", "open", "errata E61: read as absent, matching nothing, or refused", value=[]),
               cls("upper_case", "literal", "open", "errata E61: tags are lowercase; exact, or case-insensitive", value=["UI"]),
               cls("as_string", "literal", "open", "errata E61: refused, or read as one tag", value="ui")]),
        field("query.type", "query", q, "string", False, "Read Operations", lines.quote("Filter by Type:"), "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"),
               *[cls(f"is_{t}", "literal", "valid", value=t) for t in ("preference", "fact", "event", "conversation", "note")],
               cls("custom", "literal", "valid", "apps can define custom types", value="com.example.custom"),
               alone(cls("unknown", "literal", "valid", value="not-a-type")),
               cls("case_variant", "literal", "open", "errata E61: exact, or case-insensitive", value="EVENT"),
               cls("empty", "literal", "open", "errata E61: read as absent, or matching nothing", value="")]),
        field("query.text", "query", q, "string", False, "Read Operations", lines.quote("Search by Content:"), "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"), cls("lower", "literal", "valid", value="coffee"),
               cls("upper", "literal", "valid", "case-insensitive", value="COFFEE"),
               cls("mixed", "literal", "valid", "case-insensitive", value="CoFfEe"),
               cls("non_ascii", "literal", "valid", "case-insensitive beyond ASCII (CAFÉ in the content)", value="café"),
               cls("inner", "literal", "valid", "contains: part of a word", value="offe"),
               cls("astral", "literal", "valid", value="🚀"),
               cls("empty", "literal", "valid", "every content contains the empty text (read as absent: the same answer)", value=""),
               alone(cls("no_match", "literal", "valid", value="zzzz"))]),
        field("query.near", "query", q, "array", False, "Read Operations", lines.quote("Semantic Search:"), "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"),
               cls("exact", "literal", "valid", "errata E60: the entries with this very vector are similar to it", value=[1.0, 0.0, 0.0]),
               cls("other_dimension", "literal", "open", "errata E60: no entry has a vector of this length", value=[1.0, 0.0]),
               cls("empty", "literal", "open", "errata E60", value=[])]),
        field("contention.apps", "operation", ["append", "delete"], "integer", False, "Design Principles",
              lines.quote("Cross-App: Multiple apps"), "prose",
              [cls("two", "literal", "valid", value=2), cls("three", "literal", "valid", value=3),
               cls("eight", "literal", "valid", "eight apps starting together on a missing file: a truncating start loses entries",
                   value=8)]),
        field("file.lines", "file", ["read", "append"], "string", False, "Storage Format: JSONL",
              lines.quote("Each memory entry is a single line of JSON"), "prose",
              [cls("blank_line", "literal", "valid", "an empty line is no entry: the others are read (Resilient)", value="blank_line"),
               cls("whitespace_line", "literal", "valid", "a line of spaces is no entry: the others are read", value="whitespace_line"),
               cls("crlf", "literal", "valid", "JSON allows a carriage return after the value (errata E13 keeps CRLF ends)",
                   value="crlf"),
               cls("no_final_newline", "literal", "open", "errata E64: a complete last line without its newline: read, or left "
                   "out as still being written; an append starts a new line (E7)", value="no_final_newline"),
               cls("bom", "literal", "open", "errata E64: a byte order mark before the first line: skipped, or that line lost",
                   value="bom")]),
        field("file.lock", "file", ["append"], "string", False, "Concurrency Control",
              lines.quote("If lock file exists, wait with exponential backoff"), "prose",
              [cls("fresh_token", "literal", "valid", "another app's lock: wait (errata E6)", value="fresh_token"),
               cls("fresh_empty", "literal", "valid", "an empty lock is a lock: its content is no reason to take it (E6)",
                   value="fresh_empty"),
               cls("fresh_pid", "literal", "valid", "a lock naming a live process: wait (E6)", value="fresh_pid"),
               cls("stale_pid", "literal", "open", "errata E2: older than the stale limit: taken over, waited on, or given up",
                   value="stale_pid"),
               cls("stale_empty", "literal", "open", "errata E2", value="stale_empty")]),
        field("history.writes", "file", ["query", "append", "update", "delete"], "enum", False, "Write Operations",
              lines.quote("Update: Append new entry"), "prose",
              [cls("appended", "literal", "valid", "Append: Add new entry to end of file", value="appended"),
               cls("updated", "literal", "valid", "a newer line of some ids: another ts, tags, type, content", value="updated"),
               cls("deleted_tombstone", "literal", "valid", "Delete: Append tombstone entry (the form the reader honours, E1)",
                   value="deleted_tombstone"),
               cls("deleted_rewrite", "literal", "valid", "Delete: ... or rewrite file without deleted entry", value="deleted_rewrite")]),
    ]


def memorizz_table() -> dict[str, Any]:
    lines = SpecLines("memorizz")
    fields = [
        field("archive.format", "envelope", ["import", "export"], "string", True, "Envelope", lines.quote("`format` String"), "prose",
              [*presence(True, False, "invalid"), cls("the_value", "literal", "valid", value="memorizz.memory"),
               cls("case_variant", "literal", "invalid", value="MemoRizz.Memory"), cls("prefix", "literal", "invalid", value="memorizz")]),
        field("archive.version", "envelope", ["import", "export"], "integer", True, "Envelope", lines.quote("`version` Integer"), "prose",
              [*presence(True, False, "invalid"), cls("one", "number", "valid", text="1"), cls("one_float", "number", "open", text="1.0"),
               cls("two", "number", "invalid", "unsupported versions are rejected", text="2"), cls("as_string", "literal", "invalid", value="1")]),
        field("archive.integrity.digest", "envelope", ["import"], "string", True, "Envelope", lines.quote("`integrity` Object"), "prose",
              [cls("lowercase_64", "literal", "valid", value="0" * 64), cls("uppercase", "literal", "invalid", value="A" * 64),
               cls("short", "string_len", "invalid", length=63), cls("long", "string_len", "invalid", length=65)]),
        field("record.id", "record", ["import", "export"], "id", True, "Records and relationships",
              lines.quote("id is a nonempty string, unique within its store, with at most 512 characters."), "prose",
              [*presence(True, False, "invalid"), cls("empty", "literal", "invalid", value=""),
               cls("at_max", "string_len", "valid", length=512), cls("above_max", "string_len", "invalid", length=513),
               cls("at_max_astral", "string_len", "open", length=512, alphabet="astral"),
               *[cls(k, "string", "valid", kind=k) for k in STRING_KINDS]]),
        field("record.data.number", "record", ["import", "export"], "number", False, "Integrity and validation",
              lines.quote("Numbers use a shared Python/browser representation"), "prose",
              [*[cls(cid, "number", "valid", text=text) for cid, text in NUMBER_EDGES], cls("negative_int", "number", "valid", text="-3")]),
        field("manifest.created_at", "envelope", ["import", "export"], "timestamp", True, "Manifest", lines.quote("`created_at` Export timestamp in UTC"),
              "prose", timestamp_classes(True)),
        field("manifest.record_count", "envelope", ["import", "export"], "integer", True, "Manifest", lines.quote("`record_count` Sum of the per-store counts"),
              "prose", [cls("matching", "literal", "valid", value="sum"), cls("off_by_one", "literal", "invalid", value="sum+1")]),
    ]
    fields += memorizz_archive_fields(lines) + memorizz_request_fields(lines)
    return {"spec": "memorizz", "spec_text": f"fixtures/specs/{SPEC_FILES['memorizz']}", "derived_from": [], "fields": fields,
            "combinations": MEMORIZZ_COMBINATIONS}


MEMORIZZ_STORES = ("personas", "entity_memory", "knowledge_base", "toolbox", "workflow_memory", "skillbox", "conversation_memory",
                   "summaries", "tool_log", "short_term_memory", "semantic_cache", "shared_memory", "agents")
MEMORIZZ_MANIFEST = ("memorizz_version", "source_provider", "scope", "counts", "record_count", "includes", "warnings")
MEMORIZZ_COMBINATIONS = [
    {"id": "export_selection", "operation": "export",
     "parameters": ["export.memory_id", "export.agent_id", "export.types", "export.include_embeddings"]},
    {"id": "import_modes", "operation": "import_archive", "parameters": ["import.mode", "import.conflict", "import.held"]},
]


def edit(expect: str, class_id: str, why: str = "", **change: Any) -> dict[str, Any]:
    """A structural class: a change to a valid archive (`set` members, `drop` members, `replace` the whole
    value), applied by suites/memorizz/checks/domain_imports.py to the member the field names."""
    return cls(class_id, "literal", expect, why, value=change)


def memorizz_archive_fields(lines: SpecLines) -> list[dict[str, Any]]:
    """The envelope, taxonomy, stores, record shape, identities and manifest of the page, as changes to a valid
    archive; the number and string classes of a record's data."""
    ops = ["import", "export"]
    envelope = lines.quote("An archive has exactly six top-level fields.")
    records = lines.quote("Every entry in a store is an object with exactly id and data")
    ids = lines.quote("When present, data.id and data._id must match the enclosing id.")
    required = lines.quote("The required fields are created_at")
    as_data = "the page gives manifest fields meanings, not types: refused by memconform's reading (M5), open for a consumer"
    return [
        field("archive.envelope", "envelope", ops, "object", True, "Envelope", envelope, "prose",
              [edit("valid", "exactly_six"), edit("invalid", "unknown_field", "unknown envelope fields are rejected", set={"extensions": {}}),
               *[edit("invalid", f"{m}_absent", "one of the six fields", drop=[m]) for m in ("taxonomy", "manifest", "stores", "integrity")]]),
        field("archive.taxonomy", "envelope", ops, "object", True, "Taxonomy", lines.quote("`taxonomy` Object"), "prose",
              [edit("valid", "exact"), edit("invalid", "wrong_category", "incorrect taxonomy", set={"agents": "long_term.semantic"}),
               edit("invalid", "missing_key", "incorrect taxonomy", drop=["skillbox"]),
               edit("invalid", "extra_key", "incorrect taxonomy", set={"memagent": "agent_configuration"}),
               edit("invalid", "memagent_for_agents", "agents, rather than memagent", drop=["agents"], set={"memagent": "agent_configuration"}),
               edit("invalid", "not_object", replace=["agents"])]),
        field("archive.stores", "envelope", ops, "object", True, "Envelope", lines.quote("`stores` Object"), "prose",
              [edit("valid", "all_thirteen"), edit("valid", "record_in_every_store", "every store holds a record", fill=True),
               *[edit("invalid", f"missing_{s}", "missing store keys", drop=[s]) for s in MEMORIZZ_STORES],
               edit("invalid", "extra_key", "exactly the 13 store keys", set={"memagent": []}),
               edit("invalid", "not_array", "each containing an array of records", set={"shared_memory": {}}),
               edit("invalid", "null_store", "each containing an array of records", set={"shared_memory": None})]),
        field("record.shape", "record", ops, "object", True, "Records and relationships", records, "prose",
              [edit("valid", "id_and_data"), edit("invalid", "extra_member", "exactly id and data", set={"meta": {}}),
               edit("invalid", "data_absent", "exactly id and data", drop=["data"]),
               edit("invalid", "data_not_object", "data holds the record fields", set={"data": "text"}),
               edit("invalid", "not_object", "an object", replace="record")]),
        field("record.data.id", "record", ops, "id", False, "Records and relationships", ids, "prose",
              [edit("valid", "absent"), edit("valid", "matches", set={"id": "<id>"}),
               edit("invalid", "differs", "must match the enclosing id", set={"id": "<other>"}),
               edit("invalid", "null", "present, so it must match (M4)", set={"id": None}),
               edit("valid", "underscore_matches", set={"_id": "<id>"}),
               edit("invalid", "underscore_differs", "must match the enclosing id", set={"_id": "<other>"})]),
        field("record.data.natural_id", "record", ops, "id", False, "Records and relationships", ids, "prose",
              [*[c for store, key in (("agents", "agent_id"), ("personas", "persona_id"), ("summaries", "summary_id"))
                 for c in (edit("valid", f"{key}_matches", store=store, set={key: "<id>"}),
                           edit("invalid", f"{key}_differs", "must also agree with it", store=store, set={key: "<other>"}))],
               edit("open", "natural_null", "null: read as absent by a document's rules (M4); an importer may hold that it does not agree",
                    store="personas", set={"persona_id": None}),
               edit("open", "tool_id_differs", "not named: bound only under M4:implied", store="toolbox", set={"tool_id": "<other>"})]),
        field("record.id.uniqueness", "record", ops, "id", True, "Records and relationships",
              lines.quote("id is a nonempty string, unique within its store, with at most 512 characters."), "prose",
              [edit("valid", "unique"), edit("invalid", "duplicate_in_store", "unique within its store", twice="knowledge_base"),
               edit("valid", "same_in_two_stores", "unique within its store, not across stores (M3)", twice="short_term_memory")]),
        field("manifest.required", "envelope", ops, "object", True, "Manifest", required, "prose",
              [edit("valid", "all_present"), *[edit("invalid", f"{m}_absent", "a required field", drop=[m]) for m in MEMORIZZ_MANIFEST]]),
        field("manifest.scope.user_scoped", "envelope", ops, "boolean", False, "Manifest", lines.quote("scope.user_scoped distinguishes"), "prose",
              [edit("valid", "absent"), edit("valid", "true_anonymous", "anonymous records", set={"user_scoped": True, "user_id": None}),
               edit("valid", "true_user", set={"user_scoped": True, "user_id": "user-1"}),
               edit("valid", "false_administrative", "not filtered by user", set={"user_scoped": False, "user_id": None}),
               edit("invalid", "not_boolean", as_data, set={"user_scoped": "yes"})]),
        field("manifest.counts", "envelope", ops, "object", True, "Manifest", lines.quote("`counts` Record count for every store"), "prose",
              [edit("valid", "every_store_with_zeros"), edit("invalid", "zero_missing", "including zeros", drop=["shared_memory"]),
               edit("invalid", "wrong_count", "incorrect counts", set={"knowledge_base": 2}),
               edit("invalid", "extra_key", "a count for every store, no other (M5)", set={"memagent": 0}),
               edit("invalid", "as_string", "incorrect counts", set={"knowledge_base": "1"})]),
        field("manifest.includes", "envelope", ops, "object", True, "Manifest", lines.quote("`includes` Whether delegates"), "prose",
              [edit("valid", "four_false"), edit("valid", "embeddings_requested", "requested, none present", set={"embeddings": True}),
               edit("valid", "all_requested", set={"delegates": True, "history": True, "context": True, "embeddings": True}),
               edit("open", "empty_object", "the page names the four things, not their keys (M5)", replace={}),
               edit("invalid", "not_boolean", as_data, set={"delegates": "yes"})]),
        *[field(f"manifest.{name}", "envelope", ops, "array", False, "Manifest", lines.quote(f"`{name}`"), "prose",
                [edit("valid", "absent", "when present", drop=[name]), edit("valid", "empty", set={name: []}),
                 edit("valid", "strings", set={name: [sample]}), edit("valid", "objects", "M5: entries strings or objects", set={name: [{"id": sample}]}),
                 edit("invalid", "not_array", as_data, set={name: sample})])
          for name, sample in (("omitted_fields", "agents.api_key"), ("external_references", "msg-outside"))],
        field("manifest.warnings", "envelope", ops, "array", True, "Manifest", lines.quote("`warnings` Export omissions"), "prose",
              [edit("valid", "empty", set={"warnings": []}), edit("valid", "strings", set={"warnings": ["attachments are not included"]}),
               edit("valid", "objects", "M5: entries strings or objects", set={"warnings": [{"code": "note", "message": "m"}]}),
               edit("invalid", "not_array", as_data, set={"warnings": "none"})]),
        field("archive.integrity.algorithm", "envelope", ["import"], "string", True, "Envelope", lines.quote("`integrity` Object"), "prose",
              [edit("valid", "sha256", set={"algorithm": "sha256"}), edit("invalid", "uppercase", set={"algorithm": "SHA256"}),
               edit("invalid", "other", set={"algorithm": "md5"}), edit("invalid", "absent", drop=["algorithm"]),
               edit("invalid", "extra_member", "exactly algorithm and digest (M1)", set={"signed": False})]),
        field("archive.record_count", "envelope", ["import"], "integer", True, "Integrity and validation",
              lines.quote("The default archive limits are 50 MiB and 100,000 records."), "prose",
              [cls("at_limit", "literal", "valid", "the limit is inclusive (M7); option max_records names another", value=100_000),
               cls("above_limit", "literal", "invalid", "one record over the limit", value=100_001)], limits={"maximum": 100_000}),
        field("record.data.text", "record", ops, "string", False, "Integrity and validation", lines.quote("literal Unicode"), "prose",
              [*[cls(k, "string", "valid", "read back byte for byte, never normalised", kind=k)
                 for k in (*STRING_KINDS, "newline", "bidi", "zero_width", "unicode_line_breaks")],
               cls("safe_integer_as_string", "literal", "valid", "exact integers beyond the safe range as strings", value="9007199254740993")]),
        field("record.data.number_more", "record", ops, "number", False, "Integrity and validation",
              lines.quote("Numbers use a shared Python/browser representation"), "prose",
              [cls(cid, "number", "valid", text=text) for cid, text in (
                  ("exp_22", "1e22"), ("below_1e21", "999999999999999900000"), ("negative_small", "-1e-7"), ("subnormal", "5e-324"),
                  ("max_double", "1.7976931348623157e308"), ("fraction", "0.1"), ("safe_max", "9007199254740991"),
                  ("negative_beyond_safe", "-9007199254740993"))]),
    ]


def memorizz_request_fields(lines: SpecLines) -> list[dict[str, Any]]:
    """The request parameters of the target operations (errata "Target operations"): an export's selection,
    an import's mode and conflict policy, and what the destination already holds of the archive."""
    export, imports = ["export"], ["import_archive"]
    scope = lines.quote("`scope` Selected agent/namespace")
    one_type = lines.quote("even when an export selects only one type")
    conflicts = lines.quote("Imports preview conflicts before writing")
    unmatched = "selects nothing: tried alone, it would mask every pair of its row"
    return [
        field("export.memory_id", "body", export, "string", False, "Manifest", scope, "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"), cls("owner_namespace", "literal", "valid", value="<ns>"),
               cls("delegate_namespace", "literal", "valid", value="<ns_delegate>"),
               dict(cls("unknown", "literal", "valid", unmatched, value="<unknown>"), combine=False)]),
        field("export.agent_id", "body", export, "string", False, "Manifest", scope, "prose",
              [cls("absent", "absent", "valid", "every optional parameter alone"), cls("owner", "literal", "valid", value="<owner>"),
               cls("delegate", "literal", "valid", value="<delegate>"),
               dict(cls("unknown", "literal", "open", "refused, or an empty selection (M61)", value="<unknown>"), combine=False)]),
        field("export.types", "body", export, "array", False, "Envelope", one_type, "prose",
              [cls("absent", "absent", "valid", "every store"), cls("one_store", "literal", "valid", value=["summaries"]),
               cls("two_stores", "literal", "valid", value=["knowledge_base", "agents"]),
               cls("all_thirteen", "literal", "valid", value=list(MEMORIZZ_STORES)),
               dict(cls("empty", "literal", "open", "every store, no store, or refused (M61)", value=[]), combine=False),
               dict(cls("unknown_store", "literal", "open", "refused, or nothing of it (M61)", value=["memagent"]), combine=False)]),
        field("export.include_embeddings", "body", export, "boolean", False, "What is portable", lines.quote("Embeddings are excluded by default"),
              "prose", [cls("absent", "absent", "valid", "excluded by default"), cls("true", "literal", "valid", value=True),
                        cls("false", "literal", "valid", value=False)]),
        field("import.mode", "body", imports, "enum", True, "Records and relationships", lines.quote("Restoring with preserved IDs"), "prose",
              [*[cls(f"is_{m}", "literal", "valid", value=m) for m in ("preview", "restore", "clone")],
               cls("unknown", "literal", "invalid", "not a mode: refused, nothing written", value="merge")], enum=["preview", "restore", "clone"]),
        field("import.conflict", "body", imports, "enum", False, "What is portable", conflicts, "prose",
              [cls("absent", "absent", "valid", "the default policy, error (errata M13)"),
               *[cls(f"is_{c}", "literal", "valid", value=c) for c in ("error", "skip", "replace")],
               cls("unknown", "literal", "invalid", "not a policy: refused, nothing written", value="merge")], enum=["error", "skip", "replace"]),
        field("import.held", "body", imports, "object", True, "What is portable", conflicts, "prose",
              [cls("one_held", "literal", "valid", "it holds the first record, changed", value=1),
               cls("none_held", "literal", "valid", "the destination holds none of the archive's records", value=0),
               cls("all_held", "literal", "valid", "it holds every record, changed", value=3)]),
    ]


def memoryai_table() -> dict[str, Any]:
    lines = SpecLines("memoryai")
    fields = [
        field("bundle.format", "envelope", ["import", "export"], "string", True, "§3.1", lines.quote('"format": "memoryai-bundle",'), "prose",
              [*presence(True, False, "invalid"), cls("the_value", "literal", "valid", value="memoryai-bundle"), cls("other", "literal", "invalid", value="memoryai")]),
        field("bundle.version", "envelope", ["import", "export"], "integer", True, "§3.1", lines.quote('"version": 1,'), "prose",
              [*presence(True, False, "invalid"), cls("one", "number", "valid", text="1"), cls("zero", "number", "invalid", text="0"),
               cls("above_supported", "number", "invalid", text="999"), cls("float", "number", "open", text="1.0")]),
        field("manifest.scope", "envelope", ["export"], "enum", True, "§3", lines.quote('"scope": "full" | "dna_only" | "since",'), "prose",
              enum_classes(["full", "dna_only", "since"], True)),
        field("manifest.since", "envelope", ["export"], "timestamp", False, "§3", lines.quote('"since": "<ISO-8601 datetime|null>",'), "prose",
              memoryai_since_classes()),
        field("manifest.embedding_dim", "envelope", ["import", "export"], "integer", True, "§3", lines.quote('"embedding_dim": <integer>,'), "prose",
              memoryai_dim_classes()),
        *memoryai_envelope_fields(lines),
        field("chunk.content", "record", ["import", "export"], "string", True, "§3.2", lines.quote('"content": "<string>", (REQUIRED)'), "prose",
              string_classes(True, null_expect="invalid")),
        field("chunk.memory_type", "record", ["import", "export"], "string", True, "§3.2", lines.quote('"memory_type": "<string>", (REQUIRED'), "prose",
              [*presence(True, False, "invalid"), *[cls(f"is_{t}", "literal", "valid", value=t) for t in ("preference", "decision", "identity", "pitfall", "procedure")],
               *[cls(f"is_{t}", "literal", "valid", value=t) for t in ("fact", "episodic", "goal", "error", "life_event")],
               cls("vendor", "literal", "valid", "§3.7: vendor-specific values prefixed with x_", value="x_memconform_note"),
               cls("unknown", "literal", "open", value="whim")]),
        field("chunk.importance", "record", ["import", "export"], "number", False, "§3.2", lines.quote('"importance": <float 0..1>,'), "prose",
              number_classes(False, 0, 1)),
        field("chunk.embedding", "record", ["import", "export"], "string", False, "§3.5", lines.quote("A **base64-encoded** little-endian array"), "prose",
              [cls("null", "null", "valid"), cls("little_endian", "literal", "valid", value="le"), cls("big_endian", "literal", "invalid", value="be"),
               cls("wrong_length", "literal", "invalid", value="short")]),
        *memoryai_chunk_fields(lines),
        *memoryai_edge_fields(lines),
        *memoryai_entity_fields(lines),
        *memoryai_section_fields(lines),
        *memoryai_import_fields(lines),
    ]
    combinations = [
        {"id": "export_request", "operation": "export", "parameters": ["manifest.scope", "manifest.since"]},
        {"id": "import_request", "operation": "import", "parameters": ["import.transport", "import.bundle_kind"]},
    ]
    return {"spec": "memoryai", "spec_text": f"fixtures/specs/{SPEC_FILES['memoryai']}", "derived_from": [], "fields": fields,
            "combinations": combinations}


SHAPE_ONLY = "§3.2's shape gives the type without a keyword and states no consumer duty for it (errata E60)"


def memoryai_dim_classes() -> list[dict[str, Any]]:
    """`embedding_dim`: an integer whose only tie is the length of embeddings (§3.5); 0, what a producer without
    embeddings may write, is open on both sides (interop hole I4: the spec gives no minimum), as the validator reads it."""
    return [dict(c, expect="open", why="errata I4: `<integer>` with no minimum; 0 in a bundle without embeddings")
            if c["id"] == "beyond_minimum" else c for c in number_classes(True, 1, None, integer=True)]


def memoryai_since_classes() -> list[dict[str, Any]]:
    """`since`: the timestamp classes, another offset valid (errata E10: the same instant in +05:30 selects the same chunks)."""
    return [dict(c, expect="valid", why="errata E10: the same instant in another offset") if c["id"] == "non_utc" else c
            for c in timestamp_classes(False, nullable=True)]


def memoryai_envelope_fields(lines: SpecLines) -> list[dict[str, Any]]:
    ops = ["import", "export"]
    informational = "the manifest's tenant fields are informational only (§3.8): any value accepted"
    tenant_strings = [*presence(False, True), cls("empty", "literal", "valid", value=""),
                      *[cls(k, "string", "valid", kind=k) for k in ("ascii", "bmp", "astral", "control")]]
    return [
        field("bundle.generator", "envelope", ops, "string", False, "§3", lines.quote('"generator": "<implementation-name>/<version>",'), "prose",
              [*presence(False, False), cls("name_version", "literal", "valid", value="someone/1.2.3"),
               cls("empty", "literal", "open", "an empty string: it names no implementation, so a producer is warned "
                   "(envelope_optional_fields, errata E20); a consumer has no duty for it", value=""),
               *[cls(k, "string", "valid", kind=k) for k in ("bmp", "astral", "control")]]),
        field("bundle.exported_at", "envelope", ops, "timestamp", False, "§3", lines.quote('"exported_at": "<ISO-8601 datetime>",'), "prose",
              [dict(c, expect="open", why="informational: a consumer has no duty for an unreadable export time (errata E60)")
               if c["expect"] == "invalid" else c for c in timestamp_classes(False)]),
        field("manifest.tenant_id", "envelope", ops, "id", False, "§3", lines.quote('"tenant_id": "<uuid|null>",'), "prose",
              [*presence(False, True), *[cls(k, "uuid", "valid", kind=k) for k in ("v4", "v4_upper", "v1")],
               *[cls(k, "uuid", "open", informational, kind=k) for k in ("no_dashes", "braced", "not_hex")]], nullable=True),
        field("manifest.tenant_name", "envelope", ops, "string", False, "§3", lines.quote('"tenant_name": "<string|null>",'), "prose",
              tenant_strings, nullable=True),
        field("manifest.tenant_plan", "envelope", ops, "string", False, "§3", lines.quote('"tenant_plan": "<string|null>",'), "prose",
              tenant_strings, nullable=True),
        field("manifest.embedding_model", "envelope", ops, "string", True, "§3.1", lines.quote("The `manifest` object MUST"), "prose",
              [*presence(True, False), cls("own_model", "literal", "valid", "the target's own model", value="{model}"),
               cls("other_model", "literal", "valid", "another model: embeddings dropped (§3.5), chunks kept", value="someone-else/embed-1"),
               cls("astral", "string", "valid", kind="astral"),
               cls("empty", "literal", "open", "an empty string; the spec sets no minimum", value="")]),
        field("manifest.counts", "envelope", ops, "object", False, "§3", lines.quote('"counts": { "chunks": N, "memory_edges": N, ... },'), "prose",
              [*presence(False, False), cls("accurate", "literal", "valid", value={"chunks": 1, "memory_edges": 0, "entities": 0}),
               cls("chunks_only", "literal", "valid", "`...`: other sections may be left out", value={"chunks": 1}),
               cls("empty", "literal", "valid", value={}),
               cls("inaccurate", "literal", "open", "accurate counts are a producer's duty (§5 Level 1), not a consumer's", value={"chunks": 99}),
               cls("not_object", "literal", "open", SHAPE_ONLY, value=[1])]),
        field("manifest.checksum", "envelope", ops, "string", False, "§3.6", lines.quote("A consumer SHOULD verify the checksum on import and warn (not reject) on"), "prose",
              [cls("absent", "absent", "open", "a bundle without its checksum is not conformant (§5 Level 1): a consumer may refuse it or warn"),
               cls("null", "null", "open", "the spec does not say whether null means absent"),
               cls("sealed", "literal", "valid", value="{checksum}"),
               cls("upper_hex", "literal", "valid", "errata E1: hex of either case", value="{CHECKSUM}"),
               cls("mismatch", "literal", "open", "§3.6 SHOULD warn (not reject); the bundle is not conformant, so a refusal is no failure here",
                   value="0000000000000000000000000000000000000000000000000000000000000000")]),
    ]


def memoryai_chunk_fields(lines: SpecLines) -> list[dict[str, Any]]:
    ops = ["import", "export"]
    ids = [cls("absent", "absent", "valid", "optional: ids are local to each implementation"), cls("null", "null", "open", SHAPE_ONLY),
           cls("one", "number", "valid", text="1"), cls("zero", "number", "valid", text="0"), cls("negative", "number", "valid", text="-1"),
           cls("above_2_53", "number", "valid", text="9007199254740993"), cls("max_int64", "number", "valid", text="9223372036854775807"),
           cls("above_int64", "number", "valid", "an integer beyond 64 bits: JSON sets no limit", text="18446744073709551617"),
           cls("integral_float", "number", "open", SHAPE_ONLY, text="5.0"), cls("as_string", "literal", "open", SHAPE_ONLY, value="7")]
    hashes = [cls("absent", "absent", "valid", "optional: the consumer hashes the content"), cls("null", "null", "open", SHAPE_ONLY),
              cls("matching", "literal", "valid", value="{hash}"), cls("upper_hex", "literal", "valid", "errata E2: hex of either case", value="{HASH}"),
              cls("nfc_of_content", "literal", "open", "errata E2: the hash of the NFC form", value="{nfc_hash}"),
              cls("of_other_content", "literal", "open", "a hash that is not the content's: trusted or recomputed", value="{other_hash}"),
              cls("not_string", "literal", "invalid", value=12345)]
    bools = [*presence(False, False), cls("true", "literal", "valid", value=True), cls("false", "literal", "valid", value=False),
             cls("as_string", "literal", "open", SHAPE_ONLY, value="true"), cls("as_number", "literal", "open", SHAPE_ONLY, value=1)]
    tags = [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in array_classes(False)]
    tags += [cls(k, "literals", "valid", values=[[v]]) for k, v in (("nfd_item", "cafe\u0301"), ("control_item", "bell\u0007"),
                                                                     ("separator_item", "a,b c"), ("empty_item", ""))]
    metadata = [dict(c, expect="open", why=SHAPE_ONLY) if c["id"] in ("null", "not_object") else c for c in object_classes(False)]
    metadata += [cls(f"number_{k}", "literal", "valid", "a number form the checksum serialises (§3.6)", value={"n": json.loads(t)})
                 for k, t in NUMBER_EDGES]
    def shape_open(classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in classes]
    return [
        field("chunk.id", "record", ops, "integer", False, "§3.2", lines.quote('"id": <integer>,'), "prose", ids),
        field("chunk.content_hash", "record", ops, "string", False, "§3.2", lines.quote('"content_hash": "<sha256 hex>",'), "prose", hashes),
        field("chunk.embedding_model", "record", ops, "string", False, "§3.2", lines.quote('"embedding_model": "<string>",'), "prose",
              [*presence(False, False), cls("own_model", "literal", "valid", value="{model}"),
               cls("other_model", "literal", "valid", value="someone-else/embed-1"), cls("astral", "string", "valid", kind="astral"),
               cls("not_string", "literal", "open", SHAPE_ONLY, value=3)]),
        field("chunk.tags", "record", ops, "array", False, "§3.2", lines.quote('"tags": [<string>, ...],'), "prose", tags),
        field("chunk.zone", "record", ops, "enum", False, "§3.2", lines.quote('"zone": "standard" | "important" | "critical" | "ephemeral",'), "prose",
              enum_classes(["standard", "important", "critical", "ephemeral"], False), enum=["standard", "important", "critical", "ephemeral"]),
        field("chunk.is_pinned", "record", ops, "boolean", False, "§3.2", lines.quote('"is_pinned": <bool>,'), "prose", bools),
        field("chunk.decay_score", "record", ops, "number", False, "§3.2", lines.quote('"decay_score": <float 0..1>,'), "prose",
              number_classes(False, 0, 1), limits={"minimum": 0, "maximum": 1}),
        field("chunk.tier", "record", ops, "enum", False, "§3.2", lines.quote('"tier": "hot" | "warm" | "cold",'), "prose",
              enum_classes(["hot", "warm", "cold"], False), enum=["hot", "warm", "cold"]),
        field("chunk.created_at", "record", ops, "timestamp", False, "§3.2", lines.quote('"created_at": "<ISO-8601>",'), "prose",
              shape_open(timestamp_classes(False))),
        field("chunk.accessed_at", "record", ops, "timestamp", False, "§3.2", lines.quote('"accessed_at": "<ISO-8601>",'), "prose",
              shape_open(timestamp_classes(False))),
        field("chunk.valid_until", "record", ops, "timestamp", False, "§3.2", lines.quote('"valid_until": "<ISO-8601 | null>",'), "prose",
              shape_open(timestamp_classes(False, nullable=True)), nullable=True),
        field("chunk.metadata", "record", ops, "object", False, "§3.2", lines.quote('"metadata": <object>'), "prose", metadata),
    ]


def memoryai_edge_fields(lines: SpecLines) -> list[dict[str, Any]]:
    ops = ["import", "export"]
    line = lines.quote('{ "chunk_a": <int>, "chunk_b": <int>, "edge_type": "<string>",')
    def end(name: str) -> list[dict[str, Any]]:
        return [cls("absent", "absent", "invalid", "an edge needs both ends"), cls("null", "null", "invalid", "an edge needs both ends"),
                cls("in_bundle", "literal", "valid", "the id of a chunk of the same bundle", value="{id}"),
                cls("missing_chunk", "literal", "invalid", "no chunk of the bundle has this id: the edge cannot be stored", value=424242),
                cls("as_string", "literal", "open", SHAPE_ONLY, value="{id_text}")]
    weight = [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in number_classes(False)]
    count = [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in number_classes(False, 0, None, integer=True)]
    return [
        field("edge.chunk_a", "record", ops, "integer", True, "§3.3", line, "prose", end("chunk_a")),
        field("edge.chunk_b", "record", ops, "integer", True, "§3.3", line, "prose", end("chunk_b")),
        field("edge.edge_type", "record", ops, "string", True, "§3.8", lines.quote("UPSERT memory_edges on `(source, target, edge_type)`"), "prose",
              [cls("absent", "absent", "open", "part of the upsert key: the edge skipped or stored without one"), cls("null", "null", "open", SHAPE_ONLY),
               cls("empty", "literal", "open", "an empty string; the spec sets no minimum", value=""),
               *[cls(k, "string", "valid", kind=k) for k in ("ascii", "bmp", "astral", "nfc_nfd", "case_pair", "control")]]),
        field("edge.weight", "record", ops, "number", False, "§3.3", lines.quote('"weight": <float>, "co_activation_count": <int>,'), "prose", weight),
        field("edge.co_activation_count", "record", ops, "integer", False, "§3.3", lines.quote('"weight": <float>, "co_activation_count": <int>,'), "prose", count),
    ]


def memoryai_entity_fields(lines: SpecLines) -> list[dict[str, Any]]:
    ops = ["import", "export"]
    names = [dict(c, expect="invalid") if c["id"] == "null" else c for c in string_classes(True)]
    frequency = [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in number_classes(False, 0, None, integer=True)]
    def seen(classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(c, expect="open", why=SHAPE_ONLY) if c["expect"] == "invalid" else c for c in classes]
    return [
        field("entity.name", "record", ops, "string", True, "§3.4", lines.quote('{ "name": "<string>", (REQUIRED)'), "prose", names),
        field("entity.frequency", "record", ops, "integer", False, "§3.4", lines.quote('"frequency": <int>,'), "prose", frequency),
        field("entity.first_seen", "record", ops, "timestamp", False, "§3.4", lines.quote('"first_seen": "<ISO-8601>",'), "prose",
              seen(timestamp_classes(False))),
        field("entity.last_seen", "record", ops, "timestamp", False, "§3.4", lines.quote('"last_seen": "<ISO-8601>",'), "prose",
              seen(timestamp_classes(False))),
        field("entity.is_dna", "record", ops, "boolean", False, "§3.4", lines.quote('"is_dna": <bool> }'), "prose",
              [*presence(False, False), cls("true", "literal", "valid", value=True), cls("false", "literal", "valid", value=False),
               cls("as_string", "literal", "open", SHAPE_ONLY, value="false")]),
    ]


def memoryai_section_fields(lines: SpecLines) -> list[dict[str, Any]]:
    """The record arrays §3 names without a record shape: absent, empty, null, one record, not an array."""
    out = []
    for section, marker in (("l2_sessions", '"l2_sessions": [L2SessionRecord, ...],'), ("mood_states", '"mood_states": [MoodRecord, ...],'),
                            ("agents", '"agents": [AgentRecord, ...]')):
        out.append(field(f"bundle.{section}", "envelope", ["import", "export"], "array", False, "§3", lines.quote(marker), "prose",
                         [cls("absent", "absent", "valid", "the envelope requires only format, version and manifest (§3.1)"),
                          cls("empty", "literal", "valid", value=[]),
                          cls("null", "null", "open", "the spec does not say whether null means absent"),
                          cls("one_record", "literal", "open", "§3 gives this record no shape: stored or skipped", value=[{"id": 1, "note": "memconform"}]),
                          cls("not_array", "literal", "open", SHAPE_ONLY, value={"id": 1})]))
    return out


def memoryai_import_fields(lines: SpecLines) -> list[dict[str, Any]]:
    """The import request of the HTTP profile: its two endpoints and the kinds of bundle §3.8 tells apart."""
    kinds = ("fresh", "duplicate_in_bundle", "duplicate_of_held", "rival_row_of_held", "invalid_chunk", "reimport_same")
    return [
        field("import.transport", "operation", ["import"], "enum", True, "§4", lines.quote("| `POST` | `/v1/brain/import/file` | multipart |"), "prose",
              [cls("json_body", "literal", "valid", "POST /v1/brain/import", value="import_bundle"),
               cls("multipart_file", "literal", "valid", "POST /v1/brain/import/file", value="import_file")], enum=["import_bundle", "import_file"]),
        field("import.bundle_kind", "operation", ["import"], "enum", True, "§3.8", lines.quote("1. Skip chunks whose `content_hash` already exists in the target tenant"), "prose",
              [cls(k, "literal", "valid", value=k) for k in kinds], enum=list(kinds)),
    ]


TABLES = {"omp": omp_table, "emp": emp_table, "amps": amps_table, "memorizz": memorizz_table, "memoryai": memoryai_table}


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the tables on disk; write nothing")
    args = parser.parse_args(argv)
    stale = []
    for spec, make in TABLES.items():
        path = ROOT / "suites" / spec / "domain.json"
        text = render(make())
        if args.check:
            if not path.is_file() or path.read_text("utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, "utf-8")
            print(f"{path.relative_to(ROOT)}: {len(json.loads(text)['fields'])} fields")
    if stale:
        print("out of date (run scripts/make_domain_tables.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
