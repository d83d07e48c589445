"""The emp checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.emp.checks import (  # noqa: F401  (each module registers its checks)
    concurrency,
    crash,
    domain_reader,
    file,
    hostile_input,
    lock,
    reader,
    stateful,
    writer,
)
from memconform.suites.emp.suite import SUITE

# the document a run against a target judges is the file the writer checks have it write
SUITE.document_source = writer.written_file

__all__ = ["SUITE"]
