"""The checksum and counts rules of a MemoryAI bundle's manifest, judged on one document: the document checks and
the producer checks ask them. Not a check module: the checks import it, never one another."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, SkipCheck
from memconform.kit.shared_rules import parse_datetime
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai import reading_kinds, readings


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
    try:  # the literal canonical bytes: cached by the document checks, and NaN or Infinity found here
        case = reading_kinds.ChecksumCase(doc, literal(doc, ctx) if literal else memoryai.canonical_bytes(doc, "literal"))
    except UnicodeEncodeError:  # a ValueError too, caught first: a lone surrogate, which only the escapes readings can write
        case = reading_kinds.ChecksumCase(doc)
    except ValueError as exc:
        yield Failure("bundle cannot be serialised canonically (NaN or Infinity?)", str(exc), "finite JSON", "$")
        return
    # the first accepted reading (errata E1) whose digest is the one claimed is the reading the bundle followed;
    # a bundle all ASCII and without floats has one digest under every reading and shows none of them
    if readings.followed(ctx, "E1", case, claimed.lower(), record=case.shows_a_reading()) is not None:
        return
    accepted = readings.accepted_names(ctx, "E1", case)
    digests = [case.digest(name) for name in accepted]
    yield Failure("checksum does not match the canonical body under any accepted reading", claimed,
                  next((d for d in digests if d != reading_kinds.NO_LITERAL_BYTES), digests[0]), "$.manifest.checksum",
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


def canonical(doc: Any, ctx: CheckContext) -> bytes | reading_kinds.LiteralText:
    """The §3.6 canonical bytes (literal reading), computed once per document and shared by checks (a document read
    in windows: what a LiteralText took from them, format/windows.py)."""
    literal: bytes | reading_kinds.LiteralText = ctx.once("canonical-literal",
                                                          lambda: memoryai.canonical_bytes(doc, "literal"))
    return literal


def embedding_sizes(doc: Any, ctx: CheckContext) -> dict[int, int | ValueError]:
    """Decoded byte length of every string embedding (or why it does not decode), once per document."""

    def decode_all() -> dict[int, int | ValueError]:
        found = [(i, chunk["embedding"]) for i, chunk in records(doc, "chunks")
                 if isinstance(chunk, dict) and isinstance(chunk.get("embedding"), str)]
        return dict(zip([i for i, _ in found], memoryai.decoded_sizes([text for _, text in found]), strict=True))

    sizes: dict[int, int | ValueError] = ctx.once("embedding-sizes", decode_all)
    return sizes


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def records(doc: dict[str, Any], section: str) -> list[tuple[int, Any]]:
    value = doc.get(section) if isinstance(doc, dict) else None
    return list(enumerate(value)) if isinstance(value, list) else []


def a_bundle(doc: Any) -> dict[str, Any]:
    """The bundle, or Inconclusive when the export is not one (not a JSON object): no rule about its records
    or content can pass on it (envelope_format_literal fails it)."""
    if not isinstance(doc, dict):
        raise Inconclusive(f"the export is not a bundle (a JSON object) but {type(doc).__name__}: this rule has "
                           "nothing to judge (envelope_format_literal reports it)")
    return doc


def examined(doc: Any, ctx: CheckContext, section: str = "chunks", what: str = "chunks") -> list[tuple[int, Any]]:
    """The records a producer check examines. A given file with none is vacuously fine; a target's
    export with none is no evidence about the producer: inconclusive (errata E15)."""
    found = records(a_bundle(doc), section)
    if not found and ctx.document is None:
        from memconform.suites.memoryai.client import nothing_to_examine

        raise nothing_to_examine(ctx, what)
    return found


def optional_records(doc: Any, ctx: CheckContext, section: str) -> list[tuple[int, Any]]:
    """Edges and entities are optional content: a producer that exported none has nothing of §3.3/§3.4 to break."""
    found = records(a_bundle(doc), section)
    if not found and ctx.document is None:
        raise SkipCheck(f"the target's export has no {section}: nothing of their record shape to check", not_applicable=True)
    return found


def iso_ok(value: Any) -> bool:
    return parse_datetime(value, "memoryai") is not None
