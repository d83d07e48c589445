"""MemoRizz Memory Archive v1 suite: the SuiteSpec and its levels; the checks live in topic modules.

    checks/document.py  Archive: one check per key of the scanner's rule table, plus digest and limits
    checks/producer.py  Producer: selections, external references, credentials left out
    checks/consumer.py  Consumer: preview, restore, clone, embeddings, automations, partial imports
    checks/reject.py    Consumer, its clause: "Validation rejects ..." seven classes, each with a positive control
    checks/stateful.py  Consumer: random sequences of restores, previews and refusals against a model of a namespace
    client.py           the target's operations, the seeded graph unique to the run, cleanup

The page has no conformance section: the levels' clauses are its "Validation rejects ..." sentence
(suites/memorizz/errata.md, "Levels"), read for the archive (the rules a valid archive keeps), for a
consumer (the archives it refuses) and, for a producer, the one sentence that says what an export requires.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from memconform.core import history_counts
from memconform.core.suite import Later, Level, SuiteSpec, answers_with
from memconform.kit.fixtures_loader import spec_text_path
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.options import OPTIONS

SPEC = memorizz.SPEC

# "Validation rejects unsupported versions, unknown envelope fields, incorrect taxonomy, missing store keys,
# duplicate or inconsistent IDs, incorrect counts, and checksum mismatches."
ARCHIVE_CLAUSE = ("version_one", "envelope_fields", "taxonomy_canonical", "stores_complete", "record_id_unique",
                  "data_id_matches", "natural_id_matches", "manifest_counts", "manifest_record_count",
                  "integrity_digest")
# "Version 1 requires all 13 store keys and their taxonomy mappings, even when an export selects only one type."
PRODUCER_CLAUSE = ("selected_export_only_selected",)
CONSUMER_CLAUSE = ("rejects_unsupported_version", "rejects_unknown_envelope_field", "rejects_incorrect_taxonomy",
                   "rejects_missing_store_key", "rejects_duplicate_or_inconsistent_ids", "rejects_incorrect_counts",
                   "rejects_checksum_mismatch")


# `memconform run` without --suite: a MemoRizz implementation exports an archive (here of a namespace
# no one uses, so the probe reads nothing of the store)
_probe = answers_with("export", lambda: {"memory_id": f"memconform-probe-{uuid.uuid4().hex[:8]}"}, memorizz.detect)


SUITE = SuiteSpec(
    options=OPTIONS,  # the readings a run can pin (options.py)
    checks_module="memconform.suites.memorizz.checks",  # imported when the checks are asked for, not to name a format
    document_checks=("document",),  # every document check: all `memconform validate` imports
    spec_text=spec_text_path('memorizz-archive-v1.md'), requirements=Path(__file__).with_name("requirements.json"),
    name=memorizz.SUITE, spec_title=SPEC, version="1",
    levels=[Level("archive", "Archive", clause=ARCHIVE_CLAUSE),
            Level("producer", "Producer", ("archive",), clause=PRODUCER_CLAUSE),
            Level("consumer", "Consumer", clause=CONSUMER_CLAUSE)],
    document_source=Later("memconform.suites.memorizz.client:exported_graph"), detect=memorizz.detect, stream=memorizz.open_file,
    reference=Later("memconform.suites.memorizz.reference:ReferenceArchiveStore"),
    portability=Later("memconform.suites.memorizz.portability.declared:portable"),
    interop=Later("memconform.suites.memorizz.interop:pairing"),
    mutants=Later("memconform.suites.memorizz.mutants"), probe=_probe,
    run_notes=history_counts.with_counts(),
    hints=("taxonomy", "stores", "integrity"),
)
