"""Writes fixtures/memoryai/: valid bundles and bundles that each break one rule. Deterministic.

    PYTHONPATH=. python scripts/make_memoryai_fixtures.py
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from memconform.suites.memoryai import format as mai

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "memoryai"
TOKEN_TEXT = "my token is sk-proj-AAAAAAAAAAAAAAAAAAAA"
SPEC = "MemoryAI Protocol v1"


def chunk(i: int, content: str, **kw: Any) -> dict[str, Any]:
    base = {"id": i, "content": content, "content_hash": mai.content_hash(content), "memory_type": "fact",
            "embedding": None, "embedding_model": "fixture-model", "tags": ["fixture"], "zone": "standard",
            "importance": 0.5, "is_pinned": False, "decay_score": 0.5, "tier": "warm",
            "created_at": "2026-05-28T10:00:00Z", "accessed_at": "2026-05-28T11:00:00Z", "valid_until": None, "metadata": {}}
    base.update(kw)
    if "content" in kw:
        base["content_hash"] = mai.content_hash(kw["content"])
    return base


def bundle(chunks: list[dict[str, Any]] | None = None, dim: int = 4, **sections: Any) -> dict[str, Any]:
    doc = {"format": mai.FORMAT, "version": 1, "generator": "memconform-fixtures/1", "exported_at": "2026-05-28T12:00:00Z",
           "manifest": {"tenant_id": None, "tenant_name": None, "tenant_plan": None, "scope": "full", "since": None,
                        "embedding_model": "fixture-model", "embedding_dim": dim},
           "chunks": chunks if chunks is not None else [chunk(1, "The user prefers dark mode.", memory_type="preference")],
           "memory_edges": [], "entities": [], "l2_sessions": [], "mood_states": [], "agents": []}
    doc.update(sections)
    return mai.seal(doc)


def full() -> dict[str, Any]:
    chunks = [chunk(1, "User prefers TypeScript.", memory_type="preference", embedding=mai.encode_embedding([0.1, -0.2, 0.3, 1.0])),
              chunk(2, "Deployed to prod on Monday.", memory_type="episodic"),
              chunk(3, "Always run tests before commit.", memory_type="procedure", zone="critical", is_pinned=True)]
    return bundle(chunks,
                  memory_edges=[{"chunk_a": 1, "chunk_b": 2, "edge_type": "related", "weight": 0.4, "co_activation_count": 3,
                                 "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-02T00:00:00Z"}],
                  entities=[{"name": "TypeScript", "frequency": 4, "first_seen": "2026-01-01T00:00:00Z",
                             "last_seen": "2026-05-01T00:00:00Z", "is_dna": True}],
                  l2_sessions=[{"summary": "a session"}], mood_states=[{"mood": "calm"}], agents=[{"name": "helper"}])


def broken(doc: dict[str, Any], change: Any, reseal: bool = True) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    change(doc)
    return mai.seal(doc) if reseal else doc


def setp(path: tuple[Any, ...], value: Any) -> Any:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        if value is None and path[-1] in ("content", "embedding_dim", "name"):
            node.pop(path[-1])
        else:
            node[path[-1]] = value
    return change


VALID: list[tuple[str, str, str, dict[str, Any], list[str]]] = [
    ("minimal_envelope", "Only format, version and a manifest with the three required fields.", "§3.1",
     # a positive embedding_dim: consumers ingest the valid fixtures, and 0 is open on import (errata I4, E42)
     mai.seal({"format": mai.FORMAT, "version": 1, "manifest": {"scope": "full", "embedding_model": "m", "embedding_dim": 4}}), []),
    ("full_bundle_all_sections", "Every record section present, with an edge, an entity and DNA chunks.", "§3", full(), []),
    ("non_ascii_and_astral_content", "CJK, accents and astral-plane emoji in content and tags; literal UTF-8 checksum.", "§3.6",
     bundle([chunk(1, "記憶は大切 — café 🧠𝄞", tags=["ünïcode", "🏷️"])]), []),
    ("embedding_float_edges", "Embeddings with 0, -0.0, the smallest normal and the largest float32.", "§3.5",
     bundle([chunk(1, "edge floats", embedding=mai.encode_embedding([0.0, -0.0, 1.1754943508222875e-38, 3.4028234663852886e38]))]), []),
    ("vendor_memory_type", "A vendor-specific memory type with the x_ prefix.", "§3.7",
     bundle([chunk(1, "vendor note", memory_type="x_acme_note")]), []),
    ("every_dna_kind", "DNA by each of the five types, by zone critical and important, and by is_pinned.", "§3.7",
     bundle([chunk(i + 1, f"dna {t}", memory_type=t) for i, t in enumerate(sorted(mai.DNA_TYPES))]
            + [chunk(10, "dna zone critical", zone="critical"), chunk(11, "dna zone important", zone="important"),
               chunk(12, "dna pinned", is_pinned=True)]), []),
    ("scope_since", "A since-scoped export with its since time set.", "§3.1",
     broken(bundle(), lambda d: d["manifest"].update(scope="since", since="2026-05-01T00:00:00Z")), []),
    ("values_at_limits", "importance and decay_score at 0 and 1, empty tags and metadata, empty content string.", "§3.2",
     bundle([chunk(1, "limits low", importance=0, decay_score=0, tags=[]), chunk(2, "limits high", importance=1, decay_score=1.0),
             chunk(3, "")]), []),
    ("content_hash_mismatch_warns", "content_hash is not sha256 of the content: a SHOULD-level warning only.", "§3.2",
     broken(bundle(), setp(("chunks", 0, "content_hash"), "a" * 64)), ["memoryai.content_hash_matches"]),
    ("memory_type_unprefixed_vendor", "memory_type Fact is neither core nor x_: a MAY-level finding only.", "§3.7",
     broken(bundle(), setp(("chunks", 0, "memory_type"), "Fact")), ["memoryai.memory_type_known_or_vendor"]),
    ("checksum_ascii_escapes", "Checksum over \\u-escaped non-ASCII, the default of most JSON libraries (errata E1).", "§3.6",
     mai.seal(bundle([chunk(1, "café 記憶 🧠", tags=["ü"])]), "ascii"), []),
    ("checksum_ecmascript_numbers", "Checksum over numbers as JSON.stringify writes them: 0.00001, 1 (errata E1).", "§3.6",
     mai.seal(bundle([chunk(1, "tiny importance", importance=1e-05, decay_score=1.0)]), "literal", "ecmascript"), []),
    ("content_hash_upper_case", "content_hash in upper-case hex: still sha256 hex (errata E2).", "§3.2",
     broken(bundle(), lambda d: d["chunks"][0].update(content_hash=d["chunks"][0]["content_hash"].upper())), []),
    ("chunk_only_required_fields", "A chunk with content and memory_type only: every other ChunkRecord field is optional.", "§3.2",
     bundle([{"content": "only the required fields", "memory_type": "fact"}]), []),
    ("unknown_extension_fields", "Unknown vendor fields in the envelope, the manifest and a chunk: nothing forbids them.", "§3",
     broken(bundle(), lambda d: (d.update(x_vendor={"v": 1}), d["manifest"].update(x_region="eu"),
                                 d["chunks"][0].update(x_score=0.5))), []),
    ("vendor_credential_lookalikes", "Counters named max_tokens and token_count are not credentials.", "§6",
     broken(bundle(), setp(("chunks", 0, "metadata"), {"max_tokens": 512, "token_count": 12, "sort_key": "a"})), []),
]

INVALID: list[tuple[str, str, str, Any, str]] = [
    ("format_underscore", "format spelled memoryai_bundle.", "§3.1", setp(("format",), "memoryai_bundle"), "envelope_format_literal"),
    ("format_missing", "No format field.", "§3.1", lambda d: d.pop("format"), "envelope_format_literal"),
    ("version_string", 'version is the string "1".', "§3.1", setp(("version",), "1"), "envelope_version_integer"),
    ("version_true", "version is JSON true, which is not an integer.", "§3.1", setp(("version",), True), "envelope_version_integer"),
    ("version_zero", "version 0 is below 1.", "§3.1", setp(("version",), 0), "envelope_version_integer"),
    ("version_float", "version 1.5 is not an integer.", "§3.1", setp(("version",), 1.5), "envelope_version_integer"),
    ("version_later", "version 999 is a later protocol's: a v1 producer writes 1 (§7), and every v1 consumer MUST reject it (§3.1).",
     "§3.1", setp(("version",), 999), "envelope_version_integer"),
    ("manifest_missing_embedding_dim", "manifest lacks embedding_dim.", "§3.1", setp(("manifest", "embedding_dim"), None), "manifest_required_fields"),
    ("manifest_dim_string", 'embedding_dim is the string "4".', "§3.1", setp(("manifest", "embedding_dim"), "4"), "manifest_required_fields"),
    ("manifest_scope_unknown", "scope partial is not full, dna_only or since.", "§3.1", setp(("manifest", "scope"), "partial"), "manifest_required_fields"),
    ("chunk_without_content", "A chunk without content.", "§3.2", setp(("chunks", 0, "content"), None), "chunk_required_fields"),
    ("chunk_content_number", "A chunk whose content is the number 42.", "§3.2", setp(("chunks", 0, "content"), 42), "chunk_required_fields"),
    ("zone_hot", "zone hot is not a zone.", "§3.2", setp(("chunks", 0, "zone"), "hot"), "chunk_enums_and_ranges"),
    ("tier_frozen", "tier frozen is not hot, warm or cold.", "§3.2", setp(("chunks", 0, "tier"), "frozen"), "chunk_enums_and_ranges"),
    ("importance_above_one", "importance 1.5 is outside 0..1.", "§3.2", setp(("chunks", 0, "importance"), 1.5), "chunk_enums_and_ranges"),
    ("decay_score_negative", "decay_score -0.1 is outside 0..1.", "§3.2", setp(("chunks", 0, "decay_score"), -0.1), "chunk_enums_and_ranges"),
    ("is_pinned_string", 'is_pinned is the string "yes".', "§3.2", setp(("chunks", 0, "is_pinned"), "yes"), "chunk_field_types"),
    ("tags_not_list", "tags is a comma-separated string.", "§3.2", setp(("chunks", 0, "tags"), "a,b"), "chunk_field_types"),
    ("created_at_not_iso", "created_at is not ISO-8601.", "§3.2", setp(("chunks", 0, "created_at"), "yesterday"), "chunk_field_types"),
    ("embedding_not_base64", "embedding is not base64.", "§3.5", setp(("chunks", 0, "embedding"), "!!!"), "embedding_base64_float32"),
    ("embedding_list_of_floats", "embedding is a JSON list instead of base64.", "§3.5", setp(("chunks", 0, "embedding"), [0.1, 0.2, 0.3, 0.4]), "embedding_base64_float32"),
    ("embedding_length_mismatch", "3 float32 values where embedding_dim is 4.", "§3.5",
     setp(("chunks", 0, "embedding"), mai.encode_embedding([0.1, 0.2, 0.3])), "embedding_length_matches_dim"),
    ("edge_chunk_a_string", "An edge whose chunk_a is a string.", "§3.3",
     lambda d: d["memory_edges"].append({"chunk_a": "1", "chunk_b": 1, "edge_type": "related", "weight": 0.1, "co_activation_count": 1}), "edge_fields"),
    ("entity_without_name", "An entity without a name.", "§3.4", lambda d: d["entities"].append({"frequency": 1}), "entity_required_fields"),
    ("api_key_in_metadata", "A chunk's metadata carries an API key.", "§6",
     setp(("chunks", 0, "metadata"), {"api_key": "sk-live-0123456789abcdef"}), "no_credentials_in_bundle"),
    ("audit_log_section", "The bundle carries an audit_log section.", "§6",
     lambda d: d.update(audit_log=[{"who": "admin", "what": "login"}]), "no_credentials_in_bundle"),
    ("github_token_in_metadata", "A chunk's metadata carries a github_token of no well-known shape.", "§6",
     setp(("chunks", 0, "metadata"), {"github_token": "0f3a9c2e7b"}), "no_credentials_in_bundle"),
    ("openai_api_key_in_agents", "An agent record carries an openai_api_key.", "§6",
     lambda d: d["agents"].append({"name": "a", "openai_api_key": "not-a-known-shape"}), "no_credentials_in_bundle"),
    ("session_cookie_in_metadata", "A chunk's metadata carries a session_cookie.", "§6",
     setp(("chunks", 0, "metadata"), {"session_cookie": "sid=7f00a1"}), "no_credentials_in_bundle"),
    ("x_audit_log_section", "The bundle carries an x_audit_log vendor section.", "§6",
     lambda d: d.update(x_audit_log=[{"who": "admin"}]), "no_credentials_in_bundle"),
    ("audit_top_level", "The bundle carries a top-level audit section.", "§6",
     lambda d: d.update(audit={"events": [{"who": "admin"}]}), "no_credentials_in_bundle"),
    ("token_in_content", "A chunk's content carries a bearer token.", "§6",
     lambda d: d["chunks"][0].update(content=TOKEN_TEXT, content_hash=mai.content_hash(TOKEN_TEXT)), "no_credentials_in_bundle"),
]

# every other invalid case changes one thing and is sealed again; these break the seal itself
def miscount(doc: dict[str, Any]) -> None:
    """One chunk too many in manifest.counts, under a checksum computed over the wrong count."""
    doc["manifest"]["counts"].update(chunks=2)
    doc["manifest"].pop("checksum")
    doc["manifest"]["checksum"] = mai.checksum(doc)


NOT_RESEALED = {
    "counts_off_by_one": ("manifest.counts.chunks is one more than the chunks present.", "§5 Level 1",
                          miscount, "counts_accurate", None),
    "checksum_bit_flipped": ("One hex digit of the checksum flipped: Level 1 requires a valid checksum.", "§3.6",
                             lambda d: d["manifest"].update(checksum=("1" if d["manifest"]["checksum"][0] != "1" else "2") + d["manifest"]["checksum"][1:]),
                             "checksum_present_and_valid", None),
    "checksum_before_exported_at": ("The checksum was computed before exported_at was stamped.", "§3.6",
                                    lambda d: d.update(exported_at="2026-05-28T12:00:01Z"), "checksum_present_and_valid", None),
    "checksum_missing": ("The manifest has no checksum: Level 1 requires a valid one.", "§5 Level 1",
                         lambda d: d["manifest"].pop("checksum"), "checksum_present_and_valid", None),
}


def write(folder: str, case: dict[str, Any]) -> None:
    path = OUT / folder / f"{case['id']}.json"
    path.write_text(json.dumps(case, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    for folder in ("valid", "invalid"):  # requirements.json beside them is kept
        shutil.rmtree(OUT / folder, ignore_errors=True)
        (OUT / folder).mkdir(parents=True)
    for cid, desc, section, doc, warnings in VALID:
        write("valid", {"id": cid, "description": desc, "spec": SPEC, "section": section, "verdict": "valid",
                        "breaks": [], "warnings": warnings, "document": doc})
    base = bundle()
    for cid, desc, section, change, check_name in INVALID:
        doc = broken(base, change)
        write("invalid", {"id": cid, "description": desc, "spec": SPEC, "section": section, "verdict": "invalid",
                          "breaks": [f"memoryai.{check_name}"], "document": doc})
    for cid, (desc, section, change, check_name, profile) in NOT_RESEALED.items():
        case = {"id": cid, "description": desc, "spec": SPEC, "section": section, "verdict": "invalid",
                "breaks": [f"memoryai.{check_name}"], "document": broken(base, change, reseal=False)}
        if profile:
            case["profile"] = profile
        write("invalid", case)
    print(f"wrote {len(VALID)} valid and {len(INVALID) + len(NOT_RESEALED)} invalid cases to {OUT}")


if __name__ == "__main__":
    main()
