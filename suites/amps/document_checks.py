"""Producer level: the export document (the published schema, provenance, time and text rules).

Against a target, a rule with nothing to look at in the export (no inferred atom, no interval) is
inconclusive, not passed; a document given to `memconform validate` is judged as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, Inconclusive, SkipCheck
from memconform.core.registry import check
from memconform.formats import amps

doc_check = partial(check, suite=amps.SUITE, spec=amps.SPEC, kind="document", level="producer")
LABELS = "Every atom carries valid_from and optional valid_to."


def observed(ctx: Any, found: int, what: str) -> None:
    if not found and ctx.document is None:
        raise Inconclusive(f"the target's export holds no {what}, so the rule could not be observed")


@doc_check(section="Schema", keyword="MUST", sentence="Draft v0.1. Compatible with JSON Schema 2020-12.")
def schema_valid(doc: Any, ctx: Any) -> Iterator[Failure]:
    for path, message, instance in amps.schema_errors(doc):
        yield Failure("export does not validate against the published schema", instance, message, path)


@doc_check(section="Provenance rules", keyword="MUST",
           sentence="inferred — a model concluded this from one or more artifacts. artifact_ids and extractor are required.")
def inferred_has_sources(doc: Any, ctx: Any) -> Iterator[Failure]:
    found = 0
    for i, atom in amps.atoms(doc):
        prov = amps.provenance(atom)
        if prov.get("derivation") != "inferred":
            continue
        found += 1
        if not amps.has_sources(atom):
            yield Failure("inferred atom cites no artifact", prov.get("artifact_ids", "<absent>"), "one or more artifact_ids",
                          f"$.atoms[{i}].provenance.artifact_ids")
        if not isinstance(prov.get("extractor"), str) or not prov["extractor"]:
            yield Failure("inferred atom names no extractor", prov.get("extractor", "<absent>"), "extractor string",
                          f"$.atoms[{i}].provenance.extractor")
    observed(ctx, found, "inferred atom")


@doc_check(section="Provenance rules", keyword="MUST",
           sentence="observed — captured passively from behavior (e.g. calendar patterns, voice cadence). artifact_ids required; must be revocable.")
def observed_has_sources(doc: Any, ctx: Any) -> Iterator[Failure]:
    found = 0
    for i, atom in amps.atoms(doc):
        if amps.provenance(atom).get("derivation") != "observed":
            continue
        found += 1
        if not amps.has_sources(atom):
            yield Failure("observed atom cites no artifact", amps.provenance(atom).get("artifact_ids", "<absent>"),
                          "one or more artifact_ids", f"$.atoms[{i}].provenance.artifact_ids")
    observed(ctx, found, "observed atom")


def _label_failures(doc: Any, ctx: Any) -> Iterator[Failure]:
    found = 0
    for i, atom in amps.atoms(doc):
        found += 1
        for name in ("sensitivity", "valid_from"):
            if name not in atom:
                yield Failure(f"atom carries no {name}", "<absent>", name, f"$.atoms[{i}].{name}")
    observed(ctx, found, "atom")


@doc_check(section="Design principles", keyword="SHOULD", sentence=LABELS)
def atom_labels(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _label_failures(doc, ctx)


@doc_check(section="Design principles", keyword="MUST", sentence=LABELS)
def atom_labels_required(doc: Any, ctx: Any) -> Iterator[Failure]:
    if ctx.option("atom_labels") != "required":
        raise SkipCheck("option atom_labels=recommended: amps.atom_labels reports this as SHOULD", not_applicable=True)
    yield from _label_failures(doc, ctx)


@doc_check(section="Design principles", keyword="MUST",
           sentence="Time-aware. Every atom carries valid_from and optional valid_to. Old facts don't get quietly "
                    "replaced; they expire.")
def valid_to_not_before_valid_from(doc: Any, ctx: Any) -> Iterator[Failure]:
    strictly = ctx.option("validity_order") == "strictly-after"
    found = 0
    for i, atom in amps.atoms(doc):
        a, b = amps.parse_date_time(atom.get("valid_from")), amps.parse_date_time(atom.get("valid_to"))
        if a is None or b is None:
            continue  # absent, null (open-ended) or not a date-time (schema_valid reports it)
        found += 1
        if b < a or (strictly and b == a):
            yield Failure("atom expires before it becomes valid", atom["valid_to"],
                          f"{'after' if strictly else 'not before'} {atom['valid_from']}", f"$.atoms[{i}].valid_to",
                          readings=("A7:strictly-after",) if b == a else ())
        elif b == a:
            ctx.reading("A7", "zero-length interval")
    observed(ctx, found, "atom with both valid_from and valid_to")


@doc_check(section="Schema", keyword="MUST", sentence='"text": { "type": "string", "maxLength": 500 }')
def text_at_most_500(doc: Any, ctx: Any) -> Iterator[Failure]:
    found = 0
    for i, atom in amps.atoms(doc):
        text = atom.get("text")
        if isinstance(text, str):
            found += 1
            if len(text) > amps.TEXT_MAX:
                yield Failure("atom text is longer than 500 characters", len(text), f"<= {amps.TEXT_MAX}",
                              f"$.atoms[{i}].text")
    observed(ctx, found, "atom text")


@doc_check(section="Design principles", keyword="SHOULD",
           sentence="Source-linked. Every atom points back to the artifacts it was extracted from.")
def references_resolve(doc: Any, ctx: Any) -> Iterator[Failure]:
    if ctx.option("dangling_refs") == "ignore":
        raise SkipCheck("option dangling_refs=ignore", not_applicable=True)
    for path, ref in amps.dangling(doc):
        yield Failure("reference resolves to nothing in the same export (dangling)", ref, "an id present in this export",
                      path)
