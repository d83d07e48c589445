"""OMP request data drawn from the domain table (suites/omp/domain.json) instead of literals.

A write body starts as the suite's usual run-marked memory; one field is then set to one value of
one class (or left out, for the "absent" class). Content classes keep the run marker in front and
their length: a value at the 10,000-character limit stays at the limit with the marker in it.
"""

from __future__ import annotations

import copy
import json
import math
import secrets
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure
from memconform.kit import domain
from memconform.suites.omp import client, rules

WRITE_FIELDS_CREATE = ("memory.content", "memory.type", "memory.source", "memory.source.tool", "memory.source.session_id",
                       "memory.source.user_id", "memory.source.timestamp", "memory.tags", "memory.tags[]", "memory.namespace",
                       "memory.expires_at", "memory.metadata", "memory.embedding")
IMPORT_ONLY_FIELDS = ("memory.id", "memory.created_at", "memory.updated_at")


@dataclass(frozen=True)
class OpenPoint:
    """An open class whose answer is one of two readings of the errata: the value stored, or refused.
    The option pins one (`store` makes the class valid, `refuse` invalid); `either` accepts both."""

    point: str
    option: str
    stored: str
    refused: str
    pins: tuple[str, str]  # the option values that pin (stored, refused)


SOURCE_TIMESTAMP = OpenPoint("O36", "source_timestamp", "source.timestamp left out: stamped by the server",
                             "source.timestamp left out: refused", ("stamped", "required"))
NULL_OPTIONAL = OpenPoint("O37", "null_optional", "null on an optional field: read as absent",
                          "null on an optional field: refused", ("absent", "refuse"))
NULL_OPTIONAL_FIELDS = ("memory.namespace", "memory.metadata", "memory.source.session_id", "memory.source.user_id",
                        "memory.embedding", "search.type", "search.namespace")
UTC_OFFSET = OpenPoint("O52", "utc_offset", "UTC written +00:00: read as UTC", "UTC written +00:00: refused (Z only)",
                       ("accept", "refuse"))
OTHER_FORM = OpenPoint("O53", "timestamp_form", "a timestamp in another form: stored as the same instant",
                       "a timestamp in another form: refused", ("instant", "refuse"))
OTHER_FORM_KINDS = ("non_utc", "no_zone", "date_only", "lowercase")  # +02:00, no offset, a date alone, lower-case t/z
TIMESTAMP_FIELDS = ("memory.source.timestamp", "memory.expires_at", "memory.created_at", "memory.updated_at")


def open_point(vc: domain.ValueClass) -> OpenPoint | None:
    if vc.field == "memory.source.timestamp" and vc.id == "absent":
        return SOURCE_TIMESTAMP
    if vc.gen == "timestamp" and vc.args.get("kind") in ("utc_offset", "future_offset") and vc.expect == "open" \
            and vc.field in TIMESTAMP_FIELDS:
        return UTC_OFFSET
    if vc.gen == "timestamp" and vc.args.get("kind") in OTHER_FORM_KINDS and vc.expect == "open" and vc.field in TIMESTAMP_FIELDS:
        return OTHER_FORM
    if vc.field in NULL_OPTIONAL_FIELDS and vc.id == "null":
        return NULL_OPTIONAL
    return None


def expectation(ctx: CheckContext, vc: domain.ValueClass) -> str:
    """valid, invalid or open: the table's word, unless an option pins the reading of an open point."""
    found = open_point(vc)
    if found is None or ctx.option(found.option) == "either":
        return vc.expect
    return "valid" if ctx.option(found.option) == found.pins[0] else "invalid"


def kept_instant(case: Case, mem: dict[str, Any] | None) -> bool:
    """Accepted and read back: a timestamp class holds the instant sent (errata O53), any other class counts as kept."""
    if mem is None:
        return False
    if case.cls.field not in TIMESTAMP_FIELDS:
        return True
    sent, got = stored_value(case.body, case.cls.field), stored_value(mem, case.cls.field)
    return not isinstance(sent, str) or rules.sent_instant(sent) == rules.sent_instant(got)


def observe_open(ctx: CheckContext, vc: domain.ValueClass, stored: bool, refused: bool, answer: Any) -> Observation | None:
    """Record which reading of the class's open point the answer fitted (the checks judge the answer
    by the class's expectation); None when the class is no open point."""
    found = open_point(vc)
    if found is None:
        return None
    return ctx.observe(found.point, {found.stored: stored, found.refused: refused}, answer)


def table() -> domain.Domain:
    return domain.required("omp")


ledger = domain.ledger


@dataclass(frozen=True)
class Case:
    """One request body of one class: which value it carries and the marker that finds it again."""

    cls: domain.ValueClass
    value: Any
    body: dict[str, Any]
    marker: str

    @property
    def label(self) -> str:
        shown = "<absent>" if self.value is domain.ABSENT else json.dumps(self.value, ensure_ascii=False)
        return f"{self.cls.key} = {shown[:60]}{'...' if len(shown) > 60 else ''}"


def _path(field_id: str) -> list[str]:
    return field_id.removeprefix("memory.").split(".")


def marked_content(marker: str, value: Any) -> Any:
    """The class value with the run marker in front, at the same length in code points where it can."""
    if not isinstance(value, str) or not value:
        return value
    if len(value) > len(marker) + 20:
        return marker + " " + value[len(marker) + 1:]
    return f"{marker} {value}"


def set_field(body: dict[str, Any], field_id: str, value: Any, marker: str, run_tag: str) -> dict[str, Any]:
    """A copy of body with one field at one value (ABSENT removes it)."""
    out = copy.deepcopy(body)
    if field_id == "memory.tags[]":
        out["tags"] = [run_tag, value]
        return out
    if field_id == "memory.content":
        value = marked_content(marker, value)
    *parents, name = _path(field_id)
    holder = out
    for part in parents:
        if not isinstance(holder.get(part), dict):
            return out  # the parent is itself of another class: nothing to set
        holder = holder[part]
    if value is domain.ABSENT:
        holder.pop(name, None)
    else:
        holder[name] = copy.deepcopy(value)
    return out


def cases(ctx: CheckContext, field_ids: tuple[str, ...], label: str, *, full: bool = False) -> Iterator[Case]:
    """Every value of every class of the fields, each in a body of its own (full: a whole Memory, for import)."""
    for field_id in field_ids:
        for vc in table().field(field_id).classes:
            for i, value in enumerate(vc.values()):
                marker = ctx.unique(f"{label}-{vc.field}-{vc.id}-{i}")
                value = fresh_id(vc, value)
                base = client.full_memory(ctx, marker, content=f"{marker} domain probe") if full else client.memory(ctx, marker, content=f"{marker} domain probe")
                yield Case(vc, value, set_field(base, field_id, value, marker, client.run_tag(ctx)), marker)


def fresh_id(vc: domain.ValueClass, value: Any) -> Any:
    """An id of the class's shape (prefix, length, a symbol last) with letters of this run: the table's
    fixed letters may already be stored, by a lax import of another check or of an earlier run."""
    if vc.gen != "prefixed_id" or not isinstance(value, str):
        return value
    prefix, length = str(vc.args["prefix"]), int(vc.args["length"])
    body = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))
    if value.endswith("-") and length:
        body = body[:-1] + "-"
    return prefix + body


# ---- reading a stored value back ---------------------------------------------------------------

def same_json(sent: Any, got: Any) -> bool:
    """Equal as JSON values: numbers compare as doubles (-0.0 == 0, 5.0 == 5), objects by key."""
    if isinstance(sent, bool) or isinstance(got, bool):
        return sent is got
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)):
        return float(sent) == float(got) or (math.isfinite(float(sent)) and math.isclose(float(sent), float(got), rel_tol=1e-15))
    if isinstance(sent, dict) and isinstance(got, dict):
        return sent.keys() == got.keys() and all(same_json(sent[k], got[k]) for k in sent)
    if isinstance(sent, list) and isinstance(got, list):
        return len(sent) == len(got) and all(same_json(a, b) for a, b in zip(sent, got, strict=True))
    return bool(sent == got)


def stored_value(mem: dict[str, Any], field_id: str) -> Any:
    if field_id == "memory.tags[]":
        return mem.get("tags")
    holder: Any = mem
    for part in _path(field_id):
        if not isinstance(holder, dict) or part not in holder:
            return domain.ABSENT
        holder = holder[part]
    return holder


def read_back_failures(case: Case, mem: dict[str, Any], where: str) -> Iterator[Failure]:
    """A valid value, stored: the memory is a §2.1 Memory and the field reads back as it was written."""
    for shape in (rules.content_type_failures, rules.organisation_failures, rules.timestamp_failures, rules.source_failures):
        for failure in shape(mem, where):
            yield Failure(f"{case.label}: {failure.title}", failure.received, failure.expected, failure.path)
    sent = stored_value(case.body, case.cls.field)
    got = stored_value(mem, case.cls.field)
    if sent is domain.ABSENT or sent is None or case.cls.field == "memory.embedding" and got is domain.ABSENT:
        return  # absent or null: what "none" reads as is the shape checks' business; embeddings need not be served
    if case.cls.field in TIMESTAMP_FIELDS:  # the same instant in any form; the form written is O6's business
        same = rules.sent_instant(sent) is not None and rules.sent_instant(sent) == rules.sent_instant(got)
    elif case.cls.field == "memory.source" and isinstance(sent, dict) and isinstance(got, dict):
        same = same_json(_stamp_as_instant(sent), _stamp_as_instant(got))
    else:
        same = same_json(sent, got)
    if not same:
        yield Failure(f"{case.label}: not read back as written", _brief(got), _brief(sent), f"{where}.{case.cls.field.removeprefix('memory.')}")


def _stamp_as_instant(source: dict[str, Any]) -> dict[str, Any]:
    """A source object with its timestamp as the instant it names (O53), so `Z` and `.000Z` agree."""
    stamp = source.get("timestamp")
    when = rules.sent_instant(stamp)
    return {**source, "timestamp": when.isoformat() if when is not None else stamp} if "timestamp" in source else source


def _brief(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return value if len(text) <= 120 else text[:117] + "..."
