"""List and search pages: filters, the list parameters' readings, sort orders, keyword matches (§3.3)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memconform.suites.omp import format as omp

from .base import FILTERS, SORT_FIELDS, Readings, Request, body_of, brief, instant, status_of, words

# ---- list and search filters -------------------------------------------------------------------

@dataclass(frozen=True)
class Filters:
    type: str | None = None
    tool: str | None = None
    tags: tuple[str, ...] = ()
    tags_any: bool = False
    namespace: str | None = None
    nothing: bool = False  # a value read as matching nothing (an empty parameter, errata O30)

    def fit(self, doc: dict[str, Any]) -> bool:
        if self.nothing:
            return False
        source: dict[str, Any] = doc["source"] if isinstance(doc.get("source"), dict) else {}
        have = set(doc.get("tags") or [])
        tags_fit = (bool(have & set(self.tags)) if self.tags_any else set(self.tags) <= have) if self.tags else True
        return ((self.type is None or doc.get("type") == self.type) and (self.tool is None or source.get("tool") == self.tool)
                and tags_fit and (self.namespace is None or doc.get("namespace") == self.namespace))


@dataclass(frozen=True)
class ListReading:
    """One way of reading a list request: the readings it takes, and what is then served."""

    names: tuple[str, ...]
    filters: Filters | None = None  # None: refused
    sort: str = "created_at_desc"
    limit: int = omp.DEFAULT_LIMIT
    offset: int = 0
    exact: bool = True  # False: any sane page of the matches (errata O9: a bad parameter served sanely)
    echo_limit: tuple[Any, ...] = ()  # the limit the answer may say (empty: the one applied)


def comma_tags(value: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in value.split(",") if t.strip())


def _filter_choices(name: str, values: list[str], readings: Readings) -> list[tuple[str, Any]]:
    """(reading, value) pairs for one filter parameter: None = absent, NOTHING = matches nothing, REFUSE."""
    if not values:
        return [("", None)]
    lax = readings.bad_params == "either"
    out: list[tuple[str, Any]] = []
    if len(values) > 1:  # errata O30, O35: a repeated parameter
        out.append((f"repeated {name}: refused with a 4xx", REFUSE))
        if lax:
            parsed = [comma_tags(v) if name == "tags" else v for v in values]
            out += [(f"repeated {name}: first value", parsed[0]), (f"repeated {name}: last value", parsed[-1])]
            if name == "tags":
                out.append((f"repeated {name}: all values (AND)", tuple(dict.fromkeys(t for p in parsed for t in p))))
            else:
                out += [(f"repeated {name}: any value", ("any", tuple(parsed))), (f"repeated {name}: every value", ("every", tuple(parsed)))]
        return out
    value = values[0]
    if value == "" or (name == "tags" and not comma_tags(value)):
        out.append((f"empty {name}: refused with a 4xx", REFUSE))
        if lax:
            out += [(f"empty {name}: served as absent", None), (f"empty {name}: served as a value matching nothing", NOTHING)]
        return out
    if name == "type" and value not in omp.TYPES:
        out.append((f"unknown type {value!r}: refused with a 4xx", REFUSE))
        if lax:
            out += [(f"unknown type {value!r}: served as a value matching nothing", NOTHING),
                    (f"unknown type {value!r}: served as absent", None)]
        return out
    if name == "tags" and comma_tags(value) != tuple(t for t in value.split(",") if t):  # errata O50
        return [("comma-separated tags: spaces around a tag ignored", comma_tags(value)),
                ("comma-separated tags: spaces kept", tuple(t for t in value.split(",") if t))]
    return [("", comma_tags(value) if name == "tags" else value)]


REFUSE, NOTHING = object(), object()


def _int_choices(name: str, values: list[str], default: int, readings: Readings) -> list[tuple[str, Any]]:
    """(reading, (value, exact, echo)) for limit/offset (errata O3, O9, O30)."""
    lax = readings.bad_params == "either"
    if not values:
        return [("", (default, True, ()))]
    if len(values) > 1:
        return [(f"repeated {name}: refused with a 4xx", REFUSE)] + ([(f"repeated {name}: a sane page", (None, False, ()))] if lax else [])
    raw = values[0]
    high = omp.MAX_LIMIT if name == "limit" else None
    low = 1 if name == "limit" else 0
    if raw.isascii() and raw.isdigit():
        value = int(raw)
        if value >= low and (high is None or value <= high):
            return [("", (value, True, ()))]
        if high is not None and value > high:
            out: list[tuple[str, Any]] = []
            if readings.allows("limit_over_max", "reject"):
                out.append((f"limit={raw} refused", REFUSE))
            if readings.allows("limit_over_max", "clamp"):
                out.append((f"limit={raw} clamped", (omp.MAX_LIMIT, True, (omp.MAX_LIMIT, None))))
            return out
    if raw == "" and name == "limit" and lax:  # errata O30: an empty limit
        return [("empty limit: refused with a 4xx", REFUSE), ("empty limit: served as absent (20)", (omp.DEFAULT_LIMIT, True, (omp.DEFAULT_LIMIT, None))),
                ("empty limit: served as 10", (10, True, (10, None))),
                ("empty limit: served as the maximum (100)", (omp.MAX_LIMIT, True, (omp.MAX_LIMIT, None)))]
    return [(f"{name}={raw!r}: refused with a 4xx", REFUSE)] + ([(f"{name}={raw!r}: served as a sane page", (None, False, ()))] if lax else [])


def list_readings(params: Iterable[tuple[str, str]], readings: Readings) -> list[ListReading]:
    """Every reading of a GET /v1/memories query the suite accepts (errata O3, O9, O30, O35)."""
    grouped: dict[str, list[str]] = {}
    for name, value in params:
        grouped.setdefault(name, []).append(value)
    choices = [_filter_choices(name, grouped.get(name, []), readings) for name in FILTERS]
    sorts = grouped.get("sort", [])
    if not sorts:
        sort_choices: list[tuple[str, Any]] = [("", ("created_at_desc", True))]
    elif len(sorts) == 1 and sorts[0] in omp.SORTS:
        sort_choices = [("", (sorts[0], True))]
    else:
        sort_choices = [(f"sort={sorts!r}: refused with a 4xx", REFUSE)]
        if readings.bad_params == "either":
            sort_choices.append((f"sort={sorts!r}: served as a sane page", (None, False)))
    limit_choices = _int_choices("limit", grouped.get("limit", []), omp.DEFAULT_LIMIT, readings)
    offset_choices = _int_choices("offset", grouped.get("offset", []), 0, readings)
    out: list[ListReading] = []
    for combo in itertools.product(*choices, sort_choices, limit_choices, offset_choices):
        names = tuple(name for name, _ in combo if name)
        values = [value for _, value in combo]
        if any(v is REFUSE for v in values):  # named by what refuses: the other parameters' readings do not matter
            out.append(ListReading(tuple(name for name, value in combo if value is REFUSE)))
            continue
        if any(v is NOTHING for v in values[:len(FILTERS)]):  # an empty page whatever the other filters are read as
            names = tuple(name for i, (name, value) in enumerate(combo) if name and (i >= len(FILTERS) or value is NOTHING))
        kind, tool, tags, namespace, (sort, sort_exact), (limit, limit_exact, echo), (offset, offset_exact, _) = values
        out.extend(_list_reading(names, kind, tool, tags, namespace, sort, limit, offset,
                                 sort_exact and limit_exact and offset_exact, echo))
    return _dedupe(out)


def _list_reading(names: tuple[str, ...], kind: Any, tool: Any, tags: Any, namespace: Any, sort: Any, limit: Any,
                  offset: Any, exact: bool, echo: tuple[Any, ...]) -> list[ListReading]:
    multi = {name: v for name, v in (("type", kind), ("tool", tool), ("namespace", namespace)) if isinstance(v, tuple)}
    nothing = any(v is NOTHING for v in (kind, tool, tags, namespace))
    base = {"type": kind, "tool": tool, "namespace": namespace}
    if multi:  # "any value" / "every value" of a repeated single-valued filter: expressed as a sane page
        single = {k: (None if isinstance(v, tuple) or v is NOTHING else v) for k, v in base.items()}
        return [ListReading(names, Filters(nothing=nothing, tags=tags if isinstance(tags, tuple) else (), type=single["type"],
                                           tool=single["tool"], namespace=single["namespace"]),
                            sort or "created_at_desc", limit or omp.MAX_LIMIT, offset or 0, exact=False, echo_limit=echo)]
    filters = Filters(type=None if kind is NOTHING else kind, tool=None if tool is NOTHING else tool,
                      tags=tags if isinstance(tags, tuple) else (), namespace=None if namespace is NOTHING else namespace, nothing=nothing)
    return [ListReading(names, filters, sort or "created_at_desc", limit if limit is not None else omp.MAX_LIMIT,
                        offset if offset is not None else 0, exact=exact, echo_limit=echo)]


def _dedupe(items: list[ListReading]) -> list[ListReading]:
    seen: dict[Any, ListReading] = {}
    for item in items:
        key = (item.filters, item.sort, item.limit, item.offset, item.exact, item.echo_limit)
        if key not in seen:
            seen[key] = item
        else:
            seen[key] = ListReading(tuple(dict.fromkeys(seen[key].names + item.names)), *key[:-1], echo_limit=item.echo_limit)  # type: ignore[misc]
    return list(seen.values())


def sort_key(doc: dict[str, Any], sort: str) -> Any:
    return instant(doc.get(SORT_FIELDS[sort][0]))


def in_order(docs: list[dict[str, Any]], sort: str) -> bool:
    desc = SORT_FIELDS[sort][1]
    keys = [sort_key(d, sort) for d in docs]
    return all(a is None or b is None or (a >= b if desc else a <= b) for a, b in zip(keys, keys[1:], strict=False))


def ordered(docs: Iterable[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """The docs in sort order; ties stay in any order (the page check compares stamps, not ids, at ties)."""
    field_name, desc = SORT_FIELDS[sort]
    docs = list(docs)
    if any(instant(d.get(field_name)) is None for d in docs):
        return docs  # stamps unknown (a replay's model): the page check then judges membership and size only
    return sorted(docs, key=lambda d: instant(d.get(field_name)), reverse=desc)




def join_names(*names: str) -> str:
    return ", ".join(n for n in names if n)


def search_page_shape(answer: Any) -> str | None:
    body = body_of(answer)
    if status_of(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
        return f"not a 200 search page ({brief(answer)})"
    return None


def search_invalid(body: dict[str, Any]) -> str | None:
    """A search body only a 422 answers (errata O9: wrong JSON types are schema validation)."""
    q = body.get("q")
    if not isinstance(q, str):
        return "q is not a string"
    limit = body.get("limit")
    if isinstance(limit, bool) or (limit is not None and not isinstance(limit, (int, float, str))):
        return "limit is not a number"
    tags = body.get("tags")
    if tags is not None and not isinstance(tags, (list, str)) or isinstance(tags, list) and not all(isinstance(t, str) for t in tags):
        return "tags is not an array of strings"
    for name in ("type", "namespace", "mode"):
        if body.get(name) is not None and not isinstance(body[name], str):
            return f"{name} is not a string"
    return None


def search_odd(body: dict[str, Any]) -> str | None:
    """A search value the spec is silent on (errata O9, O34, O35): refused, or a page."""
    limit = body.get("limit")
    if isinstance(limit, float) and limit.is_integer():  # errata O35: 5.0 read as 5, or refused as not an integer
        return f"limit {limit!r} (a zero fraction)"
    if limit is not None and not (isinstance(limit, int) and 1 <= limit <= omp.MAX_LIMIT):
        return f"limit {body.get('limit')!r}"
    if body.get("mode") is not None and body["mode"] not in omp.SEARCH_MODES:
        return f"unknown mode {body['mode']!r}"
    if body.get("type") is not None and body["type"] not in omp.TYPES:
        return f"unknown type {body['type']!r}"
    if isinstance(body.get("tags"), str):
        return "tags given as a string"
    if body.get("q") == "":
        return "q empty"
    return None


def keyword_hits(q: str, docs: list[dict[str, Any]], readings: Readings) -> dict[str, list[dict[str, Any]]]:
    """The matches of q under each accepted keyword reading (errata O2), case-insensitively."""
    wanted = words(q)
    out: dict[str, list[dict[str, Any]]] = {}
    if readings.allows("keyword_match", "all-words"):
        out["keyword match: all-words"] = [d for d in docs if wanted and set(wanted) <= set(words(str(d.get("content"))))]
    if readings.allows("keyword_match", "substring"):
        out["keyword match: substring"] = [d for d in docs if q and q.lower() in str(d.get("content")).lower()]
    if readings.allows("keyword_match", "any-word"):
        out["keyword match: any-word"] = [d for d in docs if set(wanted) & set(words(str(d.get("content"))))]
    return out


def plain_strategy(request: Request) -> bool:
    values = [v for k, v in request.params if k == "conflict"]
    return len(values) <= 1 and all(v in omp.CONFLICTS for v in values)
