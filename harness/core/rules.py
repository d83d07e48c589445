"""Rule tables: a spec's rules as data (one row per sentence), each registered as one check.

A suite whose document rules run in one scanner (jsonschema's keyword table) keeps its rules as rows
of a `Rule` (or a subclass adding what its scanner needs) and registers them with `register_rules`,
which also verifies that the table's keys and the registered check ids are the same set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .check import CheckFn
from .results import Failure, HarnessError
from .suite import SuiteSpec


@dataclass(frozen=True)
class Rule:
    """One row of a rule table: registered as the check `<suite>.<key>` with its spec sentence."""

    key: str  # the check id without the suite prefix
    section: str
    keyword: str
    sentence: str  # verbatim from the spec (whitespace normalised)


R = TypeVar("R", bound=Rule)


def register_rules(suite: SuiteSpec, rules: Mapping[str, R], run: Callable[[R, Any, Any], Iterator[Failure]], *,
                   level: str, kind: str = "document") -> dict[str, CheckFn]:
    """Register each rule as a check calling `run(rule, doc, ctx)`; the table and the registered ids must agree."""
    checks: dict[str, CheckFn] = {}
    for key, rule in rules.items():
        if key != rule.key:
            raise HarnessError(f"{suite.name} rule table: row {key!r} holds the rule {rule.key!r}")
        checks[key] = suite.check(kind=kind, level=level, section=rule.section, keyword=rule.keyword,
                                  sentence=rule.sentence)(_rule_fn(rule, run))
    registered = {key for key, fn in checks.items() if suite.registered_so_far()[f"{suite.name}.{key}"].fn is fn}
    if registered != set(rules):
        raise HarnessError(f"{suite.name} rule table and registered checks differ: {sorted(set(rules) ^ registered)}")
    return checks


def _rule_fn(rule: R, run: Callable[[R, Any, Any], Iterator[Failure]]) -> CheckFn:
    def check(doc: Any, ctx: Any) -> Iterator[Failure]:
        yield from run(rule, doc, ctx)

    check.__name__ = check.__qualname__ = rule.key
    check.__module__ = run.__module__  # the check module that registered the table
    check.__doc__ = rule.sentence
    return check
