"""MemoRizz Memory Archive v1: constants, canonical JSON, one-pass validation, a bounded file reader.

Readings of ambiguous text are explained in errata/memorizz.md. Everything a check needs about one
archive is computed once (`scan`, `canonical_bytes`) and shared through the run's cache.
"""

from __future__ import annotations

import datetime as dt
import functools
import gc
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from memconform.core.profile import declare_option

SUITE = "memorizz"
SPEC = "MemoRizz Memory Archive v1"
FORMAT = "memorizz.memory"
VERSION = 1
ENVELOPE = ("format", "version", "taxonomy", "manifest", "stores", "integrity")
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
STORES = tuple(TAXONOMY)
MAX_ID_CHARS = 512
MANIFEST_REQUIRED = ("created_at", "memorizz_version", "source_provider", "scope", "counts", "record_count",
                     "includes", "warnings")
INCLUDES = ("delegates", "history", "context", "embeddings")
# errata M4: the three the spec names, and the ones its store names imply (<thing>_id)
NATURAL_IDS_NAMED = {"agents": "agent_id", "personas": "persona_id", "summaries": "summary_id"}
NATURAL_IDS_IMPLIED = {**NATURAL_IDS_NAMED, "toolbox": "tool_id", "skillbox": "skill_id",
                       "workflow_memory": "workflow_id", "entity_memory": "entity_id", "tool_log": "tool_log_id"}
# errata M6: explicit links to other records (scope fields such as memory_id are namespaces, not links)
LINK_FIELDS = ("delegates", "source_ids", "source_message_ids", "source_record_ids", "supersedes",
               "supersedes_id", "duplicate_of", "previous_event_id", "target_record_id")
# errata M9: identity and reference fields a clone rewrites; everything else (prose) is kept
REFERENCE_FIELDS = frozenset({"id", "_id", "memory_id", "memory_ids", "agent_id", "owner_agent_id", "delegates",
                              "record_id", "knowledge_base_id", "knowledge_base_ids", "thread_id", "run_id",
                              *LINK_FIELDS, *NATURAL_IDS_IMPLIED.values()})
NAMESPACE_FIELDS = ("memory_id", "memory_ids")
EMBEDDING_KEYS = frozenset({"embedding", "embeddings", "vector"})
CREDENTIAL_KEY = re.compile(
    r"(?i)(^|[_-])(api[_-]?key|apikey|secret|password|passwd|access[_-]?token|refresh[_-]?token|auth[_-]?token"
    r"|token|authorization|private[_-]?key|credentials?|client[_-]?secret)$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
MIB = 1024 * 1024
SIZES = {"50MiB": 50 * MIB, "100MiB": 100 * MIB, "4MiB": 4 * MIB, "1MiB": MIB, "256KiB": 256 * 1024, "4KiB": 4096}

declare_option(SUITE, "max_bytes", "50MiB", tuple(SIZES),
               "archive size limit (file bytes, or canonical bytes of a parsed document); 4MiB = inline MCP")
declare_option(SUITE, "max_records", "100000", ("100000", "1000000", "10000", "1000", "10"),
               "archive record limit (records across all 13 stores)")
declare_option(SUITE, "natural_ids", "implied", ("implied", "named"),
               "natural identity fields checked: agent/persona/summary/tool/skill/workflow/entity/tool_log ids, "
               "or only the three the spec names")
declare_option(SUITE, "key_order", "codepoint", ("codepoint", "utf16"),
               "canonical JSON object key order: Unicode code points (Python) or UTF-16 code units (browser)")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---- canonical JSON ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)  # the same few special floats (1.0, 0.0, 1e-7) recur across records
def number_text(value: float) -> str:
    """A float as the spec writes it: shortest round-trip digits, decimal from 1e-6 to below 1e21."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    if value == 0:
        return "0"  # also negative zero
    shortest = repr(value)
    if 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(shortest), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = shortest.partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    exp = int(exponent)
    return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"


def float_is_plain(value: float) -> bool:
    """True when Python's repr of the float is already the spec's form (no special number rule applies)."""
    return math.isfinite(value) and not value.is_integer() and 1e-4 <= abs(value) < 1e16


def _sort_key(order: str) -> Callable[[str], Any] | None:
    return (lambda k: k.encode("utf-16-be")) if order == "utf16" else None


def canonical_text_exact(value: Any, key_order: str = "codepoint") -> str:
    """The spec's canonical JSON, written node by node (the slow path, exact for every number)."""
    key = _sort_key(key_order)
    dumps = json.dumps
    out: list[str] = []
    push = out.append

    def write(node: Any) -> None:
        if isinstance(node, str):
            push(dumps(node, ensure_ascii=False))
        elif isinstance(node, dict):
            push("{")
            for i, k in enumerate(sorted(node, key=key)):
                if not isinstance(k, str):
                    raise ValueError(f"object key {k!r} is not a string")
                if i:
                    push(",")
                push(dumps(k, ensure_ascii=False))
                push(":")
                write(node[k])
            push("}")
        elif isinstance(node, list | tuple):
            push("[")
            for i, item in enumerate(node):
                if i:
                    push(",")
                write(item)
            push("]")
        elif node is None or isinstance(node, bool | int):
            push(dumps(node))
        elif isinstance(node, float):
            push(number_text(node))
        else:
            raise ValueError(f"{type(node).__name__} is not a JSON value")

    write(value)
    return "".join(out)


def needs_exact_writer(value: Any) -> bool:
    """Does any float in the value need a special number rule (or is it not finite)?"""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and not float_is_plain(node):
            return True
    return False


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


_SCALARS = frozenset({str, int, bool, type(None)})


def canonical_text_marked(value: Any) -> str:
    """The C encoder, with each float needing a special rule swapped for a marker string, then written in.

    The swap is made in place and undone before returning, so nothing is copied. A marker is a random
    nonce and an index; if the data itself happens to hold such a string, the count of markers found
    differs and the exact writer is used instead.
    """
    if type(value) is float:
        return number_text(value)
    nonce = "\u2063mz" + os.urandom(8).hex() + "-"  # an invisible separator: never escaped, never in ids
    swapped: list[tuple[Any, Any, float]] = []  # (container, key, the float it held)
    plain, scalars = float_is_plain, _SCALARS
    stack = [value]
    try:
        while stack:
            node = stack.pop()
            for k, v in (node.items() if type(node) is dict else enumerate(node)):
                tv = type(v)
                if tv in scalars:
                    continue
                if tv is dict or tv is list:
                    stack.append(v)
                elif tv is float and not plain(v):
                    node[k] = f"{nonce}{len(swapped)}"
                    swapped.append((node, k, v))
        text = _dumps(value)
    finally:
        for node, k, v in swapped:
            node[k] = v
    parts = re.split('"' + nonce + r'(\d+)"', text)
    if len(parts) != 2 * len(swapped) + 1:
        return canonical_text_exact(value)
    parts[1::2] = [number_text(swapped[int(i)][2]) for i in parts[1::2]]
    return "".join(parts)


def canonical_text(value: Any, key_order: str = "codepoint", exact: bool | None = None) -> str:
    """Canonical JSON text. `exact`: whether a special float is known to be present (None: look)."""
    if key_order != "codepoint":
        return canonical_text_exact(value, key_order)
    if not (needs_exact_writer(value) if exact is None else exact):
        # every float prints the same under repr, so the C encoder gives the very same text
        return _dumps(value)
    return canonical_text_marked(value)


def without_integrity(archive: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in archive.items() if k != "integrity"}


def canonical_bytes(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None) -> bytes:
    """What the checksum covers: canonical UTF-8 JSON of every field except integrity."""
    return canonical_text(without_integrity(archive), key_order, exact).encode("utf-8")


def digest(archive: dict[str, Any], key_order: str = "codepoint") -> str:
    return hashlib.sha256(canonical_bytes(archive, key_order)).hexdigest()


def seal(archive: dict[str, Any], key_order: str = "codepoint") -> dict[str, Any]:
    """Fill counts, record_count and integrity, as a producer must (the archive is changed in place)."""
    stores = archive.get("stores", {})
    manifest = archive.setdefault("manifest", {})
    manifest["counts"] = {k: len(v) for k, v in stores.items()}
    manifest["record_count"] = sum(len(v) for v in stores.values())
    archive.pop("integrity", None)
    archive["integrity"] = {"algorithm": "sha256", "digest": digest(archive, key_order)}
    return archive


def empty_archive(**manifest: Any) -> dict[str, Any]:
    man = {"created_at": utc_now(), "memorizz_version": "memconform", "source_provider": "memconform",
           "scope": {"agent_id": None, "memory_id": None, "agent_ids": [], "user_id": None, "user_scoped": False,
                     "application_id": None},
           "counts": {}, "record_count": 0,
           "includes": {"delegates": True, "history": True, "context": True, "embeddings": False},
           "warnings": []}
    man.update(manifest)
    return {"format": FORMAT, "version": VERSION, "taxonomy": dict(TAXONOMY), "manifest": man,
            "stores": {k: [] for k in STORES}}


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


# ---- reading a file once, within limits -------------------------------------------------------

@dataclass
class Archive:
    """A parsed archive and what reading it found. A plain dict given to the checks is wrapped in one."""

    value: Any
    file_bytes: int | None = None  # size of the file it came from; None: a document given parsed
    refused: str = ""  # why it was not (fully) read: over a limit
    exact: bool | None = None  # a float needing the special number rules was seen while parsing
    canonical: bytes | None = None
    canonical_error: str = ""
    path: str | None = None  # a file opened for `memconform validate`, read when a check first needs it

    @property
    def unread(self) -> bool:
        return self.path is not None and self.value is None and not self.refused


def open_file(path: str | os.PathLike[str]) -> Archive:
    """The document `memconform validate` hands the checks: read later, once, within the profile's limits."""
    return Archive(value=None, path=os.fspath(path))


def sniff(head: bytes) -> bool:
    """Does the start of a file name this format? (memorizz and canonical writers put format first)"""
    return re.search(rb'"format"\s*:\s*"memorizz\.memory"', head) is not None


def detect(doc: Any) -> bool:
    if isinstance(doc, bytes):
        return sniff(doc)  # the head of a file
    if isinstance(doc, Archive) and doc.unread:
        return True
    value = doc.value if isinstance(doc, Archive) else doc
    return isinstance(value, dict) and value.get("format") == FORMAT


def record_total(value: Any) -> int:
    stores = value.get("stores") if isinstance(value, dict) else None
    if not isinstance(stores, dict):
        return 0
    return sum(len(v) for v in stores.values() if isinstance(v, list))


def parse_bytes(raw: bytes, file_bytes: int | None = None) -> Archive:
    """Parse once; the float hook notes whether the fast canonical writer is exact for this archive."""
    special: list[bool] = []

    def parse_float(text: str) -> float:
        value = float(text)
        if not special and not float_is_plain(value):
            special.append(True)
        return value

    collecting = gc.isenabled()
    gc.disable()  # parsed JSON holds no cycles: collecting while millions of objects appear is wasted time
    try:
        value = json.loads(raw, parse_float=parse_float)
    finally:
        if collecting:
            gc.enable()
    return Archive(value=value, file_bytes=len(raw) if file_bytes is None else file_bytes, exact=bool(special))


def load_file(path: str | os.PathLike[str], max_bytes: int, max_records: int) -> Archive:
    """Read an archive file: its size is checked before reading, records counted right after parsing."""
    size = os.stat(path).st_size
    if size > max_bytes:
        return Archive(value=None, file_bytes=size, refused=f"file is {size} bytes, over the limit of {max_bytes}",
                       path=os.fspath(path))
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)  # bounded even if the file grew since stat
    if len(raw) > max_bytes:
        return Archive(value=None, file_bytes=len(raw), refused=f"file grew past the limit of {max_bytes} bytes")
    archive = parse_bytes(raw, len(raw))
    archive.path = os.fspath(path)
    del raw
    total = record_total(archive.value)
    if total > max_records:
        archive.refused = f"{total} records, over the limit of {max_records}"
    return archive


# ---- one pass over an archive: every structural rule ------------------------------------------

@dataclass
class Problem:
    rule: str
    title: str
    received: Any
    expected: Any
    path: str


def scan(value: Any, natural_ids: dict[str, str]) -> dict[str, list[Problem]]:
    """Check every rule that needs no checksum, in one walk; problems grouped by rule (= check name)."""
    found: dict[str, list[Problem]] = {}

    def add(rule: str, title: str, received: Any, expected: Any, path: str) -> None:
        found.setdefault(rule, []).append(Problem(rule, title, received, expected, path))

    if not isinstance(value, dict):
        add("envelope_fields", "the archive is not a JSON object", type(value).__name__, "object", "$")
        return found
    keys = set(value)
    for name in ENVELOPE:
        if name not in keys:
            add("envelope_fields", f"envelope field {name} is missing", "<absent>", name, f"$.{name}")
    for name in sorted(keys - set(ENVELOPE)):
        add("envelope_fields", f"unknown envelope field {name}", name, list(ENVELOPE), f"$.{name}")
    if "format" in value and value["format"] != FORMAT:
        add("format_literal", "format is not memorizz.memory", value["format"], FORMAT, "$.format")
    if "version" in value and not (is_int(value["version"]) and value["version"] == VERSION):
        add("version_one", "version is not the integer 1", value["version"], 1, "$.version")
    if "taxonomy" in value and value["taxonomy"] != TAXONOMY:
        tax = value["taxonomy"]
        if not isinstance(tax, dict):
            add("taxonomy_canonical", "taxonomy is not an object", tax, TAXONOMY, "$.taxonomy")
        else:
            for k in sorted(set(tax) | set(TAXONOMY)):
                if tax.get(k, "<absent>") != TAXONOMY.get(k, "<absent>"):
                    add("taxonomy_canonical", f"taxonomy entry {k} is not the canonical one",
                        tax.get(k, "<absent>"), TAXONOMY.get(k, "<absent>"), f"$.taxonomy.{k}")
    stores = value.get("stores")
    sizes: dict[str, int] = {}
    ids: set[str] = set()
    linking: list[dict[str, Any]] = []  # data (or structured content) that holds explicit links
    manifest = value.get("manifest")
    includes = manifest.get("includes") if isinstance(manifest, dict) else None
    # errata M8: only an archive that says it includes embeddings may carry them
    no_embeddings = not (isinstance(includes, dict) and includes.get("embeddings") is True)
    if "stores" in value:
        if not isinstance(stores, dict):
            add("stores_complete", "stores is not an object", type(stores).__name__, "object", "$.stores")
        else:
            for k in STORES:
                if k not in stores:
                    add("stores_complete", f"store key {k} is missing", "<absent>", "[]", f"$.stores.{k}")
            for k in sorted(set(stores) - set(STORES)):
                add("stores_complete", f"unknown store key {k}", k, list(STORES), f"$.stores.{k}")
            for k, records in stores.items():
                if not isinstance(records, list):
                    add("stores_complete", f"store {k} is not an array", type(records).__name__, "array",
                        f"$.stores.{k}")
                    continue
                sizes[k] = len(records)
                _scan_store(k, records, natural_ids.get(k), add, ids, no_embeddings, linking)
    _scan_manifest(value.get("manifest"), "manifest" in value, sizes, add)
    if isinstance(value.get("manifest"), dict) and "stores" in value:
        _scan_links(value["manifest"], linking, ids, add)
    integ = value.get("integrity")
    if "integrity" in value:
        if not isinstance(integ, dict) or set(integ) != {"algorithm", "digest"}:
            add("integrity_form", "integrity is not exactly {algorithm, digest}",
                sorted(integ) if isinstance(integ, dict) else integ, ["algorithm", "digest"], "$.integrity")
        else:
            if integ["algorithm"] != "sha256":
                add("integrity_form", "integrity.algorithm is not sha256", integ["algorithm"], "sha256",
                    "$.integrity.algorithm")
            if not (isinstance(integ["digest"], str) and HEX64.match(integ["digest"])):
                add("integrity_form", "integrity.digest is not 64 lowercase hexadecimal characters",
                    integ["digest"], "64 of [0-9a-f]", "$.integrity.digest")
    return found


_LINK_SET = frozenset(LINK_FIELDS)


def _scan_store(store: str, records: list[Any], natural: str | None,
                add: Callable[[str, str, Any, Any, str], None], all_ids: set[str], no_embeddings: bool,
                linking: list[dict[str, Any]]) -> None:
    """The per-record rules; the hot loop of validating a big archive, so it stays flat."""
    seen: set[str] = set()
    remember = seen.add
    link_set, embedding_keys = _LINK_SET, EMBEDDING_KEYS
    for i, record in enumerate(records):
        if type(record) is not dict or len(record) != 2 or "id" not in record or "data" not in record:
            add("record_shape", "a record is not exactly {id, data}",
                sorted(record) if isinstance(record, dict) else record, ["data", "id"], f"$.stores.{store}[{i}]")
            if not isinstance(record, dict):
                continue
        rid = record.get("id")
        if type(rid) is str and 0 < len(rid) <= MAX_ID_CHARS:
            if rid in seen:
                add("record_id_unique", f"record id {rid!r} appears twice in {store}", rid, "unique in its store",
                    f"$.stores.{store}[{i}].id")
            else:
                remember(rid)
        else:
            add("record_id_form", "record id is not a non-empty string of at most 512 characters",
                rid if not isinstance(rid, str) else f"{len(rid)} characters", "1..512 characters",
                f"$.stores.{store}[{i}].id")
        data = record.get("data")
        if type(data) is not dict:
            if "data" in record:
                add("record_shape", "record data is not an object", type(data).__name__, "object",
                    f"$.stores.{store}[{i}].data")
            continue
        if "id" in data and data["id"] != rid:
            add("data_id_matches", "data.id differs from the record id", data["id"], rid, f"$.stores.{store}[{i}].data.id")
        if "_id" in data and data["_id"] != rid:
            add("data_id_matches", "data._id differs from the record id", data["_id"], rid,
                f"$.stores.{store}[{i}].data._id")
        if natural is not None:
            own = data.get(natural)
            if own is not None and own != rid:
                add("natural_id_matches", f"data.{natural} differs from the record id", own, rid,
                    f"$.stores.{store}[{i}].data.{natural}")
        if "record_id" in data and type(data["record_id"]) is str:
            all_ids.add(data["record_id"])
        if no_embeddings and not embedding_keys.isdisjoint(data):
            for key in sorted(embedding_keys.intersection(data)):
                if data[key] not in (None, [], ""):
                    add("embeddings_follow_includes", f"data.{key} is exported while includes.embeddings is not true",
                        f"{key} ({type(data[key]).__name__})", "no embedding", f"$.stores.{store}[{i}].data.{key}")
        if not link_set.isdisjoint(data):
            linking.append(data)
        content = data.get("content")
        if type(content) is dict and not link_set.isdisjoint(content):
            linking.append(content)
    all_ids |= seen


def _scan_manifest(manifest: Any, present: bool, sizes: dict[str, int],
                   add: Callable[[str, str, Any, Any, str], None]) -> None:
    if not present:
        return
    if not isinstance(manifest, dict):
        add("manifest_required", "manifest is not an object", type(manifest).__name__, "object", "$.manifest")
        return
    for name in MANIFEST_REQUIRED:
        if name not in manifest:
            add("manifest_required", f"manifest.{name} is missing", "<absent>", name, f"$.manifest.{name}")
    counts = manifest.get("counts")
    if "counts" in manifest:
        want = {k: sizes.get(k, 0) for k in STORES}
        if not isinstance(counts, dict):
            add("manifest_counts", "manifest.counts is not an object", counts, want, "$.manifest.counts")
        else:
            for k in sorted(set(counts) | set(STORES)):
                got = counts.get(k, "<absent>")
                if k not in want or not (is_int(got) and got == want[k]):
                    add("manifest_counts", f"manifest.counts.{k} does not match the store",
                        got, want.get(k, "<no such store>"), f"$.manifest.counts.{k}")
    if "record_count" in manifest:
        total = sum(sizes.values())
        got = manifest["record_count"]
        if not (is_int(got) and got == total):
            add("manifest_record_count", "manifest.record_count is not the number of records", got, total,
                "$.manifest.record_count")
    for name, kind, what in (("scope", dict, "object"), ("includes", dict, "object"), ("warnings", list, "array"),
                             ("created_at", str, "string"), ("memorizz_version", str, "string"),
                             ("source_provider", str, "string"), ("omitted_fields", list, "array"),
                             ("external_references", list, "array")):
        if name in manifest and not isinstance(manifest[name], kind):
            add("manifest_field_types", f"manifest.{name} is not an {what}", manifest[name], what,
                f"$.manifest.{name}")
        elif kind is list and name in manifest and not all(isinstance(x, str) for x in manifest[name]):
            add("manifest_field_types", f"manifest.{name} holds something other than strings", manifest[name],
                "array of strings", f"$.manifest.{name}")
    includes = manifest.get("includes")
    if isinstance(includes, dict):
        for name in INCLUDES:
            if not isinstance(includes.get(name), bool):
                add("manifest_field_types", f"manifest.includes.{name} is not a boolean",
                    includes.get(name, "<absent>"), "boolean", f"$.manifest.includes.{name}")
    created = manifest.get("created_at")
    if isinstance(created, str) and not is_utc_timestamp(created):
        add("created_at_utc", "manifest.created_at is not a UTC timestamp", created, "e.g. 2026-01-01T00:00:00Z",
            "$.manifest.created_at")


def is_utc_timestamp(text: str) -> bool:
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return when.utcoffset() == dt.timedelta(0)


def links_of(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, target id) for each explicit record link in a record's data (and a structured content)."""
    for node in (data, data.get("content")):
        if isinstance(node, dict):
            for name in _LINK_SET.intersection(node):
                refs = node[name]
                for ref in refs if isinstance(refs, list) else [refs]:
                    if isinstance(ref, str) and ref:
                        yield name, ref


def external_references(value: dict[str, Any], ids: set[str] | None = None) -> set[str]:
    stores: dict[str, Any] = value["stores"] if isinstance(value.get("stores"), dict) else {}
    if ids is None:
        ids = {r["id"] for rs in stores.values() if isinstance(rs, list) for r in rs
               if isinstance(r, dict) and isinstance(r.get("id"), str)}
        ids |= {r["data"]["record_id"] for rs in stores.values() if isinstance(rs, list) for r in rs
                if isinstance(r, dict) and isinstance(r.get("data"), dict)
                and isinstance(r["data"].get("record_id"), str)}
    out = set()
    for records in stores.values():
        for record in records if isinstance(records, list) else []:
            if isinstance(record, dict) and isinstance(record.get("data"), dict):
                out |= {ref for _, ref in links_of(record["data"]) if ref not in ids}
    return out


def _refs(node: dict[str, Any]) -> Iterator[str]:
    for name in _LINK_SET.intersection(node):
        refs = node[name]
        for ref in refs if isinstance(refs, list) else [refs]:
            if isinstance(ref, str) and ref:
                yield ref


def _scan_links(manifest: dict[str, Any], linking: list[dict[str, Any]], ids: set[str],
                add: Callable[[str, str, Any, Any, str], None]) -> None:
    reported = manifest.get("external_references")
    reported = set(reported) if isinstance(reported, list) else set()
    missing = sorted({ref for node in linking for ref in _refs(node) if ref not in ids} - reported)
    if missing:
        add("external_references_reported", "links to records outside the archive are not reported",
            missing[:20], "listed in manifest.external_references", "$.manifest.external_references")


# ---- helpers the reference and checks share ---------------------------------------------------

def credential_paths(value: Any, path: str = "$") -> Iterator[str]:
    """Paths of credential-named keys (a JSON Schema's `properties` names are interface, not secrets)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if CREDENTIAL_KEY.search(k) and not path.endswith((".properties", ".$defs")) and v not in (None, ""):
                yield f"{path}.{k}"
            yield from credential_paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from credential_paths(v, f"{path}[{i}]")


def embedding_paths(value: Any, path: str = "$") -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in EMBEDDING_KEYS and v not in (None, [], ""):
                yield f"{path}.{k}"
            else:
                yield from embedding_paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from embedding_paths(v, f"{path}[{i}]")


def records_of(archive: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for store, records in archive.get("stores", {}).items():
        for record in records if isinstance(records, list) else []:
            if isinstance(record, dict):
                yield store, record
