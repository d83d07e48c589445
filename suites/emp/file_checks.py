"""File checks: each line on its own, one check per rule of the table in memconform.formats.emp.

The rules live once, as small named functions with their sentences (`emp.RULES`); this module
registers each as a document check and checks that the two sets of names are equal. One pass over
the file (`emp.scan`) serves every file check of a run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.model import Failure, HarnessError
from memconform.core.registry import REGISTRY
from memconform.formats import emp

from .common import doc_check


def findings(doc: Any, ctx: Any) -> emp.Findings:
    """One pass over the file shared by every file check of the run (a streamed file is read once)."""
    found: emp.Findings = ctx.once("emp.findings", lambda: emp.scan(emp.as_lines(doc)))
    ctx.note(f"{found.lines} non-blank lines read in one pass")
    return found


def pinned(ctx: Any, readings: tuple[str, ...]) -> bool:
    """Does the profile pin one of these readings (errata options), making the problem a failure?"""
    for name in readings:
        option, value, _ = emp.READINGS[name]
        if ctx.option(option) == value:
            return True
    return False


def rule_failures(rule: emp.Rule, doc: Any, ctx: Any) -> Iterator[Failure]:
    found = findings(doc, ctx)
    offenders = found.offenders.get(rule.name, [])
    listed = 0
    for n, message, value, readings in offenders:
        if readings and not pinned(ctx, readings):
            for name in readings:  # another plausible reading holds: seen, not failed
                ctx.reading(emp.READINGS[name][2], f"not {name}: {message}")
            continue
        listed += 1
        yield Failure(message, value, rule.expected, f"line {n}", readings=readings)
    more = found.counts.get(rule.name, 0) - len(offenders)
    if more and listed:
        yield Failure(f"{more} more lines break this rule (the first {len(offenders)} are listed)", more, 0,
                      f"after line {offenders[-1][0]}")


def _file_check(rule: emp.Rule) -> Callable[[Any, Any], Iterator[Failure]]:
    def run(doc: Any, ctx: Any) -> Iterator[Failure]:
        yield from rule_failures(rule, doc, ctx)

    run.__name__ = run.__qualname__ = rule.name
    run.__doc__ = f"Every line: {rule.expected} ({rule.section})."
    return doc_check(section=rule.section, keyword=rule.keyword, sentence=rule.sentence)(run)


FILE_CHECKS = {name: _file_check(rule) for name, rule in emp.RULES.items()}


def registered_file_checks() -> set[str]:
    return {c.id for c in REGISTRY.for_suite(emp.SUITE) if c.kind == "document"}


def assert_rules_registered() -> None:
    """The scanner's rule keys are exactly the registered file checks (as jsonschema's keyword table)."""
    want = {f"{emp.SUITE}.{name}" for name in emp.RULES}
    got = registered_file_checks()
    if want != got:
        raise HarnessError(f"emp rule table and file checks differ: rules only {sorted(want - got)}, "
                           f"checks only {sorted(got - want)}")
