"""MemoRizz Memory Archive v1: the constants of the format and the options (readings of open text)."""

from __future__ import annotations

import re

from memconform.core.profile import declare_option
from memconform.kit.shared_rules import is_int as is_int  # re-exported

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
# errata M8: the page names no embedding field. `embedding`, `embeddings` and `*_embedding(s)` are
# embeddings under every reading; `vector` (memorizz's own tool_log field) only under `with-vector`
EMBEDDING_KEYS = frozenset({"embedding", "embeddings"})
EMBEDDING_SUFFIXES = ("_embedding", "_embeddings")
VECTOR_KEYS = frozenset({"vector"})


def embedding_key(key: str) -> str | None:
    """The reading under which `key` names an embedding: "" every reading, "M8:with-vector", or None."""
    if key in EMBEDDING_KEYS or key.endswith(EMBEDDING_SUFFIXES):
        return ""
    return "M8:with-vector" if key in VECTOR_KEYS else None
HEX64 = re.compile(r"[0-9a-f]{64}")  # used with fullmatch: "$" would let a final newline in
MIB = 1024 * 1024
# 1GiB: a configured limit for exports past the defaults (read in bounded windows, format/windows.py)
SIZES = {"50MiB": 50 * MIB, "100MiB": 100 * MIB, "1GiB": 1024 * MIB, "4MiB": 4 * MIB, "1MiB": MIB, "256KiB": 256 * 1024,
         "4KiB": 4096}

declare_option(SUITE, "max_bytes", "50MiB", tuple(SIZES),
               "archive size limit (file bytes, or canonical bytes of a parsed document); 4MiB = inline MCP")
declare_option(SUITE, "max_records", "100000", ("100000", "1000000", "10000", "1000", "10"),
               "archive record limit (records across all 13 stores)")
declare_option(SUITE, "natural_ids", "named", ("named", "implied"),
               "natural identity fields that must equal the record id: only the three the spec names (default), "
               "or also tool/skill/workflow/entity/tool_log ids (errata M4)")
declare_option(SUITE, "key_order", "either", ("either", "codepoint", "utf16"),
               "canonical JSON object key order: either reading (default), Unicode code points (Python) or "
               "UTF-16 code units (browser) (errata M2)")


declare_option(SUITE, "export_memory_id", "", (),
               "the namespace (memory_id) a producer should export for the archive checks (default: the one the "
               "harness imported; a producer that cannot import needs this or export_agent_id)")
declare_option(SUITE, "export_agent_id", "", (),
               "the agent (agent_id) a producer should export for the archive checks, with its delegates")
declare_option(SUITE, "clone_namespaces", "either", ("either", "rewrite", "keep"),
               "a clone with new ids gives each namespace a new one, or keeps the namespaces (errata M9)")
declare_option(SUITE, "automations_field", "either", ("either", "automations_enabled", "automations-list"),
               "how imported automations show they start disabled: either spelling (default), memorizz's "
               "automations_enabled false, or every automations[].enabled false (errata M10)")
declare_option(SUITE, "embedding_fields", "named", ("named", "with-vector"),
               "which data fields are embeddings: embedding, embeddings and *_embedding(s) (default), or also "
               "memorizz's `vector` (errata M8)")
declare_option(SUITE, "includes_keys", "any", ("any", "memorizz"),
               "manifest.includes: any boolean-valued keys (default), or memorizz's four keys delegates, history, "
               "context, embeddings required (errata M5)")
