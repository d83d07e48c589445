"""The MemoryAI suite's options: each a reading of ambiguous spec text (suites/memoryai/errata.md says why), with
its default and alternatives. The SuiteSpec holds this table (suite.py); a run reads one with `ctx.option(name)`
and `--option memoryai.NAME=VALUE` pins it (harness/core/options.py).
"""

from __future__ import annotations

from memconform.core.options import Options, OptionSpec
from memconform.kit import large_export

OPTIONS = Options(
    OptionSpec("checksum_unicode", "either", ("either", "literal", "ascii"),
               "§3.6: non-ASCII in the canonical JSON as literal UTF-8, as \\u escapes, or accept either (default)"),
    OptionSpec("checksum_numbers", "either", ("either", "python", "ecmascript"),
               "§3.6: numbers in the canonical JSON as Python's json writes them (1.0, 1e-05), as JSON.stringify "
               "writes them (1, 0.00001), or accept either (default)"),
    OptionSpec("content_hash", "sha256-utf8", ("sha256-utf8", "unchecked"),
               "§3.2: content_hash is sha256 of the UTF-8 content, or left unchecked"),
    OptionSpec("dna_rule", "union", ("union", "type-only"),
               "§3.7 union of type/zone/pinned, or §2 memory_type only"),
    OptionSpec("reimport_counters", "either", ("either", "accumulate", "stable"),
               "§3.8 re-importing the same bundle: counters accumulate again, stay as they were, or accept either"),
    OptionSpec("rejection_status", "any-4xx", ("any-4xx", "400", "422"),
               "HTTP status for a rejected bundle"),
    OptionSpec("multipart_field", "either", ("either", "file", "bundle"),
               "§4 multipart field name of import/file: file, bundle, or try file then bundle (default)"),
    OptionSpec("since_boundary", "either", ("either", "inclusive", "exclusive"),
               "§3.1 scope since: a chunk created exactly at `since` is exported (inclusive), not, or either"),
    OptionSpec("tenant", "", (),
               "the tenant a producer should export (sent as tenant_id in the export body); empty: the target's default"),
    OptionSpec("embedding_mismatch", "drop", ("drop", "accept"),
               "§3.5 on model mismatch: drop embeddings (SHOULD), or accept (user opt-in)"),
    large_export.OPTION_SPEC,
)
