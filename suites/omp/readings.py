"""OMP's table of readings: every answer an open point of the spec allows, one row per reading (errata id,
the name the readings table shows, which requests meet the point, what answer the reading predicts, and
the options or level that pin it away).

The fuzzer (fuzzing/accepted.py) and its replayed failures (fuzzing/judged.py), the model (model/search.py)
and the example checks that meet these points (checks/large_roundtrip.py, checks/domain_writes.py, and
through the model search_mode_used_honest, domain_search_parameters and model_based_sequences) read the same
rows: no check blames an answer another accepts. Every other open point a check observes is a row too, in
the form its checks meet it (example_readings.py: the model's O2, O8, O9, O30, the checks' O7, O14, O17,
O26, the domain table's O36, O37, O52). tests/test_omp_one_table.py walks every row and asks each check
named in it; tests/test_omp_table_cases.py fails when a point observed in suites/omp is not in the table.

A request of the fuzzer's rows is an `Asked` (method, path, query, body, where schemathesis made it
invalid); an answer a `Reply`; the pins are the model's `Readings` (the run's options, and the level health
declares).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memconform.core.readings import Reading, ReadingTable
from memconform.suites.omp import format as omp
from memconform.suites.omp.model.base import Readings
from memconform.targets.base import Reply

LIST = ("GET", "/v1/memories")
CREATE = ("POST", "/v1/memories")
UPDATE = ("PUT", "/v1/memories/{id}")
IMPORT = ("POST", "/v1/import")
SEARCH = ("POST", "/v1/memories/search")
SEARCH_FIELDS = frozenset(("q", "type", "tags", "namespace", "limit", "mode"))
PAGING = ("limit", "offset")
NULLABLE = ("expires_at",)  # the one field §2.1 types `| null`
BODY_LIMIT_FROM = 1 << 20  # Express's `limit: '1mb'`, the smallest body limit errata O40 names
WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Asked:
    """One request as the table reads it: `route` is the method and the described path (`{id}` for an
    id); `described` the method the description gives the path (O32); `negative` where schemathesis made
    the request invalid on purpose ("query", "body"); `size` the body's bytes."""

    method: str
    path: str
    query: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    negative: frozenset[str] = frozenset()
    described: str = ""
    size: int = 0

    @property
    def route(self) -> tuple[str, str]:
        return (self.method.upper(), self.path)

    @property
    def valid_data(self) -> bool:
        return not self.negative

    @property
    def fields(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}


def reply(status: int, body: Any = None) -> Reply:
    import json

    return Reply(status=status, body=body, raw=json.dumps(body).encode() if body is not None else b"")


def envelope(code: str, field_name: str | None = None) -> dict[str, Any]:
    return {"error": code, "message": f"refused: {field_name or code}", "details": {"field": field_name} if field_name else {}}


# ---- what the answers are -------------------------------------------------------------------------

def error_envelope(answer: Reply, status: int | None = None) -> bool:
    """A 4xx (or `status`) with the §4 envelope whose code goes with the status (errata O15)."""
    from memconform.suites.omp.model.shapes import error_is

    return error_is(Readings(), status, None)(answer) is None


def fields_named(body: Any) -> set[str]:
    """The fields a 422's details name, in the shapes servers use: `{"field": f}`, `{"fields": [...]}`,
    a validator's `{"fieldErrors": {f: [...]}}`, or a list of issues with a `path`, `loc` or `field`."""
    details = body.get("details") if isinstance(body, dict) else None
    named: set[str] = set()
    if isinstance(details, dict):
        if isinstance(details.get("field"), str) and details["field"]:
            named.add(details["field"])
        if isinstance(details.get("fields"), list):
            named |= {f for f in details["fields"] if isinstance(f, str) and f}
        if isinstance(details.get("fieldErrors"), dict):
            named |= {f for f in details["fieldErrors"] if isinstance(f, str) and f}
        issues = details.get("issues") or details.get("errors")
    else:
        issues = details
    for issue in issues if isinstance(issues, list) else ():
        where = issue.get("path") or issue.get("loc") or issue.get("field") if isinstance(issue, dict) else None
        if isinstance(where, list):
            where = ".".join(str(part) for part in where if not isinstance(part, int) and part != "body")
        if isinstance(where, str) and where:
            named.add(where)
    return named


def covers(named: str, name: str) -> bool:
    """`named` is the field, an item of it (`tags[0]`), a part of it, or the object holding it."""
    return named == name or named.startswith((name + "[", name + ".")) or name.startswith(named + ".")


def names_only(body: Any, named: set[str], fields: set[str]) -> bool:
    """A 422 naming only fields in `fields`: it refuses those, not the rest of the request. One naming no
    field counts when its message names one of them."""
    if named:
        return all(any(covers(n, f) for f in fields) for n in named)
    message = str(body.get("message", "")) if isinstance(body, dict) else ""
    return any(f in message for f in fields)


# ---- what the requests hold -------------------------------------------------------------------------

def empty_text_fields(asked: Asked) -> set[str]:
    """The fields carrying "" where the spec sets only a maximum (a text field, a tag, a query parameter)."""
    body = asked.fields
    source: dict[str, Any] = body["source"] if isinstance(body.get("source"), dict) else {}
    found = {k for k in ("content", "namespace", "q", "transcript", "source_tool") if body.get(k) == ""}
    if source.get("tool") == "":
        found |= {"source.tool", "tool"}
    if isinstance(body.get("tags"), list) and "" in body["tags"]:
        found.add("tags")
    return found | {k for k, v in asked.query.items() if v == ""}


def wordless_q(asked: Asked) -> bool:
    """A search `q` holding text but no word character (`"!!"`, `" "`): as open as the empty q (O34)."""
    q = asked.fields.get("q")
    return asked.route == SEARCH and isinstance(q, str) and q != "" and not WORD.search(q)


def null_fields(asked: Asked) -> set[str]:
    """The body fields (and source fields) sent as null where the spec's type has no null."""
    body = asked.fields
    source: dict[str, Any] = body["source"] if isinstance(body.get("source"), dict) else {}
    found = {k for k, v in body.items() if v is None and k not in NULLABLE}
    return found | {f"source.{k}" for k, v in source.items() if v is None} | {k for k, v in source.items() if v is None}


def integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str) and value.count(".") == 1:
        whole, fraction = value.split(".")
        return whole.lstrip("-").isdigit() and whole.isascii() and set(fraction) <= {"0"}
    return False


def integral_float_fields(asked: Asked) -> set[str]:
    """The paging fields written as a float with no fraction (`70.0`), in the body or the query."""
    return {k for k in PAGING for v in (asked.fields.get(k), asked.query.get(k)) if integral_float(v)}


def integer_like(value: Any) -> bool:
    """A search `limit` O9 and O35 leave open: any integer (0, negative, over 100), also as `5.0` or `"5"`."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, str):
        return value.isascii() and value.lstrip("-").isdigit() and len(value) <= 10
    return integral_float(value)


def departs_only_where_open(body: Any) -> bool:
    """Does a search body depart from the description, and only where errata O9/O35 leave the answer open
    (any integer `limit`, also `5.0` or `"5"`; an unknown `mode` or `type`; `tags` as one string)? False
    when it departs nowhere, or anywhere else too."""
    if not isinstance(body, dict) or not isinstance(body.get("q"), str) or not set(body) <= SEARCH_FIELDS:
        return False
    tags, namespace, limit, mode, kind = (body.get(k) for k in ("tags", "namespace", "limit", "mode", "type"))
    if not (tags is None or isinstance(tags, str) or (isinstance(tags, list) and all(isinstance(t, str) for t in tags))):
        return False
    if not ((namespace is None or isinstance(namespace, str)) and (limit is None or integer_like(limit))
            and ("mode" not in body or isinstance(mode, str)) and (kind is None or isinstance(kind, str))):
        return False
    return (isinstance(tags, str) or (limit is not None and not (type(limit) is int and 1 <= limit <= omp.MAX_LIMIT))
            or ("mode" in body and mode not in omp.SEARCH_MODES) or (kind is not None and kind not in omp.TYPES))


def refused_fields(asked: Asked, pins: Readings) -> dict[str, set[str]]:
    """Valid data whose refusal a reading allows, by point: its empty texts (O34), its nulls on optional
    fields (O37, not under `null_optional=absent`), its integral-float paging (O35)."""
    return {"O34": empty_text_fields(asked), "O37": null_fields(asked) if pins.null_optional != "absent" else set(),
            "O35": integral_float_fields(asked)}


def refusal_names(point: str) -> Callable[[Asked, Reply], bool]:
    """A 422 to valid data naming only fields some reading lets a server refuse, and among them this
    point's (a 422 naming nothing counts when its message names one)."""
    def predicts(asked: Asked, answer: Reply) -> bool:
        return _refusal_fits(asked, answer, point, Readings())
    return predicts


def _refusal_fits(asked: Asked, answer: Reply, point: str, pins: Readings) -> bool:
    groups = refused_fields(asked, pins)
    every = set().union(*groups.values())
    if answer.status != 422 or not groups[point]:
        return False
    named = fields_named(answer.body)
    if not names_only(answer.body, named, every):
        return False
    return not named or any(covers(n, f) for n in named for f in groups[point])


def names_at_most(answer: Reply, *allowed: str) -> bool:
    """A refusal that names no field, or only these (a refusal of the rest of the request is not this one)."""
    named = fields_named(answer.body)
    return not named or all(any(covers(n, f) for f in allowed) for n in named)


def sane_page(answer: Reply) -> bool:
    from memconform.suites.omp.rules import sane_page as page

    return page(answer)


def served_sanely_to(answer: Reply, body: Any) -> bool:
    from memconform.suites.omp.rules import served_sanely_to as served

    return served(answer, body)


def only_in_query(asked: Asked) -> bool:
    return asked.negative == frozenset({"query"})


def ok(answer: Reply) -> bool:
    return 200 <= answer.status < 300


def semantic_refusable(pins: Readings) -> bool:
    return not pins.semantic_required


def not_rejecting(pins: Readings) -> bool:
    return pins.bad_params != "reject"


def utf16_over(asked: Asked) -> set[str]:
    """The text fields within their §2.1 maximum counted in code points but over it in UTF-16 units (O19)."""
    body = asked.fields
    limits = {"content": omp.MAX_CONTENT, "namespace": omp.MAX_NAMESPACE}
    over = {name for name, most in limits.items() if isinstance(body.get(name), str) and _units_differ(body[name], most)}
    tags = body.get("tags")
    if asked.route != SEARCH and isinstance(tags, list) and any(isinstance(t, str) and _units_differ(t, omp.MAX_TAG_LEN) for t in tags):
        over.add("tags")
    return over


def _units_differ(text: str, most: int) -> bool:
    return len(text) <= most < len(text.encode("utf-16-le")) // 2


def unsupported_embedding(asked: Asked) -> bool:
    """A write holding an `embedding` that is not an array of numbers (the class a server without
    embeddings may drop with the field)."""
    value = asked.fields.get("embedding", [])
    return asked.route in (CREATE, UPDATE, IMPORT) and not (value is None or isinstance(value, list) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in value))


def embedding_dropped(asked: Asked, answer: Reply) -> bool:
    """Accepted, and the memory served back holds no embedding: the server stored no such value."""
    body = answer.body if isinstance(answer.body, dict) else None
    return ok(answer) and body is not None and body.get("embedding") is None


# ---- the table ------------------------------------------------------------------------------------

SOURCE = {"tool": "t", "timestamp": "2010-11-09T13:49:11Z"}
MEMORY = {"content": "x", "type": "semantic", "source": SOURCE}
FUZZ_VALID = ("fuzz_valid_data_accepted",)
FUZZ_NEGATIVE = ("fuzz_negative_data_rejected", "fuzz_status_codes")
PAGE = {"memories": [], "total": 0, "limit": 20, "offset": 0}
SEARCH_PAGE = {"memories": [], "total": 0, "mode_used": "keyword"}
MEMORY_SERVED = {"id": "mem_0123456789abcdef", **MEMORY, "tags": [], "created_at": "2010-11-09T13:49:11Z",
                 "updated_at": "2010-11-09T13:49:11Z", "expires_at": None}

BASE_TABLE = ReadingTable([
    # O32: a method the route does not have (RFC 9110)
    *(Reading("O32", f"an unsupported method answered {status}",
              meets=lambda a: bool(a.described) and a.method.upper() != a.described.upper(),
              predicts=lambda a, r, s=status: r.status == s,  # type: ignore[misc]
              checks=("fuzz_status_codes", "fuzz_no_server_error"),
              example=(Asked("OPTIONS", "/v1/memories", described="GET"), reply(status)), wrong=reply(500))
      for status in (405, 501)),
    # O34, O37, O35: valid data refused with a 422 naming only where a reading allows the refusal
    Reading("O34", "empty text refused", meets=lambda a: a.valid_data and bool(empty_text_fields(a)),
            predicts=refusal_names("O34"), checks=FUZZ_VALID,
            example=(Asked("POST", "/v1/memories", body={**MEMORY, "content": ""}), reply(422, envelope("validation_error", "content"))),
            wrong=reply(422, envelope("validation_error", "type"))),
    Reading("O34", "a search q without word characters refused",
            meets=lambda a: a.valid_data and wordless_q(a),
            predicts=lambda a, r: error_envelope(r) and names_at_most(r, "q"),
            checks=(*FUZZ_VALID, "model"),
            example=(Asked("POST", "/v1/memories/search", body={"q": "!!"}), reply(422, envelope("validation_error", "q"))),
            wrong=reply(422, {"detail": "q has no words"})),
    Reading("O37", "null on an optional field: refused", meets=lambda a: a.valid_data and bool(null_fields(a)),
            predicts=refusal_names("O37"), accepted=lambda pins: pins.null_optional != "absent", checks=FUZZ_VALID,
            example=(Asked("POST", "/v1/memories", body={**MEMORY, "metadata": None}), reply(422, envelope("validation_error", "metadata"))),
            wrong=reply(422, envelope("validation_error", "content"))),
    Reading("O35", "an integral float limit or offset refused", meets=lambda a: a.valid_data and bool(integral_float_fields(a)),
            predicts=refusal_names("O35"), checks=FUZZ_VALID,
            example=(Asked("GET", "/v1/memories", query={"limit": "70.0"}), reply(422, envelope("validation_error", "limit"))),
            wrong=reply(500, envelope("internal_error"))),
    # O19: "chars" counted as UTF-16 code units (JavaScript's length): astral text at the limit refused
    # (accepts_values_at_limits takes any 4xx as this reading: its control is a status no reading allows)
    Reading("O19", "chars are UTF-16 code units",
            meets=lambda a: a.valid_data and bool(utf16_over(a)),
            predicts=lambda a, r: r.status == 422 and error_envelope(r) and names_at_most(r, *utf16_over(a)),
            accepted=lambda pins: pins.char_unit != "code-points", checks=(*FUZZ_VALID, "accepts_values_at_limits"),
            example=(Asked("POST", "/v1/memories", body={**MEMORY, "content": "\U0001F600" * 5001}),
                     reply(422, envelope("validation_error", "content"))),
            wrong=reply(422, envelope("validation_error", "type")),
            controls=(("accepts_values_at_limits", reply(500, envelope("internal_error"))),)),
    Reading("O19", "chars are code points", meets=lambda a: a.valid_data and bool(utf16_over(a)),
            predicts=lambda a, r: r.status == 201 and isinstance(r.body, dict) and isinstance(r.body.get("id"), str),
            checks=("accepts_values_at_limits",),
            example=(Asked("POST", "/v1/memories", body={**MEMORY, "content": "\U0001F600" * 5001}), reply(201, MEMORY_SERVED)),
            wrong=reply(500, envelope("internal_error"))),
    # O13: semantic and hybrid search optional at OMP-Core
    *(Reading("O13", f"{mode} not offered: refused with a 4xx",
              meets=lambda a, m=mode: a.route == SEARCH and a.fields.get("mode") == m,  # type: ignore[misc]
              predicts=lambda a, r: error_envelope(r) and names_at_most(r, "mode"),
              accepted=semantic_refusable, checks=(*FUZZ_VALID, "model"),
              example=(Asked("POST", "/v1/memories/search", body={"q": "coffee", "mode": mode}),
                       reply(422, envelope("validation_error", "mode"))),
              wrong=reply(422, {"detail": [{"loc": ["body", "mode"], "msg": "not supported"}]}))
      for mode in ("semantic", "hybrid")),
    # O30: empty query parameters
    Reading("O30", "an empty conflict= read as absent",
            meets=lambda a: a.route == IMPORT and a.query.get("conflict") == "" and only_in_query(a),
            predicts=lambda a, r: ok(r), checks=FUZZ_NEGATIVE,
            example=(Asked("POST", "/v1/import", query={"conflict": ""}, negative=frozenset({"query"})),
                     reply(200, {"imported": 1, "skipped": 0, "errors": []})), wrong=reply(500, envelope("internal_error"))),
    Reading("O30", "an empty query parameter served as a sane page",
            meets=lambda a: a.route == LIST and only_in_query(a) and any(v in ("", [""]) for v in a.query.values()),
            predicts=lambda a, r: ok(r) and sane_page(r), checks=FUZZ_NEGATIVE,
            example=(Asked("GET", "/v1/memories", query={"type": ""}, negative=frozenset({"query"})), reply(200, PAGE)),
            wrong=reply(200, {"memories": [{"no": "memory"}]})),
    # O9: bad list and search parameters served sanely
    Reading("O9", "a bad query parameter served as a sane page",
            meets=lambda a: a.route == LIST and only_in_query(a) and not any(v in ("", [""]) for v in a.query.values()),
            predicts=lambda a, r: ok(r) and sane_page(r), accepted=not_rejecting, checks=FUZZ_NEGATIVE,
            example=(Asked("GET", "/v1/memories", query={"limit": "abc"}, negative=frozenset({"query"})), reply(200, PAGE)),
            wrong=reply(200, {"memories": [MEMORY_SERVED] * 101})),
    Reading("O9", "a bad search parameter served as a sane page",
            meets=lambda a: a.route == SEARCH and departs_only_where_open(a.body),
            predicts=lambda a, r: served_sanely_to(r, a.body), accepted=not_rejecting, checks=FUZZ_NEGATIVE,
            example=(Asked("POST", "/v1/memories/search", body={"q": "x", "limit": 0}, negative=frozenset({"body"})),
                     reply(200, SEARCH_PAGE)), wrong=reply(500, envelope("internal_error"))),
    # O40: a body over the server's own limit
    Reading("O40", "a body over the server's limit refused with the §4 envelope",
            meets=lambda a: a.route == IMPORT and a.size > BODY_LIMIT_FROM,
            predicts=lambda a, r: error_envelope(r),
            checks=("own_export_imported_back_large",),
            example=(Asked("POST", "/v1/import", size=5 << 20), reply(413, envelope("payload_too_large"))),
            wrong=reply(413, {"detail": "Request Entity Too Large"})),
    # O38: a field a server without that feature drops
    Reading("O38", "embedding not supported: the field dropped",
            meets=unsupported_embedding, predicts=embedding_dropped,
            checks=("domain_create_every_class", "domain_update_every_class", "domain_import_every_class"),
            example=(Asked("POST", "/v1/memories", body={**MEMORY, "embedding": ["a", "b"]}), reply(201, MEMORY_SERVED)),
            wrong=reply(201, {**MEMORY_SERVED, "embedding": ["a", "b"]})),
])  # with the rows of example_readings.py, the one table is suites/omp/table.py's TABLE


def pins(ctx: Any) -> Readings:
    """The run's pins: its options, and whether health declares OMP-Search (semantic search required)."""
    from memconform.core.runner import claimed_levels

    # a bare context (a unit test's, a document's) has no target to ask: the Core pins
    claimed = (claimed_levels(ctx) if getattr(ctx, "suite", None) is not None else None) or set()
    return Readings.from_options(ctx.option, "search" if "search" in claimed else "core")
