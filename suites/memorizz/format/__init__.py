"""MemoRizz Memory Archive v1: constants, canonical JSON, the rule table with its one-pass scanner, a file reader.

Readings of ambiguous text are explained in suites/memorizz/errata.md. Everything a check needs about one
archive is computed once (`scan`, `canonical_bytes`) and shared through the run's cache.
"""

from __future__ import annotations

from memconform.suites.memorizz.format.canonical import (
    canonical_bytes,
    canonical_bytes_and_facts,
    canonical_text,
    canonical_text_exact,
    canonical_text_marked,
    digest,
    empty_archive,
    float_is_plain,
    key_orders_agree,
    needs_exact_writer,
    number_text,
    reseal,
    seal,
    utc_now,
    without_integrity,
)
from memconform.suites.memorizz.format.constants import (
    EMBEDDING_KEYS,
    ENVELOPE,
    FORMAT,
    HEX64,
    INCLUDES,
    LINK_FIELDS,
    MANIFEST_REQUIRED,
    MAX_ID_CHARS,
    MIB,
    NAMESPACE_FIELDS,
    NATURAL_IDS_IMPLIED,
    NATURAL_IDS_NAMED,
    REFERENCE_FIELDS,
    SIZES,
    SPEC,
    STORES,
    SUITE,
    TAXONOMY,
    VECTOR_KEYS,
    VERSION,
    embedding_key,
    is_int,
)
from memconform.suites.memorizz.format.reader import (
    Archive,
    detect,
    load_file,
    open_file,
    parse_bytes,
    record_total,
    sniff,
)
from memconform.suites.memorizz.format.records import (
    SAFE_INTEGER,
    SHOWN_UNSAFE,
    credential_paths,
    embedding_paths,
    external_references,
    links_of,
    records_of,
    reported_ids,
    unsafe_integers,
)
from memconform.suites.memorizz.format.rules import RECORD_RULES, RULES, Problem, Rule, is_utc_timestamp, scan

__all__ = [
    "EMBEDDING_KEYS", "VECTOR_KEYS", "embedding_key", "ENVELOPE", "FORMAT", "HEX64", "INCLUDES", "LINK_FIELDS", "MANIFEST_REQUIRED",
    "MAX_ID_CHARS", "MIB", "NAMESPACE_FIELDS", "NATURAL_IDS_IMPLIED", "NATURAL_IDS_NAMED", "RECORD_RULES",
    "REFERENCE_FIELDS", "RULES", "SIZES", "SPEC", "STORES", "SUITE", "TAXONOMY", "VERSION", "Archive", "Problem",
    "Rule", "canonical_bytes", "canonical_bytes_and_facts", "canonical_text", "canonical_text_exact", "canonical_text_marked",
    "credential_paths", "detect", "digest", "embedding_paths", "empty_archive", "external_references",
    "float_is_plain", "is_int", "key_orders_agree", "is_utc_timestamp", "links_of", "load_file", "needs_exact_writer", "number_text",
    "open_file", "parse_bytes", "record_total", "records_of", "reported_ids", "reseal", "scan", "seal", "sniff",
    "utc_now", "without_integrity", "SAFE_INTEGER", "SHOWN_UNSAFE", "unsafe_integers",
]
