"""Archive level: one check per rule of the scanner's table (mz.RULES), plus the number, digest and limit checks.

The structural rules are not written out here one by one: each key of mz.RULES becomes one check
whose id is `memorizz.<key>` and whose sentence is the table's, all fed by a single scan of the
archive. `verify_rule_registration` (run at import) fails loudly if the table and the registered
checks ever differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, HarnessError, Inconclusive
from memconform.core.registry import REGISTRY, CheckFn, check
from memconform.core.runner import Context
from memconform.formats import memorizz as mz

doc_check = partial(check, suite=mz.SUITE, spec=mz.SPEC, kind="document", level="archive")


# ---- the document an archive check looks at ---------------------------------------------------

def limits(ctx: Context) -> tuple[int, int]:
    return mz.SIZES[ctx.option("max_bytes")], int(ctx.option("max_records"))


def archive_state(doc: Any, ctx: Context) -> mz.Archive:
    """The archive with its limits applied and (for a parsed document) its canonical bytes, once per run."""

    def make() -> mz.Archive:
        arc = doc if isinstance(doc, mz.Archive) else mz.Archive(value=doc)
        max_bytes, max_records = limits(ctx)
        if arc.unread:
            loaded = mz.load_file(arc.path, max_bytes, max_records)  # type: ignore[arg-type]
            doc.malformed = loaded.malformed  # validate reads its well-formedness from the document it gave
            arc = loaded
        if not arc.refused and arc.file_bytes is not None and arc.file_bytes > max_bytes:
            arc.refused = f"file is {arc.file_bytes} bytes, over the limit of {max_bytes}"
        total = mz.record_total(arc.value)
        if not arc.refused and total > max_records:
            arc.refused = f"{total} records, over the limit of {max_records}"
        if not arc.refused and arc.file_bytes is None:
            canonical(arc, ctx)  # a parsed document is measured by its canonical bytes
            if arc.canonical is not None and len(arc.canonical) > max_bytes:
                arc.refused = f"{len(arc.canonical)} canonical bytes, over the limit of {max_bytes}"
        return arc

    state: mz.Archive = ctx.once("memorizz-archive", make)
    return state


def _key_order(ctx: Context) -> str:
    return "utf16" if ctx.option("key_order") == "utf16" else "codepoint"


def canonical(arc: mz.Archive, ctx: Context) -> bytes | None:
    if arc.canonical is None and not arc.canonical_error:
        if not isinstance(arc.value, dict):
            arc.canonical_error = "the archive is not an object"
            return None
        try:
            arc.canonical = mz.canonical_bytes(arc.value, _key_order(ctx), arc.exact, arc.finite)
        except (ValueError, RecursionError) as exc:
            arc.canonical_error = str(exc)
    return arc.canonical


def readable(doc: Any, ctx: Context) -> mz.Archive:
    arc = archive_state(doc, ctx)
    if arc.malformed is not None:
        raise Inconclusive(f"the file is not well-formed JSON: {arc.malformed.message}")
    if arc.refused:
        raise Inconclusive(f"the archive is refused before this rule applies: {arc.refused}")
    return arc


# ---- the rule table, one check per key ------------------------------------------------------------

PINNED = {"M4:implied": ("natural_ids", "implied"),  # a reading -> the option value that pins it
          "M5:memorizz-includes-keys": ("includes_keys", "memorizz"),
          "M8:with-vector": ("embedding_fields", "with-vector")}


def pinned(ctx: Context, reading: str) -> bool:
    option, value = PINNED[reading]
    return bool(ctx.option(option) == value)


def rule_failures(doc: Any, ctx: Context, key: str) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    problems: dict[str, list[mz.Problem]] = ctx.once("memorizz-scan", lambda: mz.scan(arc.value))
    if ctx.document is None and key in mz.RECORD_RULES and mz.record_total(arc.value) == 0:
        raise Inconclusive("the target's export holds no records, so no record rule could be observed")
    for p in problems.get(key, []):
        unpinned = [r for r in p.readings if not pinned(ctx, r)]
        if unpinned:  # a problem only under a reading the default does not pin: note what was seen
            for reading in unpinned:
                point, _, value = reading.partition(":")
                ctx.reading(point, f"not {value}")
            continue
        yield Failure(p.title, p.received, p.expected, p.path, readings=p.readings)


def _rule_check(rule: mz.Rule) -> CheckFn:
    def run(doc: Any, ctx: Context) -> Iterator[Failure]:
        yield from rule_failures(doc, ctx, rule.key)

    run.__name__ = run.__qualname__ = rule.key
    run.__doc__ = rule.sentence
    registered: CheckFn = doc_check(section=rule.section, keyword=rule.keyword, sentence=rule.sentence)(run)
    return registered


RULE_CHECKS: dict[str, CheckFn] = {key: _rule_check(rule) for key, rule in mz.RULES.items()}


def verify_rule_registration() -> None:
    """The scanner's rule keys are exactly the registered rule checks (jsonschema's keyword table, checked)."""
    registered = {key for key in RULE_CHECKS if REGISTRY.get(f"{mz.SUITE}.{key}").fn is RULE_CHECKS[key]}
    if registered != set(mz.RULES):
        raise HarnessError(f"memorizz rule table and registered checks differ: {sorted(set(mz.RULES) ^ registered)}")


verify_rule_registration()


# ---- numbers, digest and limits (need the canonical form, not the scan) ---------------------------

CHECKSUM = ("The checksum covers canonical UTF-8 JSON of every field except integrity: object keys sorted, compact "
            "separators, literal Unicode, and no NaN or Infinity.")


@doc_check(section="Integrity and validation", keyword="MUST", sentence=CHECKSUM)
def numbers_finite(doc: Any, ctx: Context) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    canonical(arc, ctx)
    if arc.canonical_error:
        yield Failure("the archive has no canonical JSON form", arc.canonical_error, "finite numbers only")


@doc_check(section="Integrity and validation", keyword="MUST", sentence=CHECKSUM)
def integrity_digest(doc: Any, ctx: Context) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    integ = arc.value.get("integrity") if isinstance(arc.value, dict) else None
    claimed = integ.get("digest") if isinstance(integ, dict) else None
    if not isinstance(claimed, str):
        raise Inconclusive("no integrity digest to compare (integrity_form reports it)")
    data = canonical(arc, ctx)
    if data is None:
        raise Inconclusive(f"no canonical form to hash (numbers_finite reports it): {arc.canonical_error}")
    actual = hashlib.sha256(data).hexdigest()
    order = _key_order(ctx)
    if actual == claimed:
        ctx.reading("M2", f"keys sorted by {'UTF-16 code units' if order == 'utf16' else 'code points'}")
        return
    if ctx.option("key_order") == "either":  # errata M2: "object keys sorted" by code points or UTF-16 units
        other = hashlib.sha256(mz.canonical_bytes(arc.value, "utf16")).hexdigest()
        if other == claimed:
            ctx.reading("M2", "keys sorted by UTF-16 code units")
            return
    yield Failure("integrity.digest is not the sha256 of the canonical JSON", claimed, actual, "$.integrity.digest")


SAFE_INTEGER = 2**53 - 1


def _unsafe_integers(value: Any, path: str = "$") -> Iterator[tuple[str, int]]:
    stack = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
        elif type(node) is int and abs(node) > SAFE_INTEGER:
            yield where, node


@doc_check(section="Integrity and validation", keyword="SHOULD",
           sentence="Use strings for identifiers and exact integers beyond JavaScript's safe integer range.")
def integers_safe(doc: Any, ctx: Context) -> Iterator[Failure]:
    arc = readable(doc, ctx)
    if arc.long_digits is False:  # the file has no run of 16 digits: no integer can be that large
        return
    for path, number in sorted(_unsafe_integers(arc.value))[:20]:
        yield Failure("an integer beyond JavaScript's safe range is written as a number", number,
                      f"a string (|n| <= {SAFE_INTEGER})", path)


@doc_check(section="Integrity and validation", keyword="MUST",
           sentence="The default archive limits are 50 MiB and 100,000 records.")
def within_limits(doc: Any, ctx: Context) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if arc.refused:
        max_bytes, max_records = limits(ctx)
        yield Failure(f"the archive is over a limit: {arc.refused}", arc.refused,
                      f"at most {max_bytes} bytes and {max_records} records")
