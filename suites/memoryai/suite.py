"""MemoryAI Protocol v1 suite: the SuiteSpec with its levels from §5.

The checks live by topic in checks/: document (Level 1, on a bundle), producer (Level 1 on a live
target), consumer (Level 2), roundtrip and profile (Level 3 and the HTTP profile), stateful.
"""

from __future__ import annotations

from pathlib import Path

from memconform.core import history_counts
from memconform.core.suite import Later, Level, SuiteSpec, answers_with
from memconform.kit.fixtures_loader import spec_text_path
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.options import OPTIONS

# §5, quoted in suites/memoryai/errata.md E16: each bullet of a level's clause names the checks that decide it,
# whatever keyword the bullet's own section uses (§3.6's checksum is a SHOULD, §3.5's mismatch too).
LEVEL_1_CLAUSE = (
    # "passes the envelope check in § 3.1"
    "envelope_format_literal", "envelope_version_integer", "manifest_required_fields",
    # "correctly encodes embeddings per § 3.5"
    "embedding_base64_float32", "embedding_length_matches_dim", "embedding_little_endian",
    # "includes a valid `checksum` per § 3.6"
    "checksum_present_and_valid", "checksum_valid_scoped",
    # "declares accurate `manifest.counts`"
    "counts_accurate", "counts_accurate_scoped",
)
LEVEL_2_CLAUSE = (
    # "if it can ingest any spec-conformant Bundle"
    "ingests_conformant_bundles",
    # "enforce idempotency rules in § 3.8"
    "reimport_inserts_nothing", "existing_row_preserved", "edges_upserted", "entities_upserted", "tenant_id_not_adopted",
    # "enforce DNA-protection rules in § 3.7"
    "dna_never_decayed", "core_memory_types_recognized",
    # "handle embedding model mismatch per § 3.5"
    "embedding_mismatch_dropped",
)
LEVEL_3_CLAUSE = ("roundtrip_equivalent", "own_export_imported_back_large")
# §4 "Conforming HTTP implementations SHOULD expose at least:" the five endpoints of its table
HTTP_CLAUSE = ("export_scope_dna_only", "export_scope_since", "export_stream_equivalent", "import_file_multipart",
               "spec_endpoint", "import_report_shape")

# `memconform run` without --suite: a MemoryAI target exports a memoryai-bundle
_probe = answers_with("export", lambda: {"scope": "full"}, memoryai.detect)


SPEC = "MemoryAI Protocol v1"

SUITE = SuiteSpec(
    options=OPTIONS,  # the readings a run can pin (options.py)
    # `memconform replay FILE --suite memoryai`: a saved bundle is round-tripped again
    replay=Later("memconform.suites.memoryai.checks.profile:roundtrip_once"),
    checks_module="memconform.suites.memoryai.checks",  # imported when the checks are asked for, not to name a format
    document_checks=("document",),  # every document check: all `memconform validate` imports
    spec_text=spec_text_path('memoryai-protocol-v1.md'), requirements=Path(__file__).with_name("requirements.json"),
    name=memoryai.SUITE,
    spec_title=SPEC,
    version="1",
    levels=[
        Level("1", "Level 1 Producer", clause=LEVEL_1_CLAUSE),
        Level("2", "Level 2 Consumer", clause=LEVEL_2_CLAUSE),
        Level("3", "Level 3 Bidirectional", requires=("1", "2"), clause=LEVEL_3_CLAUSE),
        Level("http", "HTTP profile (RECOMMENDED)", clause=HTTP_CLAUSE, optional=True),
    ],
    document_source=Later("memconform.suites.memoryai.client:seed_and_export"),
    detect=memoryai.detect,
    routes=memoryai.ROUTES,
    reference=Later("memconform.suites.memoryai.reference.brain:ReferenceBrain"),
    portability=Later("memconform.suites.memoryai.portability.declared:portable"),
    interop=Later("memconform.suites.memoryai.interop:pairing"),
    mutants=Later("memconform.suites.memoryai.mutants"),
    serve=Later("memconform.suites.memoryai.reference.http_app:serve_reference"), probe=_probe,
    run_notes=history_counts.with_counts(),
    hints=("generator", "exported_at", "chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents"),
)

__all__ = ["SUITE"]
