"""One executable model of an OMP server (§2.1, §3.3, §4, §5): pure Python, no I/O.

The model holds what the spec says a server's state is (every memory of every user, with every field;
the acknowledged writes as an audit trail) and, for any request in any state, the set of answers
acceptable under the suite's readings (errata.md). Where the spec is open, every accepted reading's
answer is in the set; a `Readings` built from the suite's options narrows it to the pinned reading.
Answers are judged by `Model.accepts(request, reply)`: None, or a `Reason` naming what each reading
expected. `Model.apply` advances the state from an accepted answer (ids and timestamps are the target's
own, so the state follows the answers it accepted); `Model.step` does both.

Ranking the spec leaves open is a set or partial-order constraint, never an exact order: a keyword
page is any page-sized subset of the matches; a list page is the matching memories in sort order,
memories whose sort stamps tie in any order among themselves.

A model is `complete` when its memories are everything the requests can see (a fresh server, or
requests scoped by a run-unique tag or word); otherwise (a live server holding other data) it judges
only what its knowledge decides: served memories fit the filters, the limit, the order, and every
memory it knows is served as it is.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memconform.formats import parse_datetime
from memconform.suites.omp import format as omp

Check = Callable[[Any], "str | None"]  # an answer -> what is wrong with it under one reading, or None
WORD_RE = re.compile(r"[^\W_]+")  # a maximal run of letters and digits (errata O2: full-text words)
SORT_FIELDS = {"created_at_desc": ("created_at", True), "created_at_asc": ("created_at", False),
               "updated_at_desc": ("updated_at", True)}
FILTERS = ("type", "tool", "tags", "namespace")
DEFAULT_USER, OTHER_USER = "user", "other-user"


# ---- readings --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Readings:
    """The readings of open spec text (errata O-numbers); "either"/"any" accepts every one of them."""

    keyword_match: str = "any"  # O2: any | all-words | substring | any-word
    search_tags_match: str = "either"  # O2: either | all | any
    search_default_limit: str = "either"  # O2: either | 20 | 10
    search_total: str = "either"  # O2: either | matches | page
    limit_over_max: str = "either"  # O9: either | reject | clamp
    bad_params: str = "either"  # O9, O30: either | reject
    tool_key_status: str = "either"  # O17: either | 403 | 404
    cross_user_status: str = "either"  # O20: either | 404 | 403
    error_message: str = "optional"  # O15: optional | required
    char_unit: str = "either"  # O19: either | code-points | utf-16
    namespace_null: str = "either"  # O8 (no option): either | clears | refused
    invalid_import: str = "either"  # O7 (no option): either | reported | refused
    import_created_at: str = "either"  # O26 (no option): either | keeps | stamps
    semantic_required: bool = False  # O13: at OMP-Search a semantic search must be served

    @classmethod
    def from_options(cls, option: Callable[[str], str], level: str = "core") -> Readings:
        """The readings a run's options pin (ctx.option); the others stay open."""
        names = ("keyword_match", "search_tags_match", "search_default_limit", "search_total", "limit_over_max",
                 "bad_params", "tool_key_status", "cross_user_status", "error_message", "char_unit")
        return cls(**{name: option(name) for name in names}, semantic_required=level in ("search", "full"))

    def allows(self, name: str, value: str) -> bool:
        pinned = getattr(self, name)
        return pinned in ("either", "any") or pinned == value


# ---- requests and reasons --------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """One OMP request: the operation, whose key (`global`, `other-user` or `tool:NAME`), the path id,
    the JSON body, and the query parameters as sent (repeats kept, in order)."""

    op: str  # create | get | update | delete | list | search | export | import | health
    key: str = "global"
    id: str | None = None
    body: Any = None
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def list(cls, params: Mapping[str, str] | Iterable[tuple[str, str]] = (), key: str = "global") -> Request:
        pairs = tuple(params.items()) if isinstance(params, Mapping) else tuple(params)
        return cls("list", key, params=pairs)


@dataclass
class Reason:
    """Why an answer is outside the model's set: a short title, what was received, what each reading expected."""

    title: str
    received: Any
    expected: dict[str, str]

    def __str__(self) -> str:
        wants = "; ".join(f"{reading}: {want}" for reading, want in self.expected.items())
        return f"{self.title} (received {str(self.received)[:160]}; expected {wants})"


@dataclass(frozen=True)
class Principal:
    user: str
    tool: str | None = None


def principal(key: str) -> Principal:
    if key.startswith("tool:"):
        return Principal(DEFAULT_USER, key[5:])
    return Principal(OTHER_USER if key == "other-user" else DEFAULT_USER)


# ---- values ----------------------------------------------------------------------------------

def instant(value: Any) -> Any:
    return parse_datetime(value, "omp")


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD_RE.findall(text)]


def char_lengths(text: str) -> set[int]:
    """Its length in code points and in UTF-16 code units (errata O19)."""
    return {len(text), len(text.encode("utf-16-le")) // 2}


def same_json(a: Any, b: Any) -> bool:
    """JSON equality with numbers as doubles (errata O35: -0.0 is 0, 5.0 is 5, 2^53+1 may read as 2^53)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _status(answer: Any) -> int:
    return int(getattr(answer, "status", 0))


def _body(answer: Any) -> Any:
    return getattr(answer, "body", None)


def brief(answer: Any) -> str:
    body = _body(answer)
    text = "" if body is None else str(body)
    return f"{_status(answer)} {text[:120]}".strip()


# ---- §2.1 validity ---------------------------------------------------------------------------

VALID, INVALID, OPEN = "valid", "invalid", "open"


class Validity:
    """What the spec says of a body: valid, invalid (a 422 and nothing stored), or open (either)."""

    def __init__(self) -> None:
        self.kind = VALID
        self.why: list[str] = []

    def bad(self, why: str) -> None:
        self.kind, self.why = INVALID, [*self.why, why]

    def open(self, why: str) -> None:
        if self.kind == VALID:
            self.kind = OPEN
        self.why.append(why)


class Validator:
    def __init__(self, readings: Readings) -> None:
        self.readings = readings

    def text(self, v: Validity, value: Any, name: str, max_len: int | None, *, required: bool = True) -> None:
        if value is None and not required:
            return
        if not isinstance(value, str):
            v.bad(f"{name} is not a string")
            return
        if value == "":
            v.open(f"{name} is empty (errata O34)")
        if max_len is None:
            return
        code_points, utf16 = len(value), len(value.encode("utf-16-le")) // 2
        over = {"code-points": code_points > max_len, "utf-16": utf16 > max_len}
        if all(over.values()):
            v.bad(f"{name} is over {max_len} characters")
        elif any(over.values()):
            pinned = self.readings.char_unit
            if pinned == "either":
                v.open(f"{name} is at {max_len} in one count of characters (errata O19)")
            elif over[pinned]:
                v.bad(f"{name} is over {max_len} {pinned}")

    def stamp(self, v: Validity, value: Any, name: str, *, nullable: bool = False) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, str):
            v.bad(f"{name} is not a timestamp string")
        elif instant(value) is None:
            v.open(f"{name} {value[:40]!r} is not ISO 8601 UTC (errata O35)")

    def memory(self, body: Any, *, partial: bool) -> Validity:
        v = Validity()
        if not isinstance(body, dict):
            v.bad("the body is not an object")
            return v
        if "content" in body or not partial:
            self.text(v, body.get("content"), "content", omp.MAX_CONTENT)
        if "type" in body or not partial:
            if body.get("type") not in omp.TYPES:
                v.bad(f"type {body.get('type')!r} is not a MemoryType")
        if "source" in body or not partial:
            self.source(v, body.get("source"), partial)
        if "tags" in body:
            self.tags(v, body["tags"])
        self.text(v, body.get("namespace"), "namespace", omp.MAX_NAMESPACE, required=False)
        self.stamp(v, body.get("expires_at"), "expires_at", nullable=True)
        metadata = body.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            v.bad("metadata is not an object")
        elif isinstance(metadata, dict) and len(metadata) > omp.MAX_METADATA_KEYS:
            v.bad("metadata has more than 10 keys")
        elif isinstance(metadata, dict) and "" in metadata:
            v.open("metadata has an empty key (errata O35)")
        embedding = body.get("embedding")
        if embedding is not None and not (isinstance(embedding, list) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in embedding)):
            v.bad("embedding is not an array of numbers")
        elif embedding == []:
            v.open("embedding is empty (errata O35)")
        return v

    def source(self, v: Validity, source: Any, partial: bool) -> None:
        if not isinstance(source, dict):
            v.bad("source is not an object")
            return
        for name in ("tool", "timestamp"):
            if name not in source and partial:
                v.open(f"an update's source without {name} (errata O35: replaced or merged)")
        if "tool" in source or not partial:
            self.text(v, source.get("tool"), "source.tool", None)
        if "timestamp" in source or not partial:
            self.stamp(v, source.get("timestamp"), "source.timestamp")
        for name in ("session_id", "user_id"):
            if source.get(name) is not None and not isinstance(source[name], str):
                v.bad(f"source.{name} is not a string")

    def tags(self, v: Validity, tags: Any) -> None:
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            v.bad("tags is not an array of strings")
            return
        if len(tags) > omp.MAX_TAGS:
            v.bad("more than 20 tags")
        for tag in tags:
            self.text(v, tag, "a tag", omp.MAX_TAG_LEN)
        if len(set(tags)) != len(tags):
            v.open("a tag appears twice (errata O35)")


# ---- what a served memory must say -----------------------------------------------------------

def memory_shape(doc: Any) -> str | None:
    """§2.1: the fields every served memory has, of their types."""
    if not isinstance(doc, dict):
        return "a memory is not an object"
    if not isinstance(doc.get("id"), str) or not omp.ID_RE.match(doc["id"]):
        return f"the id {doc.get('id')!r} is not \"mem_\" + 16 alphanumerics"
    for name in ("created_at", "updated_at"):
        if instant(doc.get(name)) is None:
            return f"{name} {doc.get(name)!r} is not an ISO 8601 UTC timestamp"
    if not isinstance(doc.get("tags"), list):
        return "tags is not an array"
    return None


def fields_differ(served: dict[str, Any], want: dict[str, Any], *, stored: bool = False) -> str | None:
    """What a served memory says unlike the fields written (errata O22); `stored`: also id and timestamps."""
    names = ("content", "type") + (("id",) if stored else ())
    for name in names:
        if name in want and served.get(name) != want[name]:
            return f"{name}: served {served.get(name)!r}, expected {want[name]!r}"
    if "tags" in want and sorted(set(served.get("tags") or [])) != sorted(set(want["tags"] or [])):
        return f"tags: served {served.get('tags')!r}, expected {want['tags']!r}"
    if served.get("namespace") != want.get("namespace"):
        return f"namespace: served {served.get('namespace')!r}, expected {want.get('namespace')!r}"
    if not same_json(served.get("metadata") or {}, want.get("metadata") or {}):
        return f"metadata: served {served.get('metadata')!r}, expected {want.get('metadata')!r}"
    if instant(served.get("expires_at")) != instant(want.get("expires_at")):
        return f"expires_at: served {served.get('expires_at')!r}, expected {want.get('expires_at')!r}"
    source, wanted = served.get("source") or {}, want.get("source") or {}
    if isinstance(wanted, dict) and wanted:
        if not isinstance(source, dict) or source.get("tool") != wanted.get("tool"):
            return f"source.tool: served {source.get('tool') if isinstance(source, dict) else source!r}, expected {wanted.get('tool')!r}"
        if instant(source.get("timestamp")) != instant(wanted.get("timestamp")):
            return f"source.timestamp: served {source.get('timestamp')!r}, expected {wanted.get('timestamp')!r}"
        for name in ("session_id", "user_id"):
            if source.get(name) != wanted.get(name):
                return f"source.{name}: served {source.get(name)!r}, expected {wanted.get(name)!r}"
    if stored:
        for name in ("created_at", "updated_at"):
            if name in want and instant(served.get(name)) != instant(want.get(name)):
                return f"{name}: served {served.get(name)!r}, stored {want.get(name)!r}"
    return None


def memory_is(want: dict[str, Any], *, status: int, stored: bool = False) -> Check:
    def check(answer: Any) -> str | None:
        if _status(answer) != status:
            return f"answered {brief(answer)}, not {status}"
        body = _body(answer)
        return memory_shape(body) or fields_differ(body, want, stored=stored)
    return check


def error_is(readings: Readings, status: int | None, code: str | None) -> Check:
    """A §4 error: the status (None: any 4xx), the envelope, the code (errata O15)."""
    def check(answer: Any) -> str | None:
        got = _status(answer)
        if got >= 500:
            return f"a server error ({got})"
        if status is not None and got != status or not 400 <= got < 500:
            return f"answered {brief(answer)}, not {status or 'a 4xx'}"
        body = _body(answer)
        if not isinstance(body, dict) or not isinstance(body.get("error"), str):
            return "the error is not the §4 envelope"
        if readings.error_message == "required" and not isinstance(body.get("message"), str):
            return "the error has no message (error_message=required)"
        if code is not None and body["error"] != code:
            return f"error code {body['error']!r}, not {code!r}"
        if body["error"] in omp.ERRORS and omp.ERRORS[body["error"]] != got:
            return f"error code {body['error']!r} does not go with {got}"
        return None
    return check


def refused(readings: Readings) -> Check:
    return error_is(readings, None, None)


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
        if any(v is REFUSE for v in values):
            out.append(ListReading(names))
            continue
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


# ---- the model -----------------------------------------------------------------------------------

@dataclass
class ImportEffect:
    """What an accepted import must have done to one item, judged on the next export (errata O7, O26)."""

    content: str
    id: str | None  # the id it must be stored under; None: a new id
    stored: str  # "must" | "may" | "not"
    created_at: Any = None
    replaces: str | None = None  # overwrite: the id whose old content must be gone


@dataclass
class Model:
    """The state of an OMP server as the spec says it must be, and the answers it allows."""

    readings: Readings = field(default_factory=Readings)
    complete: bool = True
    users: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    audit: list[tuple[str, str, str | None]] = field(default_factory=list)  # (key, op, id) of acknowledged writes
    pending: list[ImportEffect] | None = None  # an import not yet read back

    def __post_init__(self) -> None:
        self.validator = Validator(self.readings)

    # -- state ----------------------------------------------------------------------------------

    @classmethod
    def seeded(cls, docs: Iterable[dict[str, Any]], readings: Readings | None = None, *, complete: bool = True,
               user: str = DEFAULT_USER) -> Model:
        """A model holding these stored memories (as a target served them)."""
        model = cls(readings or Readings(), complete)
        model.users[user] = {d["id"]: d for d in docs if isinstance(d, dict) and isinstance(d.get("id"), str)}
        return model

    def snapshot(self, request: Request) -> dict[str, Any]:
        """The request and the state as JSON, without the target's stamps: a replay's model (`from_snapshot`)."""
        def unstamped(doc: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in doc.items() if k not in ("created_at", "updated_at")}
        return {"request": {"op": request.op, "key": request.key, "id": request.id, "body": request.body,
                            "params": [list(p) for p in request.params]},
                "users": {user: [unstamped(d) for d in docs.values()] for user, docs in self.users.items()},
                "gone": sorted(self.gone)}

    @classmethod
    def from_snapshot(cls, snap: dict[str, Any], readings: Readings | None = None) -> tuple[Model, Request]:
        model = cls(readings or Readings())
        model.users = {user: {d["id"]: d for d in docs} for user, docs in snap["users"].items()}
        model.gone = set(snap.get("gone", []))
        req = snap["request"]
        return model, Request(req["op"], req["key"], req["id"], req["body"], tuple(tuple(p) for p in req["params"]))

    def memories(self, key: str = "global") -> list[dict[str, Any]]:
        """What this key sees: its user's memories, for a per-tool key only its tool's."""
        who = principal(key)
        docs = self.users.get(who.user, {}).values()
        return [d for d in docs if who.tool is None or (d.get("source") or {}).get("tool") == who.tool]

    def find(self, key: str, mem_id: str | None) -> tuple[str, dict[str, Any] | None]:
        """("own", doc), ("other-tool", doc), ("other-user", doc) or ("none", None)."""
        who = principal(key)
        doc = self.users.get(who.user, {}).get(mem_id or "")
        if doc is not None:
            if who.tool is not None and (doc.get("source") or {}).get("tool") != who.tool:
                return "other-tool", doc
            return "own", doc
        if any(mem_id in docs for user, docs in self.users.items() if user != who.user):
            return "other-user", None
        return "none", None

    # -- predictions the example checks read --------------------------------------------------

    def list_page(self, request: Request) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Under the first reading that serves an exact page: every match in sort order, and the page."""
        for reading in list_readings(request.params, self.readings):
            if reading.filters is not None and reading.exact:
                matches = ordered([d for d in self.memories(request.key) if reading.filters.fit(d)], reading.sort)
                return matches, matches[reading.offset:reading.offset + reading.limit]
        raise ValueError(f"no reading of {request.params} serves an exact page")

    def search_sets(self, request: Request) -> dict[str, set[str]]:
        """A keyword search: {readings: the ids every match holds} (before the limit), per accepted reading."""
        body = request.body if isinstance(request.body, dict) else {}
        docs = self.memories(request.key)
        out: dict[str, set[str]] = {}
        for tags_name, filters in self._search_filters(body).items():
            for match_name, hits in keyword_hits(str(body.get("q", "")), [d for d in docs if filters.fit(d)], self.readings).items():
                out[_join(tags_name, match_name)] = {d["id"] for d in hits}
        return out

    # -- judging --------------------------------------------------------------------------------

    def expect(self, request: Request) -> dict[str, Check]:
        """The answers acceptable for the request in this state: {reading: what it predicts}."""
        handler = getattr(self, f"_expect_{request.op}", None)
        if handler is None:
            raise ValueError(f"the OMP model has no operation {request.op!r}")
        return handler(request)  # type: ignore[no-any-return]

    def fits(self, request: Request, answer: Any) -> list[str]:
        """The readings whose prediction the answer matched (for ctx.observe)."""
        return [name for name, check in self.expect(request).items() if check(answer) is None]

    def accepts(self, request: Request, answer: Any) -> Reason | None:
        """None when the answer is in the model's set, else what each reading expected."""
        problems: dict[str, str] = {}
        for name, check in self.expect(request).items():
            problem = check(answer)
            if problem is None:
                return None
            problems[name] = problem
        first = next(iter(problems.values()), "no reading allows any answer")
        return Reason(first, brief(answer), problems)

    def step(self, request: Request, answer: Any) -> Reason | None:
        reason = self.accepts(request, answer)
        if reason is None:
            self.apply(request, answer)
        return reason

    def apply(self, request: Request, answer: Any) -> None:
        """Advance the state from an answer the model accepted."""
        status, body = _status(answer), _body(answer)
        who = principal(request.key)
        docs = self.users.setdefault(who.user, {})
        if request.op == "create" and status == 201 and isinstance(body, dict):
            docs[body["id"]] = body
            self.gone.discard(body["id"])
            self.audit.append((request.key, "create", body["id"]))
        elif request.op == "update" and status == 200 and isinstance(body, dict) and request.id in docs:
            docs[request.id] = body
            self.audit.append((request.key, "update", request.id))
        elif request.op == "delete" and status == 204 and request.id in docs:
            docs.pop(request.id)
            self.gone.add(request.id)
            self.audit.append((request.key, "delete", request.id))
        elif request.op == "import" and 200 <= status < 300:
            self.pending = self._import_effects(request)
        elif request.op == "import" and 400 <= status < 500:  # errata O7: the whole file refused, nothing stored
            self.pending = [ImportEffect(e.content, None, "not") for e in self._import_effects(request)]
        elif request.op == "export" and status == 200 and self.pending is not None and isinstance(body, dict):
            self._resolve_import(request.key, body.get("memories") or [])

    # -- create, get, update, delete ---------------------------------------------------------

    def _expect_create(self, request: Request) -> dict[str, Check]:
        body, who = request.body, principal(request.key)
        validity = self.validator.memory(body, partial=False)
        refuse = {"the memory refused with 422": error_is(self.readings, 422, "validation_error")}
        if validity.kind == INVALID:
            return {f"invalid ({'; '.join(validity.why)}): 422": refuse["the memory refused with 422"]}
        if who.tool is not None and (body.get("source") or {}).get("tool") != who.tool:
            return {"a create for another tool: 403": error_is(self.readings, 403, "forbidden")}
        made = {"created: 201 with the memory as written": memory_is(self._written(body), status=201)}
        if validity.kind == OPEN:
            made[f"open ({'; '.join(validity.why)}): refused with a 4xx"] = refused(self.readings)
        return made

    @staticmethod
    def _written(body: dict[str, Any]) -> dict[str, Any]:
        want = {k: body.get(k) for k in ("content", "type", "namespace", "metadata", "expires_at", "source")}
        want["tags"] = body.get("tags") or []
        if isinstance(want["source"], dict):
            want["source"] = {k: v for k, v in want["source"].items() if v is not None}
        return want

    def _not_visible(self, where: str) -> dict[str, Check]:
        if where == "other-tool":
            return {f"another tool's memory: {s}": error_is(self.readings, s, "forbidden" if s == 403 else "memory_not_found")
                    for s in (403, 404) if self.readings.allows("tool_key_status", str(s))}
        if where == "other-user":
            return {f"another user's memory: {s}": error_is(self.readings, s, "forbidden" if s == 403 else "memory_not_found")
                    for s in (404, 403) if self.readings.allows("cross_user_status", str(s))}
        if not self.complete and where == "none":
            return {"not known to the model: 404": error_is(self.readings, 404, "memory_not_found"), "any memory": _any_memory}
        return {"no such memory: 404 memory_not_found": error_is(self.readings, 404, "memory_not_found")}

    def _expect_get(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own" or doc is None:
            return self._not_visible(where)
        return {"200 with the memory as stored": memory_is(doc, status=200, stored=True)}

    def _expect_delete(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own":
            return self._not_visible(where)
        return {"deleted: 204": lambda a: None if _status(a) == 204 else f"answered {brief(a)}, not 204"}

    def _expect_update(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own" or doc is None:
            return self._not_visible(where)
        patch, who = request.body, principal(request.key)
        validity = self.validator.memory(patch, partial=True)
        if validity.kind == INVALID:
            return {f"invalid ({'; '.join(validity.why)}): 422": error_is(self.readings, 422, "validation_error")}
        if who.tool is not None and isinstance(patch.get("source"), dict) and patch["source"].get("tool", who.tool) != who.tool:
            return {"an update to another tool: 403": error_is(self.readings, 403, "forbidden")}
        out: dict[str, Check] = {}
        for name, merged in self._updated(doc, patch).items():
            out[name] = _updated_is(doc, merged)
        if "namespace" in patch and patch["namespace"] is None:
            if self.readings.namespace_null == "refused":
                out = {}
            if self.readings.namespace_null in ("either", "refused"):
                out["namespace null refused, nothing changed"] = refused(self.readings)
        if validity.kind == OPEN or "id" in patch or "created_at" in patch:
            out[f"open ({'; '.join(validity.why) or 'id or created_at in the body'}): refused with a 4xx"] = refused(self.readings)
        return out

    @staticmethod
    def _updated(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The memory after a partial update (errata O8): given fields replace, the rest stay; id and created_at never."""
        fields = {k: v for k, v in patch.items() if k in ("content", "type", "tags", "namespace", "metadata", "expires_at")}
        merged = {**doc, **fields}
        if "metadata" in fields and fields["metadata"] is None:
            merged["metadata"] = {}
        if not isinstance(patch.get("source"), dict):
            return {"updated: only the given fields changed": merged}
        source = {k: v for k, v in patch["source"].items() if v is not None}
        if {"tool", "timestamp"} <= set(source):
            return {"updated: only the given fields changed": {**merged, "source": source}}
        return {"updated: a partial source merged": {**merged, "source": {**(doc.get("source") or {}), **source}}}

    # -- list -----------------------------------------------------------------------------------

    def _expect_list(self, request: Request) -> dict[str, Check]:
        docs = self.memories(request.key)
        out: dict[str, Check] = {}
        for reading in list_readings(request.params, self.readings):
            name = ", ".join(reading.names) or "the page of the matching memories"
            out[name] = refused(self.readings) if reading.filters is None else self._page_check(reading, docs)
        return out

    def _page_check(self, reading: ListReading, docs: list[dict[str, Any]]) -> Check:
        assert reading.filters is not None
        filters = reading.filters
        matches = ordered([d for d in docs if filters.fit(d)], reading.sort)

        def check(answer: Any) -> str | None:
            body = _body(answer)
            if _status(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
                return f"not a 200 list page ({brief(answer)})"
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if reading.exact:
                for name, applied in (("limit", reading.limit), ("offset", reading.offset)):
                    if body.get(name) not in (reading.echo_limit if name == "limit" and reading.echo_limit else (applied,)):
                        return f"{name} does not echo what was applied ({body.get(name, '<absent>')!r}, not {applied})"
            if len(served) > (reading.limit if reading.exact else omp.MAX_LIMIT):
                return f"more memories than the limit ({len(served)} > {reading.limit if reading.exact else omp.MAX_LIMIT})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            if not in_order(served, reading.sort):
                return f"the page is not in {reading.sort} order"
            return self._page_matches(reading, matches, served, body)
        return check

    def _page_matches(self, reading: ListReading, matches: list[dict[str, Any]], served: list[dict[str, Any]],
                      body: dict[str, Any]) -> str | None:
        known = {m["id"]: m for m in matches}
        ids = [m.get("id") for m in served]
        if len(set(ids)) != len(ids):
            return "a memory is served twice on one page"
        for mem in served:
            if mem.get("id") in known and fields_differ(mem, known[mem["id"]], stored=True):
                return f"a memory is not served as stored: {fields_differ(mem, known[mem['id']], stored=True)}"
        if not self.complete:
            total = body.get("total")
            if reading.exact and isinstance(total, int) and total < len(matches):
                return f"total does not count every match ({total} < {len(matches)} known)"
            return None
        if not set(ids) <= set(known):
            return f"not the page of the matching memories (unknown memories {sorted(set(map(str, ids)) - set(known))[:3]})"
        if not reading.exact:
            return None
        if body.get("total") != len(matches):
            return f"total does not count every match ({body.get('total', '<absent>')!r}, not {len(matches)})"
        wanted = matches[reading.offset:reading.offset + reading.limit]
        if any(sort_key(m, reading.sort) is None for m in matches):  # stamps unknown: the page's size
            return None if len(served) == len(wanted) else f"not the page of the matching memories ({len(served)} served, {len(wanted)} expected)"
        if [sort_key(m, reading.sort) for m in served] != [sort_key(m, reading.sort) for m in wanted]:
            return (f"not the page of the matching memories ({len(served)} served {ids[:5]}, "
                    f"expected {[m['id'] for m in wanted][:5]} of {len(matches)})")
        return None

    # -- search ---------------------------------------------------------------------------------

    def _expect_search(self, request: Request) -> dict[str, Check]:
        body = request.body
        if not isinstance(body, dict):
            return {"not an object: 4xx": refused(self.readings)}
        invalid = search_invalid(body)
        if invalid:
            return {f"{invalid}: 422": error_is(self.readings, 422, "validation_error")}
        out: dict[str, Check] = {}
        odd = search_odd(body)
        if odd:
            out[f"{odd}: refused with a 4xx"] = refused(self.readings)
            if self.readings.bad_params == "reject":
                return out
        docs = self.memories(request.key)
        mode = body.get("mode", "keyword")
        q = body.get("q")
        for tags_name, filters in self._search_filters(body).items():
            matched = [d for d in docs if filters.fit(d)]
            for limit_name, limit in self._search_limits(body).items():
                if mode not in ("keyword", None) or odd or q == "" or not isinstance(q, str):
                    out[_join(tags_name, limit_name, "a page of the filtered memories")] = self._loose_search(
                        matched, filters, limit, mode)
                    continue
                for match_name, hits in keyword_hits(q, matched, self.readings).items():
                    out[_join(tags_name, limit_name, match_name)] = self._keyword_check(hits, filters, limit)
        if mode in ("semantic", "hybrid") and not self.readings.semantic_required:
            out[f"{mode} not offered: refused with a 4xx"] = refused(self.readings)
        return out

    def _search_filters(self, body: dict[str, Any]) -> dict[str, Filters]:
        tags = body.get("tags")
        if isinstance(tags, str):
            tags = list(comma_tags(tags))
        kind = body.get("type") if body.get("type") in omp.TYPES else None
        namespace = body.get("namespace")
        if not tags:
            return {"": Filters(type=kind, namespace=namespace)}
        out = {}
        if self.readings.allows("search_tags_match", "all"):
            out["search tags: all"] = Filters(type=kind, namespace=namespace, tags=tuple(tags))
        if self.readings.allows("search_tags_match", "any") and len(tags) > 1:
            out["search tags: any"] = Filters(type=kind, namespace=namespace, tags=tuple(tags), tags_any=True)
        return out

    def _search_limits(self, body: dict[str, Any]) -> dict[str, int]:
        limit = body.get("limit")
        if limit is None:
            return {f"search default limit {n}": n for n in (omp.DEFAULT_LIMIT, 10) if self.readings.allows("search_default_limit", str(n))}
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        if isinstance(limit, int) and 1 <= limit <= omp.MAX_LIMIT:
            return {"": limit}
        return {"a sane limit": omp.MAX_LIMIT}

    def _keyword_check(self, hits: list[dict[str, Any]], filters: Filters, limit: int) -> Check:
        wanted = {d["id"]: d for d in hits}

        def check(answer: Any) -> str | None:
            problem = _search_page(answer)
            if problem:
                return problem
            body = _body(answer)
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if body.get("mode_used") != "keyword":
                return f"mode_used {body.get('mode_used', '<absent>')!r} for a keyword search"
            if len(served) > limit:
                return f"more memories than the limit ({len(served)} > {limit})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            ids = [m.get("id") for m in served]
            if len(set(ids)) != len(ids):
                return "a memory is served twice"
            if self.complete and not set(ids) <= set(wanted):
                return f"keyword search served memories without the query words ({sorted(set(map(str, ids)) - set(wanted))[:3]})"
            for mem in served:
                if mem.get("id") in wanted and fields_differ(mem, wanted[mem["id"]], stored=True):
                    return f"a memory is not served as stored: {fields_differ(mem, wanted[mem['id']], stored=True)}"
            if self.complete and len(served) != min(limit, len(wanted)):
                return f"not every match up to the limit ({len(served)} served, {min(limit, len(wanted))} expected)"
            if not self.complete and len(served) < min(limit, len(wanted)):
                return f"not every match up to the limit ({len(served)} served, at least {min(limit, len(wanted))} expected)"
            return self._total(body, len(wanted), len(served))
        return check

    def _total(self, body: dict[str, Any], matches: int, page: int) -> str | None:
        total = body.get("total")
        if not isinstance(total, int) or isinstance(total, bool):
            return f"total {total!r} is not an integer"
        allowed = {"search total: matches": matches, "search total: page": page}
        fits = [n for n, v in allowed.items() if self.readings.allows("search_total", n.split(": ")[1])
                and (total == v if self.complete or n.endswith("page") else total >= v)]
        return None if fits else f"total {total} is neither the matches ({matches}) nor the page ({page})"

    def _loose_search(self, matched: list[dict[str, Any]], filters: Filters, limit: int, mode: Any) -> Check:
        """A mode whose ranking the spec leaves open, or an odd value served: filters, limit and honesty only."""
        known = {d["id"] for d in matched}

        def check(answer: Any) -> str | None:
            problem = _search_page(answer)
            if problem:
                return problem
            body = _body(answer)
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if body.get("mode_used") not in omp.SEARCH_MODES:
                return f"mode_used {body.get('mode_used', '<absent>')!r} is not a mode"
            if mode in omp.SEARCH_MODES and mode != "keyword" and self.readings.semantic_required and body.get("mode_used") != mode:
                return f"mode_used {body.get('mode_used')!r}, not {mode!r} (OMP-Search)"
            if len(served) > limit:
                return f"more memories than the limit ({len(served)} > {limit})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            if self.complete and not {m.get("id") for m in served} <= known:
                return "served memories the model does not hold"
            return None
        return check

    # -- export and import ----------------------------------------------------------------------

    def _expect_export(self, request: Request) -> dict[str, Check]:
        docs = {d["id"]: d for d in self.memories(request.key)}
        pending = self.pending

        def check(answer: Any) -> str | None:
            body = _body(answer)
            if _status(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
                return f"not a 200 export ({brief(answer)})"
            if not isinstance(body.get("omp_version"), str) or instant(body.get("exported_at")) is None:
                return "the export envelope lacks omp_version or a UTC exported_at"
            served = {m.get("id"): m for m in body["memories"] if isinstance(m, dict)}
            if pending is not None:
                return self._import_seen(docs, served, pending)
            lost = sorted(set(docs) - set(served))
            if lost:
                return f"the export lacks memories the model holds ({lost[:3]})"
            for mem_id, doc in docs.items():
                problem = fields_differ(served[mem_id], doc, stored=True)
                if problem:
                    return f"export {mem_id}: {problem}"
            if self.complete and set(served) - set(docs):
                return f"the export holds memories the model does not ({sorted(map(str, set(served) - set(docs)))[:3]})"
            resurrected = sorted(self.gone & set(map(str, served)))
            if resurrected:
                return f"a deleted memory is exported ({resurrected[:3]})"
            return None
        return {"every memory as stored": check}

    def _expect_health(self, request: Request) -> dict[str, Check]:
        def check(answer: Any) -> str | None:
            body = _body(answer)
            if _status(answer) != 200 or not isinstance(body, dict) or body.get("status") != "ok":
                return f"health did not answer 200 with status ok ({brief(answer)})"
            count = body.get("memories_count")
            held = sum(len(d) for d in self.users.values())
            if not isinstance(count, int) or (count != held if self.complete else count < held):
                return f"memories_count {count!r}, the model holds {held}"
            return None
        return {"200 ok with the count": check}

    def conflict_readings(self, request: Request) -> list[str] | None:
        """The strategies a sane server may apply (errata O1, O35); None when only a 422 is allowed."""
        values = [v for k, v in request.params if k == "conflict"]
        if not values and isinstance(request.body, dict) and isinstance(request.body.get("conflict"), str):
            values = [request.body["conflict"]]
        if not values:
            return ["skip"]
        if len(values) > 1:
            return [v for v in dict.fromkeys((values[0], values[-1])) if v in omp.CONFLICTS] or None
        value = values[0]
        if value in omp.CONFLICTS:
            return [value]
        if value == "":
            return ["skip"]
        if value.lower() in omp.CONFLICTS:
            return [value.lower()]
        return None

    def _expect_import(self, request: Request) -> dict[str, Check]:
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("memories"), list):
            return {"not an export object: 422": error_is(self.readings, 422, "validation_error")}
        strategies = self.conflict_readings(request)
        if strategies is None:
            return {"unknown conflict strategy: 422 and nothing imported": error_is(self.readings, 422, "validation_error")}
        items = body["memories"]
        kinds = [self._item_validity(item) for item in items]
        out: dict[str, Check] = {}
        if not _plain_strategy(request) or INVALID in kinds or OPEN in kinds:
            if INVALID not in kinds or self.readings.invalid_import in ("either", "refused"):
                out["whole file refused"] = refused(self.readings)
        if INVALID in kinds and self.readings.invalid_import == "refused":
            return out
        out["invalid memory reported, the rest imported" if INVALID in kinds else "imported"] = self._import_report(
            request, items, kinds)
        return out

    def _item_validity(self, item: Any) -> str:
        v = self.validator.memory(item, partial=False)
        if isinstance(item, dict):
            mem_id = item.get("id")
            if mem_id is None:
                v.open("an item without id (errata O35)")
            elif not isinstance(mem_id, str) or not omp.ID_RE.match(mem_id):
                v.open(f"an item id {str(mem_id)[:30]!r} that breaks the format (errata O35)")
            for name in ("created_at", "updated_at"):
                if item.get(name) is None:
                    v.open(f"an item without {name} (errata O35)")
                else:
                    self.validator.stamp(v, item.get(name), name)
        return v.kind

    def _import_report(self, request: Request, items: list[Any], kinds: list[str]) -> Check:
        def check(answer: Any) -> str | None:
            body = _body(answer)
            if _status(answer) != 200 or not isinstance(body, dict):
                return f"not a 200 import report ({brief(answer)})"
            errors = body.get("errors")
            if not isinstance(body.get("imported"), int) or not isinstance(body.get("skipped"), int) or not isinstance(errors, list):
                return "the report lacks imported, skipped or errors"
            named = {e.get("index") for e in errors if isinstance(e, dict)} | {e.get("id") for e in errors if isinstance(e, dict)}
            unnamed = [i for i, kind in enumerate(kinds) if kind == INVALID
                       and i not in named and (not isinstance(items[i], dict) or items[i].get("id") not in named or items[i].get("id") is None)]
            if unnamed:
                return f"errors does not name the invalid memories at {unnamed[:3]}"
            sure = sum(1 for k in kinds if k == VALID)
            maybe = sum(1 for k in kinds if k == OPEN)
            done = body["imported"] + body["skipped"]
            if not sure <= done <= sure + maybe:
                return f"imported + skipped is {done}, expected {sure}" + (f" to {sure + maybe}" if maybe else "")
            return None
        return check

    def _import_effects(self, request: Request) -> list[ImportEffect]:
        strategies = self.conflict_readings(request) or ["skip"]
        body = request.body if isinstance(request.body, dict) else {}
        docs = self.users.get(principal(request.key).user, {})
        effects: list[ImportEffect] = []
        seen: set[str] = set()
        for item in body.get("memories") or []:
            if not isinstance(item, dict) or not isinstance(item.get("content"), str):
                continue
            kind = self._item_validity(item)
            mem_id = item.get("id") if isinstance(item.get("id"), str) else None
            exists = mem_id is not None and (mem_id in docs or mem_id in seen)
            if kind == INVALID:
                effects.append(ImportEffect(item["content"], None, "not"))
                continue
            stored = "must" if kind == VALID else "may"
            if len(strategies) > 1:
                stored = "may"
            strategy = strategies[0]
            if exists and strategy == "skip":
                effects.append(ImportEffect(item["content"], mem_id, "not" if stored == "must" else "may"))
            elif strategy == "duplicate" or mem_id is None:
                effects.append(ImportEffect(item["content"], None, stored, item.get("created_at")))
            else:
                effects.append(ImportEffect(item["content"], mem_id, stored, item.get("created_at"),
                                            replaces=mem_id if exists else None))
            if mem_id is not None:
                seen.add(mem_id)
        return effects

    def _import_seen(self, docs: dict[str, dict[str, Any]], served: dict[Any, dict[str, Any]],
                     effects: list[ImportEffect]) -> str | None:
        by_content: dict[Any, list[dict[str, Any]]] = {}
        for mem in served.values():
            by_content.setdefault(mem.get("content"), []).append(mem)
        replaced = {e.replaces for e in effects if e.replaces and e.stored == "must"}
        lost = sorted(i for i in docs if i not in served and i not in replaced)
        if lost:
            return f"an import lost memories that existed ({lost[:3]})"
        touched = {e.id for e in effects if e.id is not None and e.stored != "not"}
        for mem_id in docs.keys() - touched:
            problem = fields_differ(served[mem_id], docs[mem_id], stored=True)
            if problem:
                return f"an import changed a memory it must leave alone ({mem_id}: {problem})"
        for effect in effects:
            found = by_content.get(effect.content, [])
            if effect.stored == "must" and not found:
                return f"an imported memory is missing ({effect.content[:60]!r})"
            if effect.stored == "not" and any(not (m.get("id") in docs and docs[m["id"]].get("content") == effect.content)
                                              for m in found):
                return f"a memory that must not be stored is ({effect.content[:60]!r})"
            if found and effect.id is not None and effect.stored == "must" and all(m.get("id") != effect.id for m in found):
                return f"an imported memory is not under its id {effect.id}"
            if found and effect.id is None and any(m.get("id") in docs for m in found):
                return "conflict=duplicate reused an existing id"
            if found and effect.created_at is not None and self.readings.import_created_at != "either":
                kept = instant(found[0].get("created_at")) == instant(effect.created_at)
                if kept != (self.readings.import_created_at == "keeps"):
                    return f"import {'stamped' if not kept else 'kept'} created_at (pinned: {self.readings.import_created_at})"
        return None

    def _resolve_import(self, key: str, exported: list[Any]) -> None:
        """After an import, the state is what the export said of the model's memories and the imported ones."""
        effects = self.pending or []
        contents = {e.content for e in effects if e.stored != "not"}
        who = principal(key)
        docs = self.users.setdefault(who.user, {})
        served: dict[str, dict[str, Any]] = {m["id"]: m for m in exported if isinstance(m, dict) and isinstance(m.get("id"), str)}
        for mem_id in list(docs):
            if mem_id in served:
                docs[mem_id] = served[mem_id]
        for served_id, mem in served.items():
            if mem.get("content") in contents:
                docs[served_id] = mem
                self.gone.discard(served_id)
                self.audit.append((key, "import", served_id))
        self.pending = None


def _any_memory(answer: Any) -> str | None:
    return None if _status(answer) == 200 and memory_shape(_body(answer)) is None else f"answered {brief(answer)}"


def _updated_is(before: dict[str, Any], want: dict[str, Any]) -> Check:
    """200 with the merged memory; id and created_at kept; updated_at moved forward (errata O6, O8)."""
    def check(answer: Any) -> str | None:
        if _status(answer) != 200:
            return f"answered {brief(answer)}, not 200"
        body = _body(answer)
        problem = memory_shape(body) or fields_differ(body, want)
        if problem:
            return problem
        if body.get("id") != before.get("id"):
            return f"the id changed to {body.get('id')!r}"
        if instant(body.get("created_at")) != instant(before.get("created_at")):
            return f"created_at changed to {body.get('created_at')!r}"
        old, new = instant(before.get("updated_at")), instant(body.get("updated_at"))
        whole = "." not in str(before.get("updated_at")) and "." not in str(body.get("updated_at"))
        if old is not None and new is not None and (new < old or (new == old and not whole)):
            return f"updated_at did not move forward ({body.get('updated_at')!r} after {before.get('updated_at')!r})"
        return None
    return check


def _plain_strategy(request: Request) -> bool:
    values = [v for k, v in request.params if k == "conflict"]
    return len(values) <= 1 and all(v in omp.CONFLICTS for v in values)


def _join(*names: str) -> str:
    return ", ".join(n for n in names if n)


def _search_page(answer: Any) -> str | None:
    body = _body(answer)
    if _status(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
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
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
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
