"""Toy Counter checks and the SuiteSpec the `memconform.suites` entry point names: each check is declared
through SUITE.check, which refuses a wrong level, keyword or signature and a sentence not in SPEC.md."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.core.suite import Later, Level, SuiteSpec
from memconform.targets.base import Target

SPEC = "Toy Counter Spec v1"


def _probe(target: Target) -> bool:
    """The target speaks Toy Counter when `get` answers a counter document."""
    try:
        reply = target.call("get")
    except Exception:
        return False
    return isinstance(reply.body, dict) and reply.body.get("toy") == "counter"


def _document(ctx: CheckContext) -> Any:
    return ctx.target.call("get").body


SUITE = SuiteSpec(
    name="toy", spec_title=SPEC, version="1",
    levels=[Level("document", "Document"), Level("implementation", "Implementation")],
    document_source=_document,
    detect=lambda doc: isinstance(doc, dict) and doc.get("toy") == "counter",
    reference=Later("toy_suite.reference:ToyCounter"), mutants=Later("toy_suite.reference"), probe=_probe,
    portability=Later("toy_suite.portability:portable"),  # translate, the loss matrix and port
    requirements=Path(__file__).with_name("requirements.json"),
    spec_text=Path(__file__).with_name("SPEC.md"),  # every check's sentence must be verbatim in it
)


@SUITE.check(section="1", keyword="MUST", level="document", kind="document",
           sentence="`count`, a non-negative integer.")
def count_non_negative(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    count = doc.get("count") if isinstance(doc, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        yield Failure("count is not a non-negative integer", count, "an integer >= 0", "$.count")


def _count(ctx: CheckContext) -> int:
    body = ctx.target.call("get").body
    if not isinstance(body, dict) or not isinstance(body.get("count"), int):
        raise TargetError(f"get answered {body!r}, not a counter document")
    count: int = body["count"]
    return count


@SUITE.check(section="Operations", keyword="MUST", level="implementation",
           sentence="`add` MUST increase `count` by exactly K.")
def add_increases_by_k(ctx: CheckContext) -> Iterator[Failure]:
    before = _count(ctx)
    reply = ctx.target.call("add", {"n": 2})
    if reply.status != "ok":
        raise TargetError(f"add {{n: 2}} was refused: {reply.body!r}")
    after = _count(ctx)
    if after - before != 2:
        yield Failure("add did not increase count by K", after - before, 2, "$.count")


@SUITE.check(section="Operations", keyword="SHOULD", level="implementation",
           sentence="An implementation SHOULD reject an `add` whose K is negative, and leave `count` unchanged.")
def rejects_negative_k(ctx: CheckContext) -> Iterator[Failure]:
    # positive control: the same request with K repaired must be accepted first
    if ctx.target.call("add", {"n": 1}).status != "ok":
        raise TargetError("positive control refused: add {n: 1}")
    before = _count(ctx)
    reply = ctx.target.call("add", {"n": -1})
    after = _count(ctx)
    if reply.status == "ok":
        yield Failure("add with a negative K was accepted", reply.body, "a rejection", "$.n")
    if after != before:
        yield Failure("count changed after an add with a negative K", after, before, "$.count")
