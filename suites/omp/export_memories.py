"""The memories of an OMP export document, and a §2.1 / §2.3 rule applied over each of them: shared by the
export-document checks (checks/export_document.py) and their window plan (windows.py), which runs the same rule
on each window of `memories`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive
from memconform.suites.omp import deviations

Rule = Callable[[dict[str, Any], str], Iterator[Failure]]


def memories(doc: Any) -> list[tuple[str, Any]]:
    """(path, memory) of every element of the export's memories array; [] when there is no such array."""
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        return []
    return [(f"$.memories[{i}]", mem) for i, mem in enumerate(doc["memories"])]


def each_memory(doc: Any, ctx: CheckContext, rule: Rule) -> Iterator[Failure]:
    """The rule over every memory; an element that is not an object is a failure of every memory rule, and a
    document with no memories array is judged by export_document_envelope alone (never a pass here)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        yield Failure("not an OMP export: no memories array to judge", type(doc).__name__, "an object with memories: Memory[]", "$")
        return
    if not doc["memories"] and ctx.document is None:
        raise Inconclusive("the target's export holds no memory, so the memory rules could not be observed")
    for where, mem in memories(doc):
        if not isinstance(mem, dict):
            yield Failure("a memory is not an object", mem, "a Memory object (§2.1)", where)
            continue
        for failure in rule(mem, where):
            yield deviations.explained_if_stored_as_sent(ctx, failure, mem)
