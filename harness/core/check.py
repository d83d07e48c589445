"""A check: one small named function tied to one spec sentence, validated when its suite registers it.

A wrong declaration is refused at import time with a message naming the check (schemathesis refuses a
bad check when it is decorated): an unknown level or keyword, a signature that does not fit the kind, an
id registered twice, a sentence that is not verbatim in the spec text.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .results import Failure, HarnessError, Keyword

CheckFn = Callable[..., Iterator[Failure]]

# what each kind of check is called with, by the runner (core/runner.py)
KIND_PARAMETERS = {"document": ("doc", "ctx"), "target": ("ctx",)}


# A sweep (every class of a domain table, each in a call or three of its own) against a target that starts
# a process per call makes hundreds of calls at ~0.1 s each: it gets this many check budgets (the run
# budget still bounds it, and a hung target still ends it at once).
SWEEP_BUDGET_FACTOR = 3


@dataclass(frozen=True)
class Check:
    """A registered check: its id, the spec sentence it holds, its level and the function that runs it."""

    id: str
    suite: str
    spec: str
    section: str
    keyword: Keyword
    level: str
    sentence: str
    kind: str  # "document": fn(doc, ctx) ; "target": fn(ctx)
    fn: CheckFn
    needs: tuple[str, ...] = ()
    sweep: bool = False  # a sweep of a domain table: hundreds of calls, SWEEP_BUDGET_FACTOR times the check budget

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "suite": self.suite,
            "spec": self.spec,
            "section": self.section,
            "keyword": self.keyword.value,
            "level": self.level,
            "kind": self.kind,
            "sentence": self.sentence,
        }


def squash(text: str) -> str:
    """Whitespace folded: a sentence is compared with the spec text as words, not as line breaks."""
    return " ".join(text.split())


def declaration_problems(check: Check, levels: set[str], spec_text: str | None) -> list[str]:
    """Everything wrong with a declaration, as sentences (empty: the check may register)."""
    problems = []
    if check.level not in levels:
        problems.append(f"level {check.level!r} is not one of the suite's levels ({', '.join(sorted(levels))})")
    if check.kind not in KIND_PARAMETERS:
        problems.append(f"kind {check.kind!r} is not one of {', '.join(KIND_PARAMETERS)}")
    else:
        wanted = len(KIND_PARAMETERS[check.kind])
        if not _takes_positional(check.fn, wanted):
            problems.append(f"a {check.kind} check is called as fn({', '.join(KIND_PARAMETERS[check.kind])}); "
                            f"{check.fn.__name__}{inspect.signature(check.fn)} does not take that")
    if not inspect.isgeneratorfunction(check.fn):
        problems.append("a check is a generator of Failures (it must `yield`, even if it never fails)")
    if not check.sentence:
        problems.append("the sentence is empty")
    elif spec_text is not None and check.sentence not in spec_text:
        problems.append(f"the sentence is not verbatim in the spec text: {check.sentence[:120]!r}")
    return problems


def _takes_positional(fn: Callable[..., Any], count: int) -> bool:
    try:
        inspect.signature(fn).bind(*range(count))
    except TypeError:
        return False
    return True


def parse_keyword(value: str, check_id: str) -> Keyword:
    try:
        return Keyword(value)
    except ValueError:
        known = ", ".join(k.value for k in Keyword)
        raise HarnessError(f"check {check_id}: keyword {value!r} is not one of {known}") from None
