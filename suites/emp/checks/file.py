"""File checks: each line on its own, one check per rule of the table in memconform.suites.emp.format.

The rules live once, as small named functions with their sentences (`emp.RULES`); this module
registers each as a document check and checks that the two sets of names are equal. One pass over
the file (`emp.scan`) serves every file check of a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import includes
from memconform.core.results import Failure, Inconclusive
from memconform.core.rules import register_rules
from memconform.suites.emp import format as emp
from memconform.suites.emp.suite import SUITE


def findings(doc: Any, ctx: CheckContext) -> emp.Findings:
    """One pass over the file shared by every file check of the run (a streamed file is read once)."""
    if not isinstance(doc, (str, bytes, list, emp.LineStream)):  # not the lines of a file: nothing to judge
        raise Inconclusive(f"not an EMP file (its text or its lines) but {type(doc).__name__}")
    found: emp.Findings = ctx.once("emp.findings", lambda: emp.scan(emp.as_lines(doc)))
    ctx.note(f"{found.lines} non-blank lines read in one pass")
    return found


LINE_LEVEL = ("lines_are_json_objects", "lines_utf8")  # rules about a line itself, not a memory's fields


def pinned(ctx: CheckContext, reading: str) -> bool:
    """Does the profile pin this reading (an errata option), making the problem a failure?"""
    option, value = emp.PINNED[reading]
    return bool(ctx.option(option) == value)


def rule_failures(rule: emp.Rule, doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    found = findings(doc, ctx)
    if rule.key not in LINE_LEVEL and found.lines and found.counts.get("lines_are_json_objects", 0) >= found.lines:
        # every line is broken: a rule about a memory's fields has no memory to pass on
        raise Inconclusive("no line is a JSON object: this rule has nothing to judge (lines_are_json_objects reports it)")
    offenders = found.offenders.get(rule.key, [])
    listed = 0
    for n, message, value, readings in offenders:
        unpinned = [r for r in readings if not pinned(ctx, r)]
        if unpinned:  # a problem only under a reading the default does not pin: note what was seen
            for reading in unpinned:  # what the line shows: the problem holds under this reading only
                point, _, value = reading.partition(":")
                ctx.observe(point, {f"not {value}": includes(reading)},
                            readings)
            continue
        listed += 1
        yield Failure(message, value, rule.expected, f"line {n}", readings=readings)
    more = found.counts.get(rule.key, 0) - len(offenders)
    if more and listed:
        yield Failure(f"{more} more lines break this rule (the first {len(offenders)} are listed)", more, 0,
                      f"after line {offenders[-1][0]}")


FILE_CHECKS = register_rules(SUITE, emp.RULES, lambda rule, doc, ctx: rule_failures(rule, doc, ctx), level="file")
