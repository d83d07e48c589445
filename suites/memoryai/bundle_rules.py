"""The checksum and counts rules of a MemoryAI bundle's manifest, judged on one document: the document checks and
the producer checks ask them. Not a check module: the checks import it, never one another."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import equals
from memconform.core.results import Failure, Inconclusive
from memconform.suites.memoryai import format as memoryai


def checksum_of(doc: Any, ctx: CheckContext, literal: Any = None) -> Iterator[Failure]:
    """The checksum rule on one bundle; `literal(doc, ctx)` may supply its cached literal canonical bytes."""
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    if not isinstance(manifest, dict):
        # manifest_required_fields reports it; with no manifest there is no checksum to judge, and
        # nothing observed is no pass (an answer that is no bundle at all must not pass this check)
        raise Inconclusive("the document has no manifest object: there is no checksum to check")
    claimed = manifest.get("checksum")
    if not isinstance(claimed, str):
        yield Failure("manifest.checksum is missing (Level 1 requires a valid checksum)", claimed, "sha256 hex digest", "$.manifest.checksum")
        return
    unicode, numbers = ctx.option("checksum_unicode"), ctx.option("checksum_numbers")
    try:
        if unicode != "ascii" and numbers != "ecmascript":
            data = literal(doc, ctx) if literal else memoryai.canonical_bytes(doc, "literal")
            if hashlib.sha256(data).hexdigest() == claimed.lower():
                # an all-ASCII body reads the same literal or escaped: only non-ASCII text shows which
                ctx.observe("E1", {"utf8-literal": not data.isascii()})
                return
        seen = memoryai.checksum_reading_of(dict(doc, manifest=dict(manifest, checksum=claimed.lower())), unicode, numbers)
    except ValueError as exc:
        yield Failure("bundle cannot be serialised canonically (NaN or Infinity?)", str(exc), "finite JSON", "$")
        return
    accepted = memoryai.checksum_readings(unicode, numbers)
    # the first accepted serialisation whose digest is the one claimed is the reading the bundle followed
    if ctx.observe("E1", {name: equals(name) for name in accepted}, seen):
        return
    yield Failure("checksum does not match the canonical body under any accepted reading", claimed,
                  memoryai.checksum(doc, *memoryai.CHECKSUM_READINGS[accepted[0]]), "$.manifest.checksum",
                  "canonical form: manifest.checksum removed, sorted keys, no whitespace, UTF-8 (suites/memoryai/errata.md E1); "
                  f"readings tried: {', '.join(accepted)}",
                  readings=tuple(accepted) if len(accepted) < len(memoryai.CHECKSUM_READINGS) else ())


def counts_of(doc: Any) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    counts = manifest.get("counts") if isinstance(manifest, dict) else None
    if not isinstance(counts, dict):
        yield Failure("manifest.counts is missing or not an object", counts, "object of section counts", "$.manifest.counts")
        return
    for section in memoryai.RECORD_SECTIONS:
        actual = len(doc[section]) if isinstance(doc.get(section), list) else 0
        declared = counts.get(section, 0 if actual == 0 else "<absent>")
        if declared != actual:
            yield Failure(f"manifest.counts.{section} differs from the records present", declared, actual, f"$.manifest.counts.{section}")
