"""Edge Memory Protocol v1.0 suite: the SuiteSpec and its levels; the checks live by topic in checks/.

checks/file.py (each line, from the rule table in memconform.suites.emp.format) · reader.py · writer.py ·
lock.py · concurrency.py · stateful.py (model-based sequences) · crash.py (a cmd: writer's write cut short
mid-operation) · domain_*.py (the domain table). Operations: see checks/common.py and suites/emp/errata.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core import established, history_counts
from memconform.core.suite import Later, Level, SuiteSpec
from memconform.kit.fixtures_loader import spec_text_path
from memconform.suites.emp import format as emp
from memconform.suites.emp.options import OPTIONS


def _probe(target: Any) -> bool:
    """`memconform run` without --suite: an EMP app resolves a memory.jsonl (here one that does not
    exist yet, in a folder of its own) to a list of entries."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="memconform-probe-") as folder:
        try:
            reply = target.call("resolve", {"path": str(Path(folder) / "memory.jsonl")})
        except Exception:  # noqa: BLE001  refused, absent, garbage: not an EMP app
            return False
    return bool(reply.ok and isinstance(reply.body, list) and reply.body == [])


def _parse(raw: bytes) -> Any:
    return list(emp.iter_text(raw))


# The spec has no conformance section (errata "Levels"). Each clause lists the rules the spec states
# with "must" or as the schema of every entry: File, "Validate entries: Check schema before writing";
# Reader, "Apps must handle entries with different protocol versions" and the write operations a
# reader resolves; Writer, "Apps must implement file locking to prevent concurrent writes from
# corrupting the file." and the write operations.
FILE_CLAUSE = tuple(name for name, rule in emp.RULES.items() if rule.keyword == "MUST")
READER_CLAUSE = ("reader_newest_ts_wins", "reader_tombstone_deletes", "reader_deleted_stays_deleted",
                 "reader_newer_after_tombstone", "reader_equal_ts_tie", "reader_corrupt_line_isolated", "reader_unknown_ignored",
                 "reader_newer_major_refused", "reader_long_content")
WRITER_CLAUSE = ("writer_waits_for_lock", "writer_locks_around_write", "writer_lock_removed",
                 "writer_concurrent_no_loss", "writer_missing_file_contention", "writer_after_torn_line",
                 "writer_append_keeps_foreign", "writer_delete_keeps_foreign", "writer_update_same_id",
                 "writer_ts_millis", "writer_version_1x", "writer_model_sequences", "writer_killed_mid_write")

SUITE = SuiteSpec(
    options=OPTIONS,  # the readings a run can pin (options.py)
    # the document a run against a target judges is the file the writer checks have it write
    document_source=Later("memconform.suites.emp.checks.writer:written_file"),
    checks_module="memconform.suites.emp.checks",  # imported when the checks are asked for, not to name a format
    document_checks=("file",),  # every document check: all `memconform validate` imports
    spec_text=spec_text_path('edge-memory-protocol-v1.0.md'), requirements=Path(__file__).with_name("requirements.json"),
    name=emp.SUITE, spec_title=emp.SPEC, version="1.0",
    levels=[Level("file", "File", clause=FILE_CLAUSE), Level("reader", "Reader", clause=READER_CLAUSE),
            Level("writer", "Writer", clause=WRITER_CLAUSE)],
    detect=emp.detect, parse=_parse, stream=emp.LineStream,
    reference=Later("memconform.suites.emp.reference:ReferenceEmpApp"),
    portability=Later("memconform.suites.emp.portability.declared:portable"),
    interop=Later("memconform.suites.emp.interop:pairing"),
    mutants=Later("memconform.suites.emp.mutants"), probe=_probe,
    run_notes=history_counts.with_counts(established.run_notes),  # what the run established, then the counts
    hints=("v", "id", "ts", "src", "content"),
)
