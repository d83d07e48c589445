"""One implementation's outcome for one check and for one sentence, from report result lines.

A cell (implementation x sentence) is one of: passed, failed, warning (a SHOULD/MAY rule no level
requires), not applicable, or not assessed, with the reason. Not assessed covers everything that says
nothing about the implementation: a check that errored (a broken connection, a harness bug), was not
run (a spent run budget, a hung target), was cut short by a spent budget (a failure decided by the
clock, not by the target), or was skipped otherwise (inconclusive). Such a cell is never a pass and
never a failure. A sentence observed by several checks: a failure anywhere decides; else any check not
assessed leaves the cell not assessed; else passed (or not applicable). Several seeds of one check: the
same rule over the seeds. A check left out of the run on purpose (`--check`: not in the report at all)
is no evidence either way; a sentence none of whose checks ran is not assessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

PASSED, FAILED, WARNING = "passed", "failed", "warning"
NOT_APPLICABLE, NOT_ASSESSED = "not applicable", "not assessed"
OUTCOMES = (PASSED, FAILED, WARNING, NOT_APPLICABLE, NOT_ASSESSED)
# a decided failure first; then anything that leaves the cell open; a pass only when nothing is open
_PRECEDENCE = (FAILED, WARNING, NOT_ASSESSED, PASSED, NOT_APPLICABLE)
DECISIVE = {PASSED: "pass", FAILED: "fail", WARNING: "fail"}
REASON_CHARS = 300

# The clock's own words (core/clock.py): a failure or error decided by a spent budget or a hung target,
# not by what the target answered.
_BUDGET = re.compile(r"budget \([0-9.e+]+ s\) is spent|bounded by the (?:run|check) budget of|"
                     r"the target was marked hung")


@dataclass(frozen=True)
class Assessed:
    """One cell: its outcome; for a failure or a cell not assessed, the check that decided it and why."""

    outcome: str
    check: str = ""
    reason: str = ""


def budget_cut(line: dict[str, Any]) -> str | None:
    """Why a failed or errored line says nothing about the target (a budget ran out), or None. A failed
    line is cut only when every failure it lists is the clock's: one real failure beside them decides."""
    if line.get("outcome") != "failed":
        reason = str(line.get("reason") or "")
        return _clip(reason) if _BUDGET.search(reason) else None
    texts = [f"{f.get('title', '')} {f.get('detail', '')} {f.get('received') if isinstance(f.get('received'), str) else ''}"
             for f in line.get("failures") or [] if isinstance(f, dict)
             and not str(f.get("title", "")).startswith("... and ")]  # the runner's count of further failures
    if texts and all(_BUDGET.search(t) for t in texts):
        return _clip(texts[0])
    return None


def of_result(line: dict[str, Any]) -> Assessed:
    check, outcome = str(line.get("check_id", "")), line.get("outcome")
    if outcome == "passed":
        return Assessed(PASSED, check)
    if outcome == "failed":
        cut = budget_cut(line)
        if cut:
            return Assessed(NOT_ASSESSED, check, f"cut short by a budget: {cut}")
        title = line["failures"][0]["title"] if line.get("failures") else ""
        return Assessed(WARNING if line.get("warning") else FAILED, check, _clip(str(title)))
    if outcome == "skipped":
        if line.get("not_applicable"):
            return Assessed(NOT_APPLICABLE, check)
        return Assessed(NOT_ASSESSED, check, "skipped: " + _clip(str(line.get("reason") or "no reason given")))
    reason = str(line.get("reason") or "no reason given")
    if reason.startswith("not run"):
        return Assessed(NOT_ASSESSED, check, _clip(reason))
    return Assessed(NOT_ASSESSED, check, "errored: " + _clip(reason))


def combined(cells: Iterable[Assessed]) -> Assessed:
    """Several checks (or seeds) of one sentence: the first by precedence; nothing at all: not assessed."""
    seen = list(cells)
    for outcome in _PRECEDENCE:
        for cell in seen:
            if cell.outcome == outcome:
                return cell
    return Assessed(NOT_ASSESSED, "", "none of its checks was selected for the run")


def of_check(check: str, lines: list[dict[str, Any]]) -> Assessed | None:
    """The check over its seeds; None when it is not in the report (left out of the run: no evidence)."""
    return combined(of_result(line) for line in lines) if lines else None


def side(outcome: str) -> str | None:
    """'pass' or 'fail' for an outcome that takes a side, None for the rest (not applicable, not assessed)."""
    return DECISIVE.get(outcome)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"
