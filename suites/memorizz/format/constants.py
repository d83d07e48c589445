"""MemoRizz Memory Archive v1: the constants of the format (its options, the readings of open
text, are suites/memorizz/options.py)."""

from __future__ import annotations

import re

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

