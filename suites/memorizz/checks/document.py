"""Archive level: one check per rule of the scanner's table (memorizz.RULES), plus the number, digest and limit checks.

The structural rules are not written out here one by one: each key of memorizz.RULES becomes one check
whose id is `memorizz.<key>` and whose sentence is the table's, all fed by a single scan of the
archive. `verify_rule_registration` (run at import) fails loudly if the table and the registered
checks ever differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.json_reader import has_digit_run
from memconform.core.results import Failure, Inconclusive
from memconform.core.rules import register_rules
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.suite import SUITE

# readings.py (the suite's table of readings, built from its model, client and domain table) is imported where a
# problem or a digest needs a reading, not here: a valid archive's `memconform validate` never asks it

# ---- the document an archive check looks at ---------------------------------------------------

def limits(ctx: CheckContext) -> tuple[int, int]:
    return memorizz.SIZES[ctx.option("max_bytes")], int(ctx.option("max_records"))


def archive_state(doc: Any, ctx: CheckContext) -> memorizz.Archive:
    """The archive with its limits applied and (for a parsed document) its canonical bytes, once per run."""

    def make() -> memorizz.Archive:
        arc = doc if isinstance(doc, memorizz.Archive) else memorizz.Archive(value=doc)
        max_bytes, max_records = limits(ctx)
        if arc.unread:
            loaded = memorizz.load_file(arc.path, max_bytes, max_records, _key_order(ctx))  # type: ignore[arg-type]
            doc.malformed = loaded.malformed  # validate reads its well-formedness from the document it gave
            arc = loaded
        if not arc.refused and arc.file_bytes is not None and arc.file_bytes > max_bytes:
            arc.refused = f"file is {arc.file_bytes} bytes, over the limit of {max_bytes}"
        total = memorizz.record_total(arc.value)
        if not arc.refused and total > max_records:
            arc.refused = f"{total} records, over the limit of {max_records}"
        if not arc.refused and arc.file_bytes is None:
            canonical(arc, ctx)  # a parsed document is measured by its canonical bytes
            if arc.canonical is not None and len(arc.canonical) > max_bytes:
                arc.refused = f"{len(arc.canonical)} canonical bytes, over the limit of {max_bytes}"
        return arc

    state: memorizz.Archive = ctx.once("memorizz-archive", make)
    return state


def _key_order(ctx: CheckContext) -> str:
    return "utf16" if ctx.option("key_order") == "utf16" else "codepoint"


def canonical(arc: memorizz.Archive, ctx: CheckContext) -> bytes | None:
    if arc.canonical is None and not arc.canonical_error:
        if not isinstance(arc.value, dict):
            arc.canonical_error = "the archive is not an object"
            return None
        try:
            arc.canonical, arc.canonical_facts = memorizz.canonical_bytes_and_facts(arc.value, _key_order(ctx), arc.exact,
                                                                                arc.finite)
        except (ValueError, RecursionError) as exc:
            arc.canonical_error = str(exc)
    return arc.canonical


def readable(doc: Any, ctx: CheckContext, any_value: bool = False) -> memorizz.Archive:
    """The archive a rule judges; Inconclusive when it cannot be judged. An archive that is not a JSON object
    is judged by envelope_fields alone (`any_value`): no other rule can pass on it."""
    arc = archive_state(doc, ctx)
    if arc.malformed is not None:
        raise Inconclusive(f"the file is not well-formed JSON: {arc.malformed.message}")
    if arc.refused:
        raise Inconclusive(f"the archive is refused before this rule applies: {arc.refused}")
    if not any_value:
        an_archive(arc)
    return arc


def an_archive(arc: memorizz.Archive) -> None:
    if not isinstance(arc.value, dict):
        raise Inconclusive(f"the archive is not a JSON object but {type(arc.value).__name__}: this rule has nothing "
                           "to judge (envelope_fields reports it)")


# ---- the rule table, one check per key ------------------------------------------------------------

def rule_failures(doc: Any, ctx: CheckContext, key: str) -> Iterator[Failure]:
    arc = readable(doc, ctx, any_value=key == "envelope_fields")
    problems: dict[str, list[memorizz.Problem]] = ctx.once(
        "memorizz-scan", lambda: arc.windowed.scan if arc.windowed is not None else memorizz.scan(arc.value))
    if ctx.document is None and key in memorizz.RECORD_RULES and memorizz.record_total(arc.value) == 0:
        raise Inconclusive("the target's export holds no records, so no record rule could be observed")
    for p in problems.get(key, []):
        if p.readings:
            from memconform.suites.memorizz import reading_kinds, readings
            unpinned = [r for r in p.readings if readings.tolerated(ctx, r)]
            if unpinned:  # a problem only under a reading the run does not pin: note what was seen (the table's rows)
                for reading in unpinned:  # what the archive shows: the problem holds under this reading only
                    readings.observe(ctx, reading.partition(":")[0], reading_kinds.RuleProblem(reading), p.readings)
                continue
        yield Failure(p.title, p.received, p.expected, p.path, readings=p.readings)


RULE_CHECKS = register_rules(SUITE, memorizz.RULES, lambda rule, doc, ctx: rule_failures(doc, ctx, rule.key), level="archive")


# ---- numbers, digest and limits (need the canonical form, not the scan) ---------------------------

CHECKSUM = ("The checksum covers canonical UTF-8 JSON of every field except integrity: object keys sorted, compact "
            "separators, literal Unicode, and no NaN or Infinity.")


@SUITE.check(kind="document", level="archive", section="Integrity and validation", keyword="MUST", sentence=CHECKSUM)
def numbers_finite(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    if arc.windowed is None:  # else every window and the envelope had a canonical form
        canonical(arc, ctx)
    if arc.canonical_error:
        yield Failure("the archive has no canonical JSON form", arc.canonical_error, "finite numbers only")


@SUITE.check(kind="document", level="archive", section="Integrity and validation", keyword="MUST", sentence=CHECKSUM)
def integrity_digest(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    integ = arc.value.get("integrity") if isinstance(arc.value, dict) else None
    claimed = integ.get("digest") if isinstance(integ, dict) else None
    if not isinstance(claimed, str):
        raise Inconclusive("no integrity digest to compare (integrity_form reports it)")
    order = _key_order(ctx)
    # errata M2: "object keys sorted" by code points or by UTF-16 units; a reading is recorded only
    # where the two orders give different bytes, so that the digest shows which one was followed
    other_order = "codepoint" if order == "utf16" else "utf16"
    if arc.windowed is not None:  # hashed as the windows were written: no key the two orders sort otherwise
        actual = other = arc.windowed.digest
    else:
        data = canonical(arc, ctx)
        if data is None:
            raise Inconclusive(f"no canonical form to hash (numbers_finite reports it): {arc.canonical_error}")
        actual = hashlib.sha256(data).hexdigest()
        # no key a UTF-16 order sorts differently: one text, one digest
        facts = arc.canonical_facts
        same_text = not facts.order_sensitive if facts is not None else memorizz.key_orders_agree(data)
        other = actual if same_text else hashlib.sha256(memorizz.canonical_bytes(arc.value, other_order)).hexdigest()
    pinned = ctx.option("key_order")
    if actual == other:
        seen_ok = actual == claimed
    else:  # the table's readings of M2 (the key_order option pins one)
        from memconform.suites.memorizz import reading_kinds, readings
        seen_ok = readings.observe(ctx, "M2", reading_kinds.Digests({order: actual, other_order: other}), claimed).failure is None
    if not seen_ok:
        yield Failure("integrity.digest is not the sha256 of the canonical JSON", claimed, actual, "$.integrity.digest",
                      readings=() if pinned == "either" else (f"key_order={pinned}",))


@SUITE.check(kind="document", level="archive", section="Integrity and validation", keyword="SHOULD",
           sentence="Use strings for identifiers and exact integers beyond JavaScript's safe integer range.")
def integers_safe(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    if arc.windowed is not None:  # judged window by window (format/windows.py)
        arc.long_digits = arc.windowed.long_digits
    text = canonical(arc, ctx) if arc.long_digits is None else None
    if text is not None:  # every integer written as in the file
        arc.long_digits = arc.canonical_facts.long_digits if arc.canonical_facts else has_digit_run(text, 16)
    if arc.long_digits is False:  # no run of 16 digits: no integer can be that large
        return
    found = arc.windowed.unsafe if arc.windowed is not None else sorted(memorizz.unsafe_integers(arc.value))[:memorizz.SHOWN_UNSAFE]
    for path, number in found:
        yield Failure("an integer beyond JavaScript's safe range is written as a number", number,
                      f"a string (|n| <= {memorizz.SAFE_INTEGER})", path)


@SUITE.check(kind="document", level="archive", section="Integrity and validation", keyword="MUST",
           sentence="The default archive limits are 50 MiB and 100,000 records.")
def within_limits(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if not arc.refused and arc.malformed is None:
        an_archive(arc)  # what is not an archive is not "within the limits" of one
    if arc.refused:
        max_bytes, max_records = limits(ctx)
        yield Failure(f"the archive is over a limit: {arc.refused}", arc.refused,
                      f"at most {max_bytes} bytes and {max_records} records")
