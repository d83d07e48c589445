"""The AMPS suite's options: each a reading of ambiguous spec text (suites/amps/errata.md says why), with
its default and alternatives. The SuiteSpec holds this table (suite.py); a run reads one with `ctx.option(name)`
and `--option amps.NAME=VALUE` pins it (harness/core/options.py).
"""

from __future__ import annotations

from memconform.core.options import Options, OptionSpec
from memconform.kit import large_export

OPTIONS = Options(
    OptionSpec("atom_labels", "recommended", ("recommended", "required"),
               "Principles: every atom carries sensitivity and valid_from: SHOULD (schema leaves them optional) or MUST"),
    OptionSpec("dangling_refs", "report", ("report", "ignore"),
               "Source-linked: provenance artifact_ids / artifact atom_ids that resolve nowhere in the export are reported (SHOULD) or ignored"),
    OptionSpec("unsourced_inferred", "reject-export", ("reject-export", "drop-atom"),
               "Provenance: an inferred atom without artifact_ids makes the importer reject the whole export, or only drop that atom"),
    OptionSpec("unsourced_after_delete", "delete-or-flag", ("delete-or-flag", "delete"),
               "Delete cascades: an atom left with no source is deleted or re-flagged unsourced, or must be deleted"),
    OptionSpec("x_provider_namespace", "x-prefix", ("x-prefix", "x-provider-key"),
               "Fork-friendly: extension fields are any key starting 'x-', or only a literal 'x-provider' key"),
    OptionSpec("export_subject_id", "", (),
               "the subject a producer should export for the Producer checks (default: the subject the harness "
               "imported; a producer that cannot import needs this)"),
    OptionSpec("import_semantics", "either", ("either", "merge", "replace"),
               "a second import for a subject adds to what is stored (merge) or replaces the subject's snapshot "
               "(replace); errata A12"),
    OptionSpec("withheld_atoms", "either", ("either", "none"),
               "Sensitivity travels: an export may leave out every atom of a label other than public (a filter on "
               "the tag) or must hold every imported atom (none); errata A9"),
    OptionSpec("validity_order", "allow-equal", ("allow-equal", "strictly-after"),
               "Time-aware: valid_to may equal valid_from, or must be strictly after it"),
    large_export.OPTION_SPEC,
)
