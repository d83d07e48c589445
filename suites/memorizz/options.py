"""The MemoRizz suite's options: each a reading of ambiguous spec text (suites/memorizz/errata.md says why), with
its default and alternatives. The SuiteSpec holds this table (suite.py); a run reads one with `ctx.option(name)`
and `--option memorizz.NAME=VALUE` pins it (harness/core/options.py).
"""

from __future__ import annotations

from memconform.core.options import Options, OptionSpec
from memconform.kit import large_export
from memconform.suites.memorizz.format.constants import SIZES

OPTIONS = Options(
    OptionSpec("max_bytes", "50MiB", tuple(SIZES),
               "archive size limit (file bytes, or canonical bytes of a parsed document); 4MiB = inline MCP"),
    OptionSpec("max_records", "100000", ("100000", "1000000", "10000", "1000", "10"),
               "archive record limit (records across all 13 stores)"),
    OptionSpec("natural_ids", "named", ("named", "implied"),
               "natural identity fields that must equal the record id: only the three the spec names (default), "
               "or also tool/skill/workflow/entity/tool_log ids (errata M4)"),
    OptionSpec("key_order", "either", ("either", "codepoint", "utf16"),
               "canonical JSON object key order: either reading (default), Unicode code points (Python) or "
               "UTF-16 code units (browser) (errata M2)"),
    OptionSpec("export_memory_id", "", (),
               "the namespace (memory_id) a producer should export for the archive checks (default: the one the "
               "harness imported; a producer that cannot import needs this or export_agent_id)"),
    OptionSpec("export_agent_id", "", (),
               "the agent (agent_id) a producer should export for the archive checks, with its delegates"),
    OptionSpec("clone_namespaces", "either", ("either", "rewrite", "keep"),
               "a clone with new ids gives each namespace a new one, or keeps the namespaces (errata M9)"),
    OptionSpec("automations_field", "either", ("either", "automations_enabled", "automations-list"),
               "how imported automations show they start disabled: either spelling (default), memorizz's "
               "automations_enabled false, or every automations[].enabled false (errata M10)"),
    OptionSpec("embedding_fields", "named", ("named", "with-vector"),
               "which data fields are embeddings: embedding, embeddings and *_embedding(s) (default), or also "
               "memorizz's `vector` (errata M8)"),
    OptionSpec("includes_keys", "any", ("any", "memorizz"),
               "manifest.includes: any boolean-valued keys (default), or memorizz's four keys delegates, history, "
               "context, embeddings required (errata M5)"),
    large_export.OPTION_SPEC,
)
