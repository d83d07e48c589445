"""Outcomes, failures and the exceptions a check or target may raise."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

from .redact import plain


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # the implementation broke a rule
    ERRORED = "errored"  # the target crashed/timed out/answered garbage, or the harness could not run
    SKIPPED = "skipped"  # with a reason; includes not-applicable and inconclusive


class Keyword(enum.StrEnum):
    MUST = "MUST"
    MUST_NOT = "MUST NOT"
    SHOULD = "SHOULD"
    SHOULD_NOT = "SHOULD NOT"
    MAY = "MAY"

    @property
    def absolute(self) -> bool:
        """MUST and MUST NOT: a failure blocks the check's level whatever the clause says."""
        return self in (Keyword.MUST, Keyword.MUST_NOT)


class HarnessError(Exception):
    """The harness itself cannot go on (bad arguments, unreadable input): exit 2."""


class TargetError(Exception):
    """The target crashed, timed out, refused to talk or answered garbage: the check errors."""


class ControlRefused(TargetError):
    """The positive control of a negative check was not accepted: "rejects X" cannot be shown.

    A target that refuses everything, or a broken connection, must never pass a rejection check,
    so the check errors (never passes) with the reason "positive control refused: ..."."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"positive control refused: {detail}")
        self.detail = detail


class SkipCheck(Exception):
    """The check does not apply (feature not claimed, operation not offered: `not_applicable=True`)."""

    inconclusive = False

    def __init__(self, reason: str, not_applicable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.not_applicable = not_applicable


class Inconclusive(SkipCheck):
    """The check ran but had nothing to observe (empty page, seed refused, nothing to compare).

    Never a pass: a level whose clause or MUST check is inconclusive is "not assessed"."""

    inconclusive = True

    def __init__(self, reason: str) -> None:
        super().__init__(reason, not_applicable=False)


class NeedsHook(Inconclusive):
    """The rule is observable only through a memconform test hook the target does not offer (or refused):
    not assessed, and not held against the target unless the run requires hooks (--require-hooks, certify)."""

    needs_kind = "hook"

    def __init__(self, what: str, hook: str, detail: str = "") -> None:
        super().__init__(f"{what} needs the {hook} hook, which the target does not offer" + (f": {detail}" if detail else ""))
        self.needs = f"{what}, needs the {hook} hook"


class NotExercised(Inconclusive):
    """memconform deliberately did not exercise the rule (e.g. it could reach a real AI provider); the
    option that lets it run is named. Not assessed, and never deciding the exit code."""

    needs_kind = "option"

    def __init__(self, what: str, option: str, detail: str = "") -> None:
        super().__init__(f"{what} not exercised" + (f" ({detail})" if detail else "") + f": pass --option {option} to assess it")
        self.needs = f"{what}, needs --option {option}"


class NeedsOperator(Inconclusive):
    """The rule is observable only through a file or value only the operator can name (the server's own
    log, omp.server_log): not assessed, naming the option; like a missing hook it decides the exit code
    only when the run requires everything to be assessed (--require-hooks, certify)."""

    needs_kind = "operator"

    def __init__(self, what: str, option: str, detail: str = "") -> None:
        super().__init__(f"{what} needs --option {option}, which only the operator can give" + (f": {detail}" if detail else ""))
        self.needs = f"{what}, needs --option {option}"


class Unsupported(SkipCheck):
    """The target says it does not offer an operation (404/405/501, exit 4): not applicable."""

    def __init__(self, op: str, detail: str = "") -> None:
        super().__init__(f"target does not offer operation {op!r}" + (f": {detail}" if detail else ""),
                         not_applicable=True)
        self.op = op


SHORT_LIMIT = 400


def _short(value: Any, limit: int = SHORT_LIMIT) -> Any:
    """Keep reports readable: long values are cut, with their full length said.

    The value is first made plain, strict-JSON data (see redact.plain), so cutting never meets
    bytes, NaN, surrogates or unbounded nesting; callers redact before they cut."""
    value = plain(value)
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"... ({len(value)} chars)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    if len(text) <= limit:
        return value
    return text[:limit] + f"... ({len(text)} chars)"


@dataclass
class Failure:
    """One broken rule, as a check yields it. The runner adds check id, target and reproduce line.

    `readings`: the readings of open spec text (errata ids or option values) under which this is a
    failure; empty when it is one under every plausible reading."""

    title: str
    received: Any = None
    expected: Any = None
    path: str = "$"
    detail: str = ""
    readings: tuple[str, ...] = ()
    explained_by: str = ""  # the check that established the deviation explaining this failure (core/established.py)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": _short(str(self.title), 2000),
            "received": _short(self.received),
            "expected": _short(self.expected),
            "path": _short(str(self.path), 2000),
            "detail": _short(str(self.detail), 4000),
            "readings": [str(r) for r in self.readings],
            **({"explained_by": self.explained_by} if self.explained_by else {}),
        }


@dataclass
class Result:
    """One check's outcome on one target: what the report, the verdicts and `validate` read."""

    check_id: str
    suite: str
    spec: str
    section: str
    keyword: str
    level: str
    sentence: str
    outcome: Outcome
    reason: str = ""
    failures: list[Failure] = field(default_factory=list)
    duration_s: float = 0.0
    reproduce: str = ""
    transcript: list[str] = field(default_factory=list)
    not_applicable: bool = False
    inconclusive: bool = False  # skipped: ran but had nothing to observe
    in_clause: bool = False  # a level's conformance clause lists this check: it decides that level
    needs: str = ""  # inconclusive for want of a test hook or an option: what would let it be assessed
    needs_kind: str = ""  # "hook", "operator" or "option" (NeedsHook, NeedsOperator, NotExercised)
    curl: list[str] = field(default_factory=list)  # HTTP targets: the failed check's last requests as curl lines

    strict: bool = False  # under a strict profile SHOULD-level problems block too

    @property
    def deciding(self) -> bool:
        """Does this check decide its level? Clause checks and MUST checks do; others only under strict."""
        return self.in_clause or self.keyword in (Keyword.MUST.value, Keyword.MUST_NOT.value) or self.strict

    @property
    def blocking(self) -> bool:
        """A deciding check that failed or errored: the run cannot be conformant."""
        return self.deciding and self.outcome in (Outcome.FAILED, Outcome.ERRORED)

    @property
    def warning(self) -> bool:
        """A failure of a SHOULD/MAY rule that no level's clause requires (outside strict)."""
        return self.outcome is Outcome.FAILED and not self.deciding

    @classmethod
    def from_json(cls, line: dict[str, Any], strict: bool = False) -> Result:
        """A result line of a report read back (what the pytest plugin merges from xdist workers)."""
        return cls(
            check_id=line["check_id"], suite=line["suite"], spec=line["spec"], section=line["section"],
            keyword=line["keyword"], level=line["level"], sentence=line["sentence"], outcome=Outcome(line["outcome"]),
            reason=line.get("reason", ""), duration_s=float(line.get("duration_s", 0.0)), reproduce=line.get("reproduce", ""),
            failures=[Failure(f["title"], f.get("received"), f.get("expected"), f.get("path", "$"), f.get("detail", ""),
                              tuple(f.get("readings", ())), str(f.get("explained_by", ""))) for f in line.get("failures", [])],
            transcript=list(line.get("transcript", [])), not_applicable=bool(line.get("not_applicable")),
            inconclusive=bool(line.get("inconclusive")), in_clause=bool(line.get("in_clause")), strict=strict,
            needs=str(line.get("needs", "")), needs_kind=str(line.get("needs_kind", "")),
            curl=[str(c) for c in line.get("curl", [])],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "result",
            "check_id": self.check_id,
            "suite": self.suite,
            "spec": self.spec,
            "section": self.section,
            "keyword": self.keyword,
            "level": self.level,
            "sentence": self.sentence,
            "outcome": self.outcome.value,
            "not_applicable": self.not_applicable,
            "inconclusive": self.inconclusive,
            "in_clause": self.in_clause,
            "warning": self.warning,
            **({"needs": self.needs, "needs_kind": self.needs_kind} if self.needs else {}),
            "reason": _short(self.reason, 4000),
            "failures": [f.to_json() for f in self.failures],
            "duration_s": round(self.duration_s, 4),
            "reproduce": self.reproduce,
            "transcript": [_short(t, 2000) for t in self.transcript[-20:]],
            **({"curl": [_short(c, 6000) for c in self.curl]} if self.curl else {}),
        }
