"""AI Memory Portability Standard v0.1 suite: the SuiteSpec and its levels; the checks live in topic modules.

    checks/document.py   Producer: the export document (published schema, provenance, time, text)
    checks/imports.py    Consumer: accepts a valid export, refuses malformed ones (positive controls first),
                         treats an export as data
    checks/privacy.py    Consumer: the four privacy invariants, on the re-export and on a downstream copy
    checks/stateful.py   Consumer: random sequences of imports and deletions against the model of the subject
    checks/domain_imports.py, checks/domain_envelope.py
                     Consumer: every value class of the domain table (domain.json) imported, the optional
                     atom fields pairwise; answers judged by the model
    model.py             the oracle: for an import, a deletion or an export in any state, every acceptable answer
    client.py            the target's operations, exports unique to the run, cleanup, the import-semantics probe

The spec has no conformance section. The levels' clauses are read from what it calls binding
(suites/amps/errata.md, "Levels"): a producer "ships this exact format" (the schema) with every atom declaring
how it came to exist (provenance rules); a consumer is the reference importer ("Enough to reject
malformed exports") that keeps the four invariants "the standard enforces".
"""

from __future__ import annotations

import uuid
from pathlib import Path

from memconform.core import history_counts
from memconform.core.suite import Later, Level, SuiteSpec, answers_with
from memconform.kit.fixtures_loader import spec_text_path
from memconform.suites.amps import format as amps
from memconform.suites.amps.options import OPTIONS

SPEC = amps.SPEC
PRODUCER_CLAUSE = ("schema_valid", "inferred_has_sources", "observed_has_sources")
CONSUMER_CLAUSE = ("rejects_malformed_export", "accepts_schema_edges", "sensitivity_travels", "private_stays_private", "delete_cascades",
                   "subject_id_unchanged")


# `memconform run` without --suite: an AMPS implementation answers `export` of a subject with an AMPS
# export (an unknown subject may also be refused: then it cannot tell, and says no)
_probe = answers_with("export", lambda: {"subject_id": f"memconform-probe-{uuid.uuid4().hex[:8]}"}, amps.detect)


SUITE = SuiteSpec(
    options=OPTIONS,  # the readings a run can pin (options.py)
    checks_module="memconform.suites.amps.checks",  # imported when the checks are asked for, not to name a format
    document_checks=("document",),  # every document check: all `memconform validate` imports
    spec_text=spec_text_path('ai-memory-portability-standard-v0.1.md'), requirements=Path(__file__).with_name("requirements.json"),
    name=amps.SUITE,
    spec_title=SPEC,
    version="0.1.0",
    levels=[Level("producer", "Producer", clause=PRODUCER_CLAUSE), Level("consumer", "Consumer", clause=CONSUMER_CLAUSE)],
    document_source=Later("memconform.suites.amps.client:seed_and_export"),
    detect=amps.detect,
    reference=Later("memconform.suites.amps.reference:ReferenceAmpsStore"),
    portability=Later("memconform.suites.amps.portability.declared:portable"),
    interop=Later("memconform.suites.amps.interop:pairing"),
    mutants=Later("memconform.suites.amps.mutants"), probe=_probe,
    run_notes=history_counts.with_counts(),
    hints=("subject", "atoms", "artifacts", "export_version"),
)
