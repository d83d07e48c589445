"""Outcomes, failures and the exceptions a check or target may raise."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # the implementation broke a rule
    ERRORED = "errored"  # the target crashed/timed out/answered garbage, or the harness could not run
    SKIPPED = "skipped"  # with a reason; includes not-applicable


class Keyword(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class HarnessError(Exception):
    """The harness itself cannot go on (bad arguments, unreadable input): exit 2."""


class TargetError(Exception):
    """The target crashed, timed out, refused to talk or answered garbage: the check errors."""


class SkipCheck(Exception):
    """The check does not apply (feature not claimed, operation not offered)."""

    def __init__(self, reason: str, not_applicable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.not_applicable = not_applicable


class Unsupported(SkipCheck):
    """The target says it does not offer an operation."""

    def __init__(self, op: str, detail: str = "") -> None:
        super().__init__(f"target does not offer operation {op!r}" + (f": {detail}" if detail else ""))
        self.op = op


def _short(value: Any, limit: int = 400) -> Any:
    """Keep reports readable: long values are cut, with their full length said."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"... ({len(value)} chars)"
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return value
    return text[:limit] + f"... ({len(text)} chars)"


@dataclass
class Failure:
    """One broken rule, as a check yields it. The runner adds check id, target and reproduce line."""

    title: str
    received: Any = None
    expected: Any = None
    path: str = "$"
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "received": _short(self.received),
            "expected": _short(self.expected),
            "path": self.path,
            "detail": self.detail,
        }


@dataclass
class Result:
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

    strict: bool = False  # under a strict profile SHOULD-level problems block too

    @property
    def blocking(self) -> bool:
        """A MUST check (or, strictly, a SHOULD check) that failed or errored makes the run fail."""
        gating = (Keyword.MUST.value, Keyword.SHOULD.value) if self.strict else (Keyword.MUST.value,)
        return self.keyword in gating and self.outcome in (Outcome.FAILED, Outcome.ERRORED)

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
            "reason": self.reason,
            "failures": [f.to_json() for f in self.failures],
            "duration_s": round(self.duration_s, 4),
            "reproduce": self.reproduce,
            "transcript": self.transcript[-20:],
        }
