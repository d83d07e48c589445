"""Running a suite's document checks on one document, with no target and no report folder: what
`memconform validate` needs of a run, importable without the run's own machinery (targets, the
report writers), so `validate` starts quickly. The session uses both."""

from __future__ import annotations

from typing import Any

from ..core.check_context import NoTarget
from ..core.profile import Profile
from ..core.registry import select_document_checks
from ..core.results import HarnessError, Result
from ..core.runner import Context, run_checks
from ..core.suite import SuiteSpec, get_suite


def validate_document(doc: Any, suite_or_name: SuiteSpec | str, profile: Profile,
                      check_ids: list[str] | None = None) -> list[Result]:
    """Run a suite's document checks on one document (memconform validate)."""
    suite = get_suite(suite_or_name) if isinstance(suite_or_name, str) else suite_or_name
    suite_name = suite.name
    checks = select_document_checks(suite_name, check_ids)  # only the document checks' modules are imported
    if not checks:
        raise HarnessError(f"suite {suite_name!r} has no document checks")
    ctx = Context(suite=suite, target=NoTarget(), profile=profile, document=doc)
    return list(run_checks(checks, ctx))
