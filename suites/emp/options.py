"""The EMP suite's options: each a reading of ambiguous spec text (suites/emp/errata.md says why), with
its default and alternatives. The SuiteSpec holds this table (suite.py); a run reads one with `ctx.option(name)`
and `--option emp.NAME=VALUE` pins it (harness/core/options.py).
"""

from __future__ import annotations

from memconform.core.options import Options, OptionSpec

OPTIONS = Options(
    OptionSpec("tombstone", "either", ("either", "deleted-flag", "type-tombstone"),
               "tombstone lines a reader must honour: either form (default), or only meta {\"deleted\": true}, "
               "or only type \"tombstone\""),
    OptionSpec("stale_lock_s", "30", ("10", "30", "60"),
               "age in seconds after which a lock file may be taken over as stale"),
    OptionSpec("stale_lock_takeover", "may", ("may", "required"),
               "a lock older than stale_lock_s: a writer may take it over or keep waiting and give up (default), "
               "or must take it over (errata E2)"),
    OptionSpec("hostile_refusal", "any", ("any", "clear"),
               "a writer fed bad input bytes: any refusal that writes nothing, a crash included (default), or a clear "
               "rejection (exit 3 / Rejected) as memconform advises (errata E15)"),
    OptionSpec("ts_tie", "any", ("any", "later-line"),
               "equal ts for one id: either line may win (default) or the later line must"),
    OptionSpec("id_version", "any", ("any", "v4"),
               "ids: any RFC 4122 UUID, as the spec's own examples (default), or UUID v4 only"),
    OptionSpec("ts_form", "number", ("number", "integer"),
               "ts: any non-negative number of milliseconds (default) or whole milliseconds only"),
    OptionSpec("encrypted_prefix", "declared", ("declared", "reserved"),
               "content starting with \"encrypted:\": may be plain text (default) or must be encrypted:ALGORITHM:base64"),
)
