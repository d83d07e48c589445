"""One implementation's outcome for one check and for one sentence, from report result lines.

Six outcomes: passed, failed, warning (a SHOULD/MAY rule no level requires), not applicable, not
assessed (skipped otherwise, inconclusive, or not run), errored. A sentence observed by several checks
takes the worst of them; several seeds of one check, the worst of those too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PASSED, FAILED, WARNING, ERRORED = "passed", "failed", "warning", "errored"
NOT_APPLICABLE, NOT_ASSESSED = "not applicable", "not assessed"
OUTCOMES = (PASSED, FAILED, WARNING, NOT_APPLICABLE, NOT_ASSESSED, ERRORED)
# worst first: a failure anywhere decides; an error hides whether the rest would hold
_SEVERITY = (FAILED, ERRORED, WARNING, PASSED, NOT_APPLICABLE, NOT_ASSESSED)
DECISIVE = {PASSED: "pass", FAILED: "fail", WARNING: "fail"}


def of_result(line: dict[str, Any]) -> str:
    outcome = line["outcome"]
    if outcome == "failed":
        return WARNING if line.get("warning") else FAILED
    if outcome == "skipped":
        return NOT_APPLICABLE if line.get("not_applicable") else NOT_ASSESSED
    return str(outcome)


def worst(outcomes: Iterable[str]) -> str:
    seen = set(outcomes)
    for outcome in _SEVERITY:
        if outcome in seen:
            return outcome
    return NOT_ASSESSED


def side(outcome: str) -> str | None:
    """'pass' or 'fail' for an outcome that takes a side, None for the rest (errored, n/a, not assessed)."""
    return DECISIVE.get(outcome)
