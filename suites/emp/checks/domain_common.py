"""What the domain checks share (domain_reader.py, domain_writer.py, domain_query.py, domain_files.py): a class's
lines (numbers equal as numbers: readings.same_number_or_value). Registers no check: check modules import it, never one another."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, HarnessError
from memconform.kit import domain
from memconform.suites.emp.checks.common import entry


def _table() -> domain.Domain:
    found = domain.load("emp")
    if found is None:
        raise HarnessError("suites/emp/domain.json is missing (scripts/make_domain_tables.py writes it)")
    return found


def class_lines(ctx: CheckContext) -> list[tuple[domain.ValueClass, dict[str, Any]]]:
    """One entry per value of every class of a line's fields: the usual entry with one field at that value (absent: left out)."""
    out = []
    for field in _table().for_operation("append", where=("line",)):
        name = field.id.split(".", 1)[1]
        for vc in field.classes:
            for i, value in enumerate(vc.values()):
                line = entry(ctx, f"dr-{vc.key}-{i}")
                if value is domain.ABSENT:
                    line.pop(name, None)
                elif name == "content" and isinstance(value, str):
                    line["content"] = f"{line['content']} {value}"  # the marker stays in front
                else:
                    line[name] = value
                out.append((vc, line))
    return out


T = TypeVar("T")


def judge_packed(parts: list[list[T]], attempt: Callable[[list[T]], list[Failure] | None], own: list[Failure]) -> Iterator[Failure]:
    """A shared request's items judged again in `parts` (domain_plan.judge_rows' halves): each part's failures,
    a part of several that fails (or whose answer cannot be laid on its items: None) split again; `own`, the
    shared request's failures, where no part fails (what only the items together cause)."""
    found = [f for part in parts if part for f in _judged(part, attempt)]
    yield from found or own


def _judged(part: list[T], attempt: Callable[[list[T]], list[Failure] | None]) -> list[Failure]:
    result = attempt(part)
    if len(part) == 1 or result == []:
        return result or []
    return list(judge_packed([part[:len(part) // 2], part[len(part) // 2:]], attempt, result or []))
