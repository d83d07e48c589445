"""MemoRizz Memory Archive v1: the rule table and the one-pass scanner that checks every rule in it.

RULES is the single place a structural rule is named: its key is the check id (`memorizz.<key>`),
its sentence the spec's own words. `scan` walks an archive once and reports problems by rule key;
it refuses a key that is not in the table, and the suite registers exactly one check per key (and
verifies that at import), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any, Protocol

from memconform.core import rules
from memconform.kit.shared_rules import parse_datetime
from memconform.suites.memorizz.format.constants import (
    ENVELOPE,
    FORMAT,
    HEX64,
    INCLUDES,
    MANIFEST_REQUIRED,
    MAX_ID_CHARS,
    NATURAL_IDS_IMPLIED,
    NATURAL_IDS_NAMED,
    STORES,
    TAXONOMY,
    VERSION,
    embedding_key,
    is_int,
)
from memconform.suites.memorizz.format.records import LINK_SET, refs_in, reported_ids

Rule = rules.Rule  # one row of the rule table: key, section, keyword, sentence


_RULES = (
    Rule("envelope_fields", "Envelope", "MUST", "An archive has exactly six top-level fields."),
    Rule("format_literal", "Envelope", "MUST", "`format` String Always `memorizz.memory`"),
    Rule("version_one", "Envelope", "MUST", "`version` Integer Always `1`; unsupported versions are rejected"),
    Rule("taxonomy_canonical", "Taxonomy", "MUST", "`taxonomy` Object Exact canonical store-to-category mapping below"),
    Rule("stores_complete", "Envelope", "MUST", "`stores` Object All 13 store keys, each containing an array of records"),
    Rule("record_shape", "Records and relationships", "MUST",
         "Every entry in a store is an object with exactly id and data"),
    Rule("record_id_form", "Records and relationships", "MUST",
         "id is a nonempty string, unique within its store, with at most 512 characters."),
    Rule("record_id_unique", "Records and relationships", "MUST",
         "id is a nonempty string, unique within its store, with at most 512 characters."),
    Rule("data_id_matches", "Records and relationships", "MUST",
         "When present, data.id and data._id must match the enclosing id."),
    Rule("natural_id_matches", "Records and relationships", "MUST",
         "Natural identity fields such as agent_id for agents, persona_id for personas, and summary_id for "
         "summaries must also agree with it."),
    Rule("manifest_required", "Manifest", "MUST",
         "The required fields are created_at, memorizz_version, source_provider, scope, counts, record_count, "
         "includes, and warnings."),
    Rule("manifest_counts", "Manifest", "MUST", "`counts` Record count for every store, including zeros"),
    Rule("manifest_record_count", "Manifest", "MUST", "`record_count` Sum of the per-store counts"),
    Rule("manifest_field_types", "Manifest", "MUST",
         "`includes` Whether delegates, history, captured context and embeddings were requested"),
    Rule("created_at_utc", "Manifest", "SHOULD", "`created_at` Export timestamp in UTC"),
    Rule("external_references_reported", "Records and relationships", "SHOULD",
         "A link does not imply that its target is included: deleted or unselected targets are reported as "
         "external references."),
    Rule("embeddings_follow_includes", "What is portable", "MUST",
         "Embeddings are excluded by default and discarded on standard import"),
    Rule("integrity_form", "Envelope", "MUST",
         '`integrity` Object `algorithm: "sha256"` and a 64-character lowercase hexadecimal `digest`'),
)
RULES: dict[str, Rule] = {r.key: r for r in _RULES}
# rules about records: on an archive holding none, a target run observed nothing (the suite says so)
RECORD_RULES = frozenset({"record_shape", "record_id_form", "record_id_unique", "data_id_matches",
                          "natural_id_matches", "embeddings_follow_includes"})


@dataclass
class Problem:
    """One finding of the archive rules: the rule it breaks, what was received and expected, and where."""

    rule: str
    title: str
    received: Any
    expected: Any
    path: str
    readings: tuple[str, ...] = ()  # the readings (errata points) under which this is a problem; () = all


class AddProblem(Protocol):
    """How the scanner's helpers report a problem (`readings`: the errata readings it holds under)."""

    def __call__(self, rule: str, title: str, received: Any, expected: Any, path: str,
                 readings: tuple[str, ...] = ()) -> None: ...


@dataclass
class JudgedStores:
    """What a windowed reading found in the stores it read a window at a time (format/windows.py): each
    store's record problems in document order, the ids every link may name, the links' targets."""

    problems: dict[str, list[Problem]]
    ids: Container[str]
    link_targets: set[str]


def scan(value: Any, natural_ids: dict[str, str] = NATURAL_IDS_IMPLIED,
         judged: JudgedStores | None = None) -> dict[str, list[Problem]]:
    """Check every rule of RULES in one walk; problems grouped by rule key (= check name).

    A natural id outside NATURAL_IDS_NAMED that differs is a problem only under reading M4:implied
    (`Problem.readings`); the caller decides whether that reading is pinned. With `judged`, the stores
    it names were judged window by window: their problems are put in where the walk meets them."""
    found: dict[str, list[Problem]] = {}

    def add(rule: str, title: str, received: Any, expected: Any, path: str, readings: tuple[str, ...] = ()) -> None:
        if rule not in RULES:  # the registration check's other half: the scanner speaks only table keys
            raise KeyError(f"scanner rule {rule!r} is not in the memorizz rule table")
        found.setdefault(rule, []).append(Problem(rule, title, received, expected, path, readings))

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
                if judged is not None and k in judged.problems:
                    for p in judged.problems[k]:
                        found.setdefault(p.rule, []).append(p)
                else:
                    _scan_store(k, records, natural_ids.get(k), add, ids, no_embeddings, linking)
    _scan_manifest(value.get("manifest"), "manifest" in value, sizes, add)
    if isinstance(value.get("manifest"), dict) and "stores" in value:
        targets = {ref for node in linking for ref in refs_in(node)}
        known: Container[str] = ids
        if judged is not None:
            targets |= judged.link_targets
            known = _Either(ids, judged.ids)
        _scan_links(value["manifest"], targets, known, add)
    integ = value.get("integrity")
    if "integrity" in value:
        if not isinstance(integ, dict) or set(integ) != {"algorithm", "digest"}:
            add("integrity_form", "integrity is not exactly {algorithm, digest}",
                sorted(integ) if isinstance(integ, dict) else integ, ["algorithm", "digest"], "$.integrity")
        else:
            if integ["algorithm"] != "sha256":
                add("integrity_form", "integrity.algorithm is not sha256", integ["algorithm"], "sha256",
                    "$.integrity.algorithm")
            if not (isinstance(integ["digest"], str) and HEX64.fullmatch(integ["digest"])):
                add("integrity_form", "integrity.digest is not 64 lowercase hexadecimal characters",
                    integ["digest"], "64 of [0-9a-f]", "$.integrity.digest")
    return found


class _Either:
    """Membership in either of two collections of ids (the walked stores' and the windowed ones')."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self.first, self.second = first, second

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second


def _scan_store(store: str, records: list[Any], natural: str | None,
                add: AddProblem, all_ids: set[str], no_embeddings: bool,
                linking: list[dict[str, Any]], seen: set[str] | None = None, first: int = 0) -> None:
    """The per-record rules; the hot loop of validating a big archive, so it stays flat. A store read in
    windows passes its ids so far (`seen`, kept by the caller: they are not added to `all_ids`) and the
    index of the window's first record."""
    seen_here = seen is None
    if seen is None:
        seen = set()
    remember = seen.add
    named = NATURAL_IDS_NAMED
    link_set = LINK_SET
    embedding = _embedding_keys(records) if no_embeddings else {}
    for i, record in enumerate(records, first):
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
                    f"$.stores.{store}[{i}].data.{natural}", () if store in named else ("M4:implied",))
        if "record_id" in data and type(data["record_id"]) is str:
            all_ids.add(data["record_id"])
        if embedding and not embedding.keys().isdisjoint(data):
            for key in sorted(k for k in data if k in embedding):
                reading = embedding[key]
                if data[key] not in (None, [], ""):
                    add("embeddings_follow_includes", f"data.{key} is exported while includes.embeddings is not true",
                        f"{key} ({type(data[key]).__name__})", "no embedding", f"$.stores.{store}[{i}].data.{key}",
                        (reading,) if reading else ())
        if not link_set.isdisjoint(data):
            linking.append(data)
        content = data.get("content")
        if type(content) is dict and not link_set.isdisjoint(content):
            linking.append(content)
    if seen_here:
        all_ids |= seen


def _embedding_keys(records: list[Any]) -> dict[str, str]:
    """The data keys of a store that name an embedding, with the reading each is one under: found once
    among the store's distinct keys, so a record is looked at key by key only if it holds one."""
    datas = [r["data"] for r in records if isinstance(r, dict) and isinstance(r.get("data"), dict)]
    keys: set[Any] = set().union(*datas)
    return {k: reading for k in keys if isinstance(k, str) and (reading := embedding_key(k)) is not None}


def _scan_manifest(manifest: Any, present: bool, sizes: dict[str, int],
                   add: AddProblem) -> None:
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
        elif kind is list and name in manifest and not all(isinstance(x, str | dict) for x in manifest[name]):
            # errata M5: entries are strings or objects (a warning with a code, a reference naming its store)
            add("manifest_field_types", f"manifest.{name} holds something other than strings or objects",
                manifest[name], "array of strings or objects", f"$.manifest.{name}")
    scope = manifest.get("scope")
    if isinstance(scope, dict) and "user_scoped" in scope and not isinstance(scope["user_scoped"], bool):
        add("manifest_field_types", "manifest.scope.user_scoped is not a boolean", scope["user_scoped"], "boolean",
            "$.manifest.scope.user_scoped")
    includes = manifest.get("includes")
    if isinstance(includes, dict):
        for name in sorted(set(INCLUDES) | set(includes)):
            if name in includes and not isinstance(includes[name], bool):
                add("manifest_field_types", f"manifest.includes.{name} is not a boolean", includes[name], "boolean",
                    f"$.manifest.includes.{name}")
            elif name not in includes:  # errata M5: the page names the four things, not their keys
                add("manifest_field_types", f"manifest.includes.{name} is missing", "<absent>", "boolean",
                    f"$.manifest.includes.{name}", ("M5:memorizz-includes-keys",))
    created = manifest.get("created_at")
    if isinstance(created, str) and not is_utc_timestamp(created):
        add("created_at_utc", "manifest.created_at is not a UTC timestamp", created, "e.g. 2026-01-01T00:00:00Z",
            "$.manifest.created_at")


def is_utc_timestamp(text: str) -> bool:
    return parse_datetime(text, "memorizz") is not None


def _scan_links(manifest: dict[str, Any], targets: set[str], ids: Container[str], add: AddProblem) -> None:
    reported = reported_ids(manifest.get("external_references"))
    missing = sorted({ref for ref in targets if ref not in ids} - reported)
    if missing:
        add("external_references_reported", "links to records outside the archive are not reported",
            missing[:20], "listed in manifest.external_references", "$.manifest.external_references")
