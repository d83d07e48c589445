"""Write the MemoRizz archive fixture corpus (fixtures/memorizz/): valid/, invalid/ and the canonical vectors.

Every case starts from a sealed archive and breaks one rule, then re-seals when the rule is not the
checksum, so a case fails only the checks it names. Run from the repository root:

    python scripts/make_memorizz_fixtures.py
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memconform.suites.memorizz import format as mz  # noqa: E402

OUT = ROOT / "fixtures" / "memorizz"
SPEC = mz.SPEC
KB_ID = "dfbde207-859c-4cde-9921-37e959d31ade"


def base() -> dict[str, Any]:
    """The spec's complete example: one knowledge-base record in harbor-demo, all 13 store keys."""
    archive = mz.empty_archive(created_at="2026-05-01T12:00:00+00:00", memorizz_version="0.17.16",
                               source_provider="FileSystemProvider")
    archive["manifest"]["scope"].update({"memory_id": "harbor-demo"})
    archive["stores"]["knowledge_base"].append({"id": KB_ID, "data": {
        "memory_id": "harbor-demo", "user_id": None,
        "content": "The release owner is Mira. Launch is after 19:00 UTC."}})
    return mz.seal(archive)


def every_store() -> dict[str, Any]:
    archive = base()
    for store in mz.STORES:
        if store == "knowledge_base":
            continue
        rid = f"{store.replace('_', '-')}-0001"
        data: dict[str, Any] = {"memory_id": "harbor-demo", "content": f"Harbor demo {store} record."}
        if store in mz.NATURAL_IDS_IMPLIED:
            data[mz.NATURAL_IDS_IMPLIED[store]] = rid
        if store == "agents":
            data = {"agent_id": rid, "memory_ids": ["harbor-demo"], "delegates": [], "automations_enabled": False,
                    "content": "Harbor demo agent."}
        if store == "semantic_cache":
            data["cache_key"] = rid
        archive["stores"][store].append({"id": rid, "data": {**data, "id": rid, "_id": rid}})
    return mz.seal(archive)


def sealed(change: Callable[[dict[str, Any]], Any], start: Callable[[], dict[str, Any]] = base,
           key_order: str = "codepoint") -> dict[str, Any]:
    archive = start()
    change(archive)
    return mz.seal(archive, key_order)


def unsealed(change: Callable[[dict[str, Any]], Any], start: Callable[[], dict[str, Any]] = base) -> dict[str, Any]:
    archive = start()
    change(archive)
    return archive


def kb(archive: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = archive["stores"]["knowledge_base"][0]
    return record


def store_record(archive: dict[str, Any], store: str) -> dict[str, Any]:
    record: dict[str, Any] = archive["stores"][store][0]
    return record


def add_records(n: int) -> Callable[[dict[str, Any]], None]:
    def change(a: dict[str, Any]) -> None:
        for i in range(n - 1):
            a["stores"]["short_term_memory"].append({"id": f"working-{i:04d}", "data": {
                "memory_id": "harbor-demo", "content": f"Working memory {i}."}})
    return change


def seal_with(text_of: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], None]:
    """Seal with a wrong canonical writer (what a careless producer does)."""
    def change(a: dict[str, Any]) -> None:
        mz.seal(a)
        a["integrity"]["digest"] = hashlib.sha256(text_of(mz.without_integrity(a)).encode()).hexdigest()
    return change


NUMBERS = {"integral": 1.0, "negative_zero": -0.0, "tiny": 1e-7, "edge_low": 0.000001, "small": 0.00001,
           "big": 1e21, "below_big": 123456789012345680000.0, "huge": 1.5e300, "plain": 2.5, "e16": 1e16,
           "negative_tiny": -3.75e-9, "int": 7}


def set_path(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(a: dict[str, Any]) -> None:
        node: Any = a
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def delete_path(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(a: dict[str, Any]) -> None:
        node: Any = a
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


def link_archive(report: bool, as_objects: bool = False) -> dict[str, Any]:
    def change(a: dict[str, Any]) -> None:
        a["stores"]["summaries"].append({"id": "summary-0001", "data": {
            "summary_id": "summary-0001", "memory_id": "harbor-demo", "content": "Mira owns the launch.",
            "source_message_ids": ["message-deleted-0001"]}})
        if report:
            a["manifest"]["external_references"] = ["message-deleted-0001"]
        if as_objects:
            a["manifest"]["external_references"] = [{"memory_type": "conversation_memory", "id": "message-deleted-0001"}]
            a["manifest"]["warnings"] = [{"code": "external_references", "message": "1 link points outside"}]
    return sealed(change)


def big_record(a: dict[str, Any]) -> None:
    kb(a)["data"]["notes"] = "harbor " * 700


CASES: list[dict[str, Any]] = [
    # ---- valid -----------------------------------------------------------------------------
    dict(id="spec-example", verdict="valid", section="Complete example", document=base(),
         description="The spec's complete example: one knowledge-base record in harbor-demo, 13 store keys, valid checksum"),
    dict(id="every-store", verdict="valid", section="Taxonomy", document=every_store(),
         description="One record in each of the 13 stores with data.id, data._id and natural ids equal to the record id"),
    dict(id="number-forms", verdict="valid", section="Integrity and validation",
         document=sealed(lambda a: kb(a)["data"].update(numbers=NUMBERS)),
         description="Floats under every number rule (1.0, -0.0, 1e-7, 1e-6, 1e21, 1.5e300) sealed with the spec's canonical JSON"),
    dict(id="unicode-literal", verdict="valid", section="Integrity and validation",
         document=sealed(lambda a: kb(a)["data"].update({"é": "Hafenführerin ☂", "z": "𝄞 astral", "Z": "\u2028"})),
         description="Non-ASCII and astral keys and values hashed as literal UTF-8 with keys sorted by code point"),
    dict(id="id-512-characters", verdict="valid", section="Records and relationships",
         document=sealed(lambda a: kb(a).update(id="k" * 512)),
         description="A record id of exactly 512 characters is allowed"),
    dict(id="natural-id-null", verdict="valid", section="Records and relationships",
         document=sealed(lambda a: store_record(a, "agents")["data"].update(agent_id=None), every_store),
         description="An agent whose agent_id is null: a null natural identity is read as absent (errata M4)"),
    dict(id="external-reference-reported", verdict="valid", section="Records and relationships",
         document=link_archive(True),
         description="A summary links a deleted message, listed in manifest.external_references"),
    dict(id="external-reference-unreported", verdict="valid", section="Records and relationships",
         document=link_archive(False), warnings=["memorizz.external_references_reported"],
         description="A summary links a deleted message the manifest does not report: a SHOULD-level warning"),
    dict(id="created-at-offset", verdict="valid", section="Manifest",
         document=sealed(set_path(["manifest", "created_at"], "2026-05-01T14:00:00+02:00")),
         warnings=["memorizz.created_at_utc"],
         description="created_at with a +02:00 offset is not UTC: a SHOULD-level warning"),
    dict(id="cache-key-differs", verdict="valid", section="Records and relationships",
         document=sealed(lambda a: store_record(a, "semantic_cache")["data"].update(cache_key="when is launch"),
                         every_store),
         description="A semantic_cache cache_key that differs from the record id: the spec names no natural id for the cache"),
    dict(id="embeddings-included", verdict="valid", section="What is portable",
         document=sealed(lambda a: (kb(a)["data"].update(embedding=[0.125, -0.5]),
                                    a["manifest"]["includes"].update(embeddings=True))),
         description="An embedding in an archive whose manifest says embeddings were requested"),
    dict(id="records-at-limit", verdict="valid", section="Integrity and validation", options={"memorizz.max_records": "10"},
         document=sealed(add_records(10)),
         description="Exactly 10 records under a record limit of 10"),
    # ---- invalid ---------------------------------------------------------------------------
    dict(id="envelope-extra-field", breaks=["memorizz.envelope_fields"], section="Envelope",
         document=sealed(set_path(["comment"], "exported by hand")),
         description="A seventh top-level field (comment)"),
    dict(id="envelope-integrity-missing", breaks=["memorizz.envelope_fields"], section="Envelope",
         document=unsealed(delete_path(["integrity"])),
         description="No integrity field at all"),
    dict(id="format-wrong", breaks=["memorizz.format_literal"], section="Envelope",
         document=sealed(set_path(["format"], "memorizz.memories")),
         description="format is memorizz.memories"),
    dict(id="version-true", breaks=["memorizz.version_one"], section="Envelope",
         document=sealed(set_path(["version"], True)), description="version is the JSON true"),
    dict(id="version-float", breaks=["memorizz.version_one"], section="Envelope",
         document=sealed(set_path(["version"], 1.0)), description="version is the JSON number 1.0 (a float)"),
    dict(id="version-2", breaks=["memorizz.version_one"], section="Envelope",
         document=sealed(set_path(["version"], 2)), description="version 2 is unsupported"),
    dict(id="version-string", breaks=["memorizz.version_one"], section="Envelope",
         document=sealed(set_path(["version"], "1")), description="version is the string 1"),
    dict(id="taxonomy-wrong-category", breaks=["memorizz.taxonomy_canonical"], section="Taxonomy",
         document=sealed(set_path(["taxonomy", "summaries"], "long_term.semantic")),
         description="summaries mapped to long_term.semantic instead of long_term.episodic"),
    dict(id="taxonomy-memagent-key", breaks=["memorizz.taxonomy_canonical"], section="Taxonomy",
         document=sealed(lambda a: a["taxonomy"].update(memagent=a["taxonomy"].pop("agents"))),
         description="taxonomy names the agent store memagent rather than agents"),
    dict(id="store-key-missing", breaks=["memorizz.stores_complete", "memorizz.manifest_counts"], section="Envelope",
         document=sealed(delete_path(["stores", "tool_log"])),
         description="The empty tool_log store is left out (and so its count)"),
    dict(id="store-not-array", breaks=["memorizz.stores_complete"], section="Envelope",
         document=sealed(set_path(["stores", "skillbox"], {})), description="The skillbox store is an object"),
    dict(id="record-extra-field", breaks=["memorizz.record_shape"], section="Records and relationships",
         document=sealed(lambda a: kb(a).update(meta={"source": "ui"})),
         description="A record with id, data and meta"),
    dict(id="record-data-string", breaks=["memorizz.record_shape"], section="Records and relationships",
         document=sealed(lambda a: kb(a).update(data="The release owner is Mira.")),
         description="A record whose data is a string"),
    dict(id="record-id-empty", breaks=["memorizz.record_id_form"], section="Records and relationships",
         document=sealed(lambda a: kb(a).update(id="")), description="A record id that is the empty string"),
    dict(id="record-id-513-characters", breaks=["memorizz.record_id_form"], section="Records and relationships",
         document=sealed(lambda a: kb(a).update(id="k" * 513)), description="A record id of 513 characters"),
    dict(id="record-id-number", breaks=["memorizz.record_id_form"], section="Records and relationships",
         document=sealed(lambda a: kb(a).update(id=42)), description="A record id that is a number"),
    dict(id="record-id-duplicate", breaks=["memorizz.record_id_unique"], section="Records and relationships",
         document=sealed(lambda a: a["stores"]["knowledge_base"].append(copy.deepcopy(kb(a)))),
         description="Two knowledge-base records with one id"),
    dict(id="data-id-differs", breaks=["memorizz.data_id_matches"], section="Records and relationships",
         document=sealed(lambda a: kb(a)["data"].update(id="another-id")), description="data.id differs from the record id"),
    dict(id="data-underscore-id-differs", breaks=["memorizz.data_id_matches"], section="Records and relationships",
         document=sealed(lambda a: kb(a)["data"].update(_id="another-id")), description="data._id differs from the record id"),
    dict(id="data-id-null", breaks=["memorizz.data_id_matches"], section="Records and relationships",
         document=sealed(lambda a: kb(a)["data"].update(id=None)),
         description="data.id present but null does not match the record id"),
    dict(id="agent-id-differs", breaks=["memorizz.natural_id_matches"], section="Records and relationships",
         document=sealed(lambda a: store_record(a, "agents")["data"].update(agent_id="agent-9999"), every_store),
         description="An agent whose agent_id differs from its record id"),
    dict(id="persona-id-differs", breaks=["memorizz.natural_id_matches"], section="Records and relationships",
         document=sealed(lambda a: store_record(a, "personas")["data"].update(persona_id="persona-9999"), every_store),
         description="A persona whose persona_id differs from its record id"),
    dict(id="summary-id-differs", breaks=["memorizz.natural_id_matches"], section="Records and relationships",
         document=sealed(lambda a: store_record(a, "summaries")["data"].update(summary_id="summary-9999"), every_store),
         description="A summary whose summary_id differs from its record id"),
    dict(id="tool-id-differs", breaks=["memorizz.natural_id_matches"], section="Records and relationships",
         options={"memorizz.natural_ids": "implied"},
         document=sealed(lambda a: store_record(a, "toolbox")["data"].update(tool_id="tool-9999"), every_store),
         description="A toolbox record whose tool_id differs from its record id, under reading M4:implied"),
    dict(id="tool-id-differs-named-reading", verdict="valid", section="Records and relationships",
         document=sealed(lambda a: store_record(a, "toolbox")["data"].update(tool_id="tool-9999"), every_store),
         description="A toolbox tool_id that differs from its record id: only the three named natural ids bind "
                     "by default (errata M4)"),
    dict(id="manifest-lists-of-objects", verdict="valid", section="Manifest",
         document=link_archive(True, as_objects=True),
         description="warnings and external_references written as objects (a code and message; a store and id): "
                     "errata M5, M6"),
    dict(id="key-order-utf16", verdict="valid", section="Integrity and validation",
         document=sealed(lambda a: kb(a)["data"].update({"\uff61": 1, "\U0001f600": 2}), key_order="utf16"),
         description="Keys mixing U+FF61 and an astral character, sealed with keys sorted by UTF-16 code units "
                     "(a browser's sort): errata M2 accepts either order"),
    dict(id="integer-beyond-safe-range", verdict="valid", section="Integrity and validation",
         document=sealed(lambda a: kb(a)["data"].update(sequence=9007199254740993)),
         warnings=["memorizz.integers_safe"],
         description="A counter of 2**53 + 1 written as a number, not a string: a SHOULD-level warning"),
    dict(id="scope-user-scoped-string", breaks=["memorizz.manifest_field_types"], section="Manifest",
         document=sealed(lambda a: a["manifest"]["scope"].update(user_scoped="yes")),
         description="scope.user_scoped written as a string, not a boolean"),
    dict(id="includes-own-key-names", verdict="valid", section="Manifest",
         document=sealed(set_path(["manifest", "includes"], {"delegates": True, "history": False,
                                                             "captured_context": True, "embeddings": False})),
         description="includes names captured context captured_context: the page names the four things, not their "
                     "keys (errata M5)"),
    dict(id="includes-memorizz-keys-pinned", breaks=["memorizz.manifest_field_types"], section="Manifest",
         options={"memorizz.includes_keys": "memorizz"},
         document=sealed(set_path(["manifest", "includes"], {"delegates": True, "history": False,
                                                             "captured_context": True, "embeddings": False})),
         description="includes without memorizz's context key, under includes_keys=memorizz"),
    dict(id="includes-value-string", breaks=["memorizz.manifest_field_types"], section="Manifest",
         document=sealed(set_path(["manifest", "includes", "history"], "yes")),
         description="includes.history is the string yes, not a boolean"),
    dict(id="integrity-digest-newline", breaks=["memorizz.integrity_form", "memorizz.integrity_digest"],
         section="Envelope", document=unsealed(lambda a: a["integrity"].update(digest=a["integrity"]["digest"] + "\n")),
         description="The digest followed by a newline: 65 characters, not 64"),
    dict(id="manifest-warnings-missing", breaks=["memorizz.manifest_required"], section="Manifest",
         document=sealed(delete_path(["manifest", "warnings"])), description="The manifest has no warnings field"),
    dict(id="manifest-scope-missing", breaks=["memorizz.manifest_required"], section="Manifest",
         document=sealed(delete_path(["manifest", "scope"])), description="The manifest has no scope field"),
    dict(id="counts-missing-zero-store", breaks=["memorizz.manifest_counts"], section="Manifest",
         document=unsealed(lambda a: (a["manifest"]["counts"].pop("tool_log"),
                                      a.update(integrity={"algorithm": "sha256", "digest": mz.digest(a)}))),
         description="counts leaves out a store whose count is zero"),
    dict(id="counts-wrong", breaks=["memorizz.manifest_counts"], section="Manifest",
         document=unsealed(lambda a: (a["manifest"]["counts"].update(knowledge_base=2),
                                      a.update(integrity={"algorithm": "sha256", "digest": mz.digest(a)}))),
         description="counts says two knowledge-base records where there is one"),
    dict(id="record-count-wrong", breaks=["memorizz.manifest_record_count"], section="Manifest",
         document=unsealed(lambda a: (a["manifest"].update(record_count=3),
                                      a.update(integrity={"algorithm": "sha256", "digest": mz.digest(a)}))),
         description="record_count is 3 for an archive with one record"),
    dict(id="manifest-warnings-not-array", breaks=["memorizz.manifest_field_types"], section="Manifest",
         document=sealed(set_path(["manifest", "warnings"], "none")), description="manifest.warnings is a string"),
    dict(id="integrity-digest-uppercase", breaks=["memorizz.integrity_form", "memorizz.integrity_digest"],
         section="Envelope", document=unsealed(lambda a: a["integrity"].update(digest=a["integrity"]["digest"].upper())),
         description="The digest in uppercase hexadecimal"),
    dict(id="integrity-algorithm-md5", breaks=["memorizz.integrity_form"], section="Envelope",
         document=unsealed(lambda a: a["integrity"].update(algorithm="md5")), description="integrity.algorithm is md5"),
    dict(id="integrity-extra-key", breaks=["memorizz.integrity_form"], section="Envelope",
         document=unsealed(lambda a: a["integrity"].update(signed_by="harbor")),
         description="integrity carries a third key"),
    dict(id="checksum-mismatch", breaks=["memorizz.integrity_digest"], section="Integrity and validation",
         document=unsealed(lambda a: kb(a)["data"].update(content="The release owner is Nora.")),
         description="A record changed after sealing"),
    dict(id="checksum-python-numbers", breaks=["memorizz.integrity_digest"], section="Integrity and validation",
         document=unsealed(lambda a: (kb(a)["data"].update(numbers=NUMBERS), seal_with(
             lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False))(a))),
         description="Sealed with Python's number forms (1.0, 1e-07, -0.0) instead of the spec's"),
    dict(id="checksum-ascii-escaped", breaks=["memorizz.integrity_digest"], section="Integrity and validation",
         document=unsealed(lambda a: (kb(a)["data"].update(owner="Mira Ødegård"), seal_with(
             lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True))(a))),
         description="Sealed with non-ASCII characters escaped instead of literal UTF-8"),
    dict(id="checksum-unsorted-keys", breaks=["memorizz.integrity_digest"], section="Integrity and validation",
         document=unsealed(seal_with(lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False))),
         description="Sealed without sorting object keys"),
    dict(id="number-overflow", breaks=["memorizz.numbers_finite"], section="Integrity and validation",
         document=unsealed(lambda a: kb(a)["data"].update(score="@OVERFLOW@")),
         description="A number 1e400 that no float holds (Infinity has no canonical form)"),
    dict(id="over-record-limit", breaks=["memorizz.within_limits"], section="Integrity and validation",
         options={"memorizz.max_records": "10"}, document=sealed(add_records(11)),
         description="11 records under a record limit of 10"),
    dict(id="over-size-limit", breaks=["memorizz.within_limits"], section="Integrity and validation",
         options={"memorizz.max_bytes": "4KiB"}, document=sealed(big_record),
         description="About 5 KB of canonical JSON under a size limit of 4 KiB"),
    dict(id="embeddings-not-requested", breaks=["memorizz.embeddings_follow_includes"], section="What is portable",
         document=sealed(lambda a: kb(a)["data"].update(embedding=[0.125, -0.5])),
         description="An embedding exported though includes.embeddings is false"),
]

# JSON text in, canonical text out: the spec's rules, checked against memorizz's own writer
VECTORS = [
    ("1.0", "1"), ("-0.0", "0"), ("0.0", "0"), ("100.0", "100"), ("2.5", "2.5"), ("1e-7", "1e-7"),
    ("0.000001", "0.000001"), ("9.5e-7", "9.5e-7"), ("0.00001", "0.00001"), ("1e16", "10000000000000000"),
    ("1e20", "100000000000000000000"), ("123456789012345678901.0", "123456789012345680000"), ("1e21", "1e+21"),
    ("1.5e300", "1.5e+300"), ("-3.75e-9", "-3.75e-9"), ("5e-324", "5e-324"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"), ("0.1", "0.1"), ("12345678901234567890", "12345678901234567890"),
    ("[1.0, 2, -0.0]", "[1,2,0]"), ('{"b": 1, "a": [true, false, null]}', '{"a":[true,false,null],"b":1}'),
    ('{"é": "ü", "z": "\\ud834\\udd1e", "Z": "\\u2028"}', '{"Z":"\u2028","z":"𝄞","é":"ü"}'),
    ('"tab\\tquote\\"back\\\\slash\\u0001"', '"tab\\tquote\\"back\\\\slash\\u0001"'),
    ('{"nested": {"y": 1.25e-5, "x": 1e+22}}', '{"nested":{"x":1e+22,"y":0.0000125}}'),
]


def main() -> None:
    for folder in ("valid", "invalid"):
        (OUT / folder).mkdir(parents=True, exist_ok=True)
        for old in (OUT / folder).glob("*.json"):
            old.unlink()
    for case in CASES:
        verdict = "invalid" if case.get("breaks") else "valid"
        out = {"id": case["id"], "description": case["description"], "spec": SPEC, "section": case["section"],
               "verdict": verdict, "breaks": case.get("breaks", [])}
        for key in ("warnings", "options"):
            if key in case:
                out[key] = case[key]
        out["document"] = case["document"]
        text = json.dumps(out, ensure_ascii=False, indent=1) + "\n"
        text = text.replace('"@OVERFLOW@"', "1e400")  # JSON text no float can hold
        (OUT / verdict / f"{case['id']}.json").write_text(text, encoding="utf-8")
    vectors = {"description": "Canonical JSON golden vectors: input JSON text and the canonical text the spec defines",
               "spec": SPEC, "vectors": [{"json": j, "canonical": c} for j, c in VECTORS]}
    (OUT / "canonical-vectors.json").write_text(json.dumps(vectors, ensure_ascii=False, indent=1) + "\n", "utf-8")
    for j, c in VECTORS:
        got = mz.canonical_text(json.loads(j))
        assert got == c, (j, got, c)
    print(f"wrote {len(CASES)} cases and {len(VECTORS)} vectors under {OUT}")


if __name__ == "__main__":
    main()
