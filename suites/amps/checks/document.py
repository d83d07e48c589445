"""Producer level: the export document. `schema_valid` checks the published schema (its own table);
every prose rule is one key of the scanner's table (amps.RULES), registered here as one check.

Against a target, a rule with nothing to look at in the export (no inferred atom, no interval) is
inconclusive, not passed; a document given to `memconform validate` is judged as it is.
`verify_rule_registration` (run at import) fails loudly if the table and the registered checks differ.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Failure, Inconclusive, SkipCheck
from memconform.core.rules import register_rules
from memconform.suites.amps import format as amps
from memconform.suites.amps.suite import SUITE

PINNED = {"A7:strictly-after": ("validity_order", "strictly-after")}  # a reading -> the option value pinning it


@SUITE.check(kind="document", level="producer", section="Schema", keyword="MUST", sentence="Draft v0.1. Compatible with JSON Schema 2020-12.")
def schema_valid(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    for path, message, instance in amps.schema_errors(doc):
        yield Failure("export does not validate against the published schema", instance, message, path)


def rule_failures(doc: Any, ctx: CheckContext, rule: amps.Rule) -> Iterator[Failure]:
    if rule.gate is not None:
        option, value, runs_when_equal = rule.gate
        if (ctx.option(option) == value) != runs_when_equal:
            raise SkipCheck(f"option {option}={ctx.option(option)}: this rule is not applied", not_applicable=True)
    if not isinstance(doc, dict):  # no atom or reference to judge: never a pass (schema_valid fails it)
        raise Inconclusive(f"the export is not an AMPS document (a JSON object) but {type(doc).__name__}: this rule "
                           "has nothing to judge (schema_valid reports it)")
    found: amps.Scan = ctx.once("amps-scan", lambda: amps.scan(doc))
    if not found.observed.get(rule.key) and ctx.document is None:
        raise Inconclusive(f"the target's export holds no {rule.observes}, so the rule could not be observed")
    for p in found.problems.get(rule.key, []):
        if any(ctx.option(PINNED[r][0]) != PINNED[r][1] for r in p.readings):
            # a problem only under a reading the profile does not pin: the document shows the other reading
            unpinned_seen(ctx, p)
            continue
        yield Failure(p.title, p.received, p.expected, p.path, readings=p.readings)


def unpinned_seen(ctx: CheckContext, problem: amps.Problem) -> None:
    """A problem only under a reading the profile does not pin: a zero-length interval is recorded (A7)."""
    # the table of readings (built from the domain table) only now: a valid export's validate never asks it
    from memconform.suites.amps import readings, table

    table.observe(ctx, "A7", Asked(readings.UNPINNED), problem)


RULE_CHECKS = register_rules(SUITE, amps.RULES, lambda rule, doc, ctx: rule_failures(doc, ctx, rule), level="producer")
