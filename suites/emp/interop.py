"""EMP's writer/reader pairing for the interop-hole sweep (harness/matrix/interop_sweep.py): a writer appends a
line holding each class of a line field (`append`), a reader reads the file (`read`). Each line is the one the
reader check writes for the class (checks/domain_common.py), judged as a file by the document checks; the reader
check must return every line no rule refuses under any reading and may drop the others."""

from __future__ import annotations

import json
from typing import Any

from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.common import entry

READER = "emp.reader_returns_every_valid_class"


class _Names:
    """What the line builder asks of a check's context: a content unique within the file."""

    def unique(self, label: str) -> str:
        return f"interop {label}"


def lines(field: domain.Field, vc: domain.ValueClass) -> list[dict[str, Any]]:
    """The reader check's line for each value of the class (checks/domain_common.py's class_lines, one field)."""
    name = field.id.split(".", 1)[1]
    out = []
    for i, value in enumerate(vc.values()):
        line = entry(_Names(), f"dr-{vc.key}-{i}")  # type: ignore[arg-type]  # the builder asks only `unique`
        if value is domain.ABSENT:
            line.pop(name, None)
        elif name == "content" and isinstance(value, str):
            line["content"] = f"{line['content']} {value}"
        else:
            line[name] = value
        out.append(line)
    return out


def documents(field: domain.Field, vc: domain.ValueClass) -> list[Any]:
    raw = [(json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8") for line in lines(field, vc)]
    return [list(emp.iter_text(text)) for text in raw]


def expectation(vc: domain.ValueClass) -> str:
    """The reader check's word: a line no rule refuses under any reading is returned; any other may be dropped."""
    field = domain.required("emp").field(vc.field)
    return "valid" if not any(list(emp.field_errors(line)) for line in lines(field, vc)) else "open"


def consumer_checks(field: domain.Field) -> tuple[str, ...]:
    return (READER,)


def pairing() -> Pairing:
    placed = frozenset(f.id for f in domain.required("emp").for_operation("append", where=("line",)))
    return Pairing("emp", "append", "read", documents, expectation, consumer_checks, fields=placed)
