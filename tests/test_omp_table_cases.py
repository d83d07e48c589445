"""The cases of OMP's open points beyond the one example and one control each row of the table of readings
holds (suites/omp/readings.py, walked by tests/test_omp_one_table.py): options pinning a reading away, the
fuzzer's many forms of one reading, and answers fitting none that the row's control does not show. Each check's
own prediction is called with a small recording context and hand-made answers (no server).

The last test scans suites/omp for the points observed and fails when one is not a point of the table.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from memconform.core.readings import Observation, observe
from memconform.kit import domain
from memconform.suites.omp import ask, dataset, domain_data, importing
from memconform.suites.omp import format as omp
from memconform.suites.omp import model as m
from memconform.suites.omp.checks import domain_writes, import_paths, search
from memconform.suites.omp.fuzzing import accepted
from memconform.suites.omp.options import OPTIONS
from memconform.targets.base import Reply

SUITE_DIR = Path(omp.__file__).resolve().parent.parent
STAMP = "2026-06-29T12:00:00Z"


class Ctx:
    """What a check's observation needs of its context: the options (the suite's defaults unless given),
    the readings recorded, the notes."""

    def __init__(self, **options: str) -> None:
        self.options = {spec.name: spec.default for spec in OPTIONS} | options
        self.seen: list[tuple[str, str]] = []
        self.notes: list[str] = []

    def option(self, name: str) -> str:
        return self.options[name]

    def state(self, kind: type) -> Any:
        """A run state kept by type, as the runner's context keeps it."""
        return self.__dict__.setdefault("_states", {}).setdefault(kind, kind())

    def reading(self, point: str, seen: str) -> None:
        self.seen.append((point, seen))

    def note(self, line: str) -> None:
        self.notes.append(line)

    def observe(self, point: str, predictions: Any, answer: Any = None, **how: Any) -> Observation:
        return observe(self, point, predictions, answer, **how)


def reply(status: int, body: Any = None) -> Reply:
    return Reply(status=status, body=body, raw=b"" if body is None else json.dumps(body).encode(),
                 content_type="" if body is None else "application/json")


def doc(i: int, **fields: Any) -> dict[str, Any]:
    """A stored memory as a server serves it: distinct created_at, one word every memory holds."""
    base = {"id": f"mem_{i:016d}", "content": f"memory {i} common", "type": omp.TYPES[i % 3],
            "source": {"tool": "claude", "timestamp": STAMP}, "tags": ["all"] + (["even"] if i % 2 == 0 else []),
            "created_at": f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z", "updated_at": f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z",
            "expires_at": None, "metadata": {}}
    return base | fields


def page(docs: list[dict[str, Any]], **said: Any) -> Reply:
    return reply(200, {"memories": docs, **said})


def fits_none(ctx: Ctx, seen: Observation, point: str, *readings: str) -> None:
    """Nothing recorded for the point, and a failure naming every reading given."""
    assert seen.failure is not None and not [s for s in ctx.seen if s[0] == point], ctx.seen
    named = str(seen.failure.expected)
    assert all(r in named for r in readings), named


def recorded(ctx: Ctx, seen: Observation, point: str, reading: str) -> None:
    assert seen.failure is None and (point, reading) in ctx.seen, (ctx.seen, seen.failure)


# ---- O2: keyword matching, search tags, search default limit, search total -----------------------------

KEYWORD_DOCS = {"phrase": doc(1, content="kw beta then alpha beta"), "apart": doc(2, content="kw beta far from alpha"),
                "one": doc(3, content="kw only alpha"), "none": doc(4, content="kw only gamma")}
KEYWORD_QUERY = {"q": "alpha beta", "mode": "keyword", "limit": 100}


def test_o2_keyword_match_pinned_other_reading_fails() -> None:
    ctx = Ctx(keyword_match="all-words")
    seen = search.observe_keyword_match(ctx, KEYWORD_DOCS, KEYWORD_QUERY, {"phrase"})
    assert seen.failure is not None and ("O2", "keyword match: substring") in ctx.seen


# ---- O7: one invalid memory in an import ----------------------------------------------------------

@pytest.mark.parametrize(("answer", "stored", "reading"), [
    (reply(200, {"imported": 2, "skipped": 0, "errors": [{"id": "mem_bad0000000000000"}]}), 2, importing.REPORTED),
    (reply(200, {"imported": 1, "skipped": 0, "errors": [{"index": 1}]}), 1, None),  # the rest dropped
])
def test_o7_invalid_import_item(answer: Reply, stored: int, reading: str | None) -> None:
    ctx = Ctx()
    seen = ctx.observe("O7", import_paths.o7_predictions(answer, 1, "mem_bad0000000000000", stored, 2), title="O7")
    if reading is None:
        fits_none(ctx, seen, "O7", importing.REPORTED, importing.REFUSED)
    else:
        recorded(ctx, seen, "O7", reading)


# ---- O8: namespace null on update, judged with the read that follows ---------------------------------

NS_DOC = doc(1, namespace="project:a")
NS_REQUEST = m.Request("update", id=NS_DOC["id"], body={"namespace": None})
LATER = {"updated_at": "2026-02-01T00:00:00Z"}


def ns_observe(ctx: Ctx, pair: tuple[Reply, Reply]) -> Observation:
    model = m.Model.seeded([NS_DOC])
    return ask.observe(ctx, "O8", NS_REQUEST, pair, seeded=model.reread, read_back=True, title="O8", path="$.namespace")


@pytest.mark.parametrize("pair", [
    (reply(200, NS_DOC | LATER), reply(200, NS_DOC | LATER)),  # accepted, namespace kept
], ids=["accepted-kept"])
def test_o8_namespace_null_fitting_none_fails(pair: tuple[Reply, Reply]) -> None:
    ctx = Ctx()
    fits_none(ctx, ns_observe(ctx, pair), "O8", "namespace null clears it", "namespace null refused, nothing changed")


# ---- O9: limit=101, bad list parameters, and the fuzzer's bad query parameters --------------------------

HUNDRED_AND_ONE = [doc(i) for i in range(101)]
NEWEST = sorted(HUNDRED_AND_ONE, key=lambda d: d["created_at"], reverse=True)
LIMIT_101 = m.Request.list({"tags": "all", "limit": "101"})


def limit_observe(ctx: Ctx, answer: Reply) -> Observation:
    return ask.observe(ctx, "O9", LIMIT_101, answer, seeded=lambda r: m.Model.seeded(HUNDRED_AND_ONE, r),
                       pins=("limit_over_max",), title="O9")


@pytest.mark.parametrize("answer", [reply(500, {"error": "internal_error"})], ids=["server-error"])
def test_o9_limit_101_fitting_none_fails(answer: Reply) -> None:
    ctx = Ctx()
    fits_none(ctx, limit_observe(ctx, answer), "O9", "limit=101 clamped", "limit=101 refused")


def test_o9_limit_101_pinned_to_reject_fails_the_clamp() -> None:
    ctx = Ctx(limit_over_max="reject")
    seen = limit_observe(ctx, page(NEWEST[:100], total=101, limit=100, offset=0))
    assert seen.failure is not None and ("O9", "limit=101 clamped") in ctx.seen
    assert seen.failure.readings == ("limit_over_max=reject",)


@dataclass
class Operation:
    path: str
    method: str


@dataclass
class QueryOnly:
    """schemathesis's generation metadata, as far as accepted.py reads it: negative data in the query only."""

    components: dict[Any, Any] = field(default_factory=dict)

    def is_negative_at(self, location: Any) -> bool:
        return location in self.components


def query_negative() -> QueryOnly:
    from schemathesis.generation.meta import ParameterLocation

    return QueryOnly({ParameterLocation.QUERY: True})


@dataclass
class Case:
    method: str
    operation: Operation
    body: Any = None
    query: dict[str, Any] | None = None
    meta: Any = None


@dataclass
class Response:
    status_code: int
    content: bytes = b""


LIST_OP = Operation("/v1/memories", "GET")
SANE = b'{"memories": [], "total": 0, "limit": 20, "offset": 0}'


def test_o9_fuzzer_bad_query_parameter_served_sanely_is_recorded() -> None:
    ctx = Ctx()
    case = Case("GET", LIST_OP, query={"limit": "abc"}, meta=query_negative())
    assert accepted.accepted_reading(ctx, case, Response(200, SANE)) == ("O9", "a bad query parameter served as a sane page")
    assert accepted.excused(ctx, type("Exchange", (), {"case": case, "response": Response(200, SANE)})())
    assert ("O9", "a bad query parameter served as a sane page") in ctx.seen


def test_o9_fuzzer_fitting_none_is_blamed() -> None:
    ctx = Ctx()
    case = Case("GET", LIST_OP, query={"limit": "abc"}, meta=query_negative())
    assert accepted.accepted_reading(ctx, case, Response(200, b'{"memories": [{"junk": 1}]}')) is None
    assert accepted.accepted_reading(ctx, case, Response(500, b"{}")) is None
    assert accepted.accepted_reading(Ctx(bad_params="reject"), case, Response(200, SANE)) is None  # pinned


SEARCH_OP = Operation("/v1/memories/search", "POST")
SEARCH_PAGE = b'{"memories": [], "total": 0, "mode_used": "keyword"}'


@pytest.mark.parametrize("body", [{"q": "x", "limit": 0}, {"q": "x", "limit": -3}, {"q": "x", "limit": 101},
                                  {"q": "x", "limit": "5"}, {"q": "x", "limit": 5.0}, {"q": "x", "mode": "fuzzy"},
                                  {"q": "x", "type": "not-a-type"}, {"q": "x", "tags": "ui"},
                                  {"q": "x", "limit": 0, "mode": "fuzzy", "tags": "ui"}])
def test_o9_fuzzer_bad_search_parameter_served_sanely_is_recorded(body: dict[str, Any]) -> None:
    ctx = Ctx()
    case = Case("POST", SEARCH_OP, body=body)
    assert accepted.excused(ctx, type("Exchange", (), {"case": case, "response": Response(200, SEARCH_PAGE)})())
    assert ("O9", "a bad search parameter served as a sane page") in ctx.seen


@pytest.mark.parametrize("body", [{"q": 5, "limit": 0}, {"q": "x", "limit": "abc"}, {"q": "x", "limit": 5.5},
                                  {"q": "x", "limit": True}, {"q": "x", "tags": [1]}, {"q": "x", "mode": None},
                                  {"q": "x", "limit": 0, "extra": 1}, {"q": "x", "limit": 10}])
def test_o9_fuzzer_bad_search_parameter_fitting_none_is_blamed(body: dict[str, Any]) -> None:
    """A departure no errata point leaves open (or none at all) is not excused by a sane page."""
    case = Case("POST", SEARCH_OP, body=body)
    assert accepted.accepted_reading(Ctx(), case, Response(200, SEARCH_PAGE)) is None


def test_o9_fuzzer_bad_search_parameter_needs_a_sane_page() -> None:
    case = Case("POST", SEARCH_OP, body={"q": "x", "limit": 0})
    assert accepted.accepted_reading(Ctx(), case, Response(200, b'{"memories": [{"junk": 1}], "mode_used": "keyword"}')) is None
    assert accepted.accepted_reading(Ctx(), case, Response(200, b'{"memories": [], "mode_used": "fuzzy"}')) is None
    assert accepted.accepted_reading(Ctx(bad_params="reject"), case, Response(200, SEARCH_PAGE)) is None  # pinned
    holding = {"id": "mem_" + "a" * 16, "content": "c", "type": "semantic", "tags": ["other"]}
    served_other = json.dumps({"memories": [holding], "mode_used": "keyword"}).encode()
    tags_string = Case("POST", SEARCH_OP, body={"q": "x", "tags": "ui"})
    assert accepted.accepted_reading(Ctx(), tags_string, Response(200, served_other)) is None  # "ui" read as a tag


@pytest.mark.parametrize("case", [Case("POST", SEARCH_OP, body={"q": "x", "limit": 70.0}),
                                  Case("GET", LIST_OP, query={"limit": 70.0}),
                                  Case("GET", LIST_OP, query={"offset": "3.0"})])
def test_o35_fuzzer_integral_float_paging_refused_naming_the_field(case: Case) -> None:
    field_name = "limit" if "limit" in {**(case.body or {}), **(case.query or {})} else "offset"
    named = Response(422, json.dumps({"error": "validation_error", "details": {"field": field_name}}).encode())
    assert accepted.accepted_reading(Ctx(), case, named) == ("O35", "an integral float limit or offset refused")
    other = Response(422, b'{"error": "validation_error", "details": {"field": "q"}}')
    assert accepted.accepted_reading(Ctx(), case, other) is None  # refusing something else of valid data


# ---- O26: created_at on import -------------------------------------------------------------------------

def test_o26_import_created_at_fitting_neither_is_a_note() -> None:
    ctx = Ctx()
    seen = dataset.observe_created_at(ctx, 40, 101)
    fits_none(ctx, seen, "O26", "import keeps created_at", "import stamps created_at")
    assert ctx.notes  # seeding judges nothing: the note says what was seen


# ---- O30: empty and repeated list parameters (the model's readings), and the fuzzer's -------------------

IMPORT_OP = Operation("/v1/import", "POST")


def test_o30_fuzzer_empty_parameters() -> None:
    ctx = Ctx()
    listing_case = Case("GET", LIST_OP, query={"type": ""}, meta=query_negative())
    assert accepted.accepted_reading(ctx, listing_case, Response(200, SANE)) == ("O30", "an empty query parameter served as a sane page")
    import_case = Case("POST", IMPORT_OP, query={"conflict": ""}, meta=query_negative())
    assert accepted.accepted_reading(ctx, import_case, Response(200, b'{"imported": 0}')) == ("O30", "an empty conflict= read as absent")
    assert accepted.accepted_reading(ctx, import_case, Response(500, b"{}")) is None  # fits none: blamed
    assert accepted.accepted_reading(ctx, listing_case, Response(200, b"[]")) is None


# ---- O32: a method a route does not have ----------------------------------------------------------------

@pytest.mark.parametrize(("status", "reading"), [(405, "an unsupported method answered 405"),
                                                 (501, "an unsupported method answered 501"), (500, None), (200, None)])
def test_o32_unsupported_method(status: int, reading: str | None) -> None:
    ctx = Ctx()
    case = Case("OPTIONS", LIST_OP)
    got = accepted.accepted_reading(ctx, case, Response(status, b""))
    assert got == (None if reading is None else ("O32", reading))


# ---- O34: empty text -------------------------------------------------------------------------------------

CREATE_OP = Operation("/v1/memories", "POST")


def test_o34_empty_text_refused_naming_the_field() -> None:
    ctx = Ctx()
    case = Case("POST", CREATE_OP, body={"content": "", "type": "semantic", "source": {"tool": "t", "timestamp": STAMP}})
    named = Response(422, b'{"error": "validation_error", "details": {"field": "content"}}')
    assert accepted.accepted_reading(ctx, case, named) == ("O34", "empty text refused")
    stored = Response(201, b"{}")  # the other reading (stored): not a failure to excuse, so nothing to record
    assert accepted.accepted_reading(ctx, case, stored) is None


def test_o34_a_refusal_naming_nothing_fits_no_reading() -> None:
    ctx = Ctx()
    case = Case("POST", CREATE_OP, body={"content": "", "type": "semantic", "source": {"tool": "t", "timestamp": STAMP}})
    assert accepted.accepted_reading(ctx, case, Response(422, b'{"error": "validation_error"}')) is None
    assert accepted.accepted_reading(ctx, case, Response(500, b'{"error": "internal_error"}')) is None


# ---- O36, O37, O52: source.timestamp left out; null for an optional field; UTC as +00:00 ------------------------------------

def value_class(key: str) -> domain.ValueClass:
    field_id, class_id = key.rsplit(":", 1)
    return domain.required("omp").field(field_id).cls(class_id)


@pytest.mark.parametrize(("key", "point"), [("memory.source.timestamp:absent", "O36"), ("memory.namespace:null", "O37"),
                                            ("memory.metadata:null", "O37"), ("memory.source.timestamp:utc_offset", "O52"),
                                            ("memory.expires_at:future_offset", "O52"), ("memory.created_at:utc_offset", "O52"),
                                            ("memory.source.timestamp:non_utc", "O53"), ("memory.expires_at:no_zone", "O53"),
                                            ("memory.created_at:date_only", "O53"), ("memory.updated_at:lowercase", "O53")])
def test_o36_o37_o52_o53_open_domain_classes(key: str, point: str) -> None:
    vc = value_class(key)
    found = domain_data.open_point(vc)
    assert found is not None and found.point == point
    for stored, refused, reading in ((True, False, found.stored), (False, True, found.refused)):
        ctx = Ctx()
        seen = domain_data.observe_open(ctx, vc, stored, refused, reply(201 if stored else 422))
        assert seen is not None
        recorded(ctx, seen, point, reading)
    ctx = Ctx()
    seen = domain_data.observe_open(ctx, vc, False, False, reply(302))
    assert seen is not None
    fits_none(ctx, seen, point, found.stored, found.refused)


def test_o37_fuzzer_null_refused_naming_the_field() -> None:
    case = Case("POST", CREATE_OP, body={"content": "x", "type": "semantic", "namespace": None,
                                         "source": {"tool": "t", "timestamp": STAMP}})
    named = Response(422, b'{"error": "validation_error", "details": {"field": "namespace"}}')
    assert accepted.accepted_reading(Ctx(), case, named) == ("O37", "null on an optional field: refused")
    assert accepted.accepted_reading(Ctx(null_optional="absent"), case, named) is None  # pinned: blamed
    assert accepted.accepted_reading(Ctx(), case, Response(422, b'{"error": "validation_error"}')) is None


# ---- every observed point has a test here -----------------------------------------------------------------

POINT = re.compile(r"O\d+")


# ---- the points read from OMP's table of readings (suites/omp/readings.py; tests/test_omp_one_table.py) ----

def test_o13_semantic_and_hybrid_refused_at_core_and_blamed_at_search() -> None:
    from memconform.suites.omp import readings as table
    from memconform.suites.omp.table import TABLE

    for mode in ("semantic", "hybrid"):
        body = {"q": "coffee beans", "mode": mode}
        refused = reply(422, {"error": "validation_error", "message": "not offered", "details": {"field": "mode"}})
        core = m.Model.seeded([], m.Readings(), complete=False)
        assert core.accepts(m.Request("search", body=body), refused) is None
        assert f"{mode} not offered: refused with a 4xx" in core.fits(m.Request("search", body=body), refused)
        bare = reply(422, {"detail": "not offered"})
        assert core.accepts(m.Request("search", body=body), bare) is not None  # no envelope: fits none
        search_level = m.Model.seeded([], m.Readings(semantic_required=True), complete=False)
        assert search_level.accepts(m.Request("search", body=body), refused) is not None
        ctx = Ctx()
        assert TABLE.observe(ctx, table.Asked(*table.SEARCH, body=body), refused, m.Readings())
        assert ctx.seen == [("O13", f"{mode} not offered: refused with a 4xx")]


def test_o38_a_valid_embedding_served_without_it_is_no_reading() -> None:
    body = {"content": "x", "type": "semantic", "source": {"tool": "t", "timestamp": STAMP}, "embedding": [0.5]}
    kept = Ctx()
    assert not domain_writes.field_dropped(kept, ("POST", "/v1/memories"), body, reply(201, doc(1)))
    assert kept.seen == []


def test_o40_a_bare_page_fails_naming_the_size_and_a_server_error_fails() -> None:
    from memconform.suites.omp.checks import large_roundtrip

    run = large_roundtrip.Large(word="w")
    run.mine = [{"content": "x" * (2 << 20)}]
    bare = Ctx()
    page_413 = Reply(status=413, body=None, raw=b"<html>413</html>", content_type="text/html")
    assert [f.title for f in large_roundtrip.refused(bare, page_413, run, "overwrite")] == [
        "the target's own export (2.1 MB) was refused when imported back (conflict=overwrite)"]
    assert bare.seen == []
    server_error = reply(500, {"error": "internal_error", "message": "too big"})
    assert list(large_roundtrip.refused(Ctx(), server_error, run, "overwrite"))


def points_observed() -> set[str]:
    """Every errata point id the OMP suite names as a string of its own (ctx.observe, ask.observe,
    domain_data.OpenPoint, the fuzzer's accepted readings)."""
    found: set[str] = set()
    for path in SUITE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and POINT.fullmatch(node.value):
                found.add(node.value)
    return found


def test_every_point_observed_in_the_suite_is_a_point_of_the_table() -> None:

    from memconform.suites.omp.table import TABLE

    observed = points_observed()
    assert {"O2", "O7", "O8", "O9", "O30"} <= observed, observed  # the scan sees the suite
    missing = sorted(observed - set(TABLE.points()), key=lambda p: int(p[1:]))
    assert not missing, f"points observed in suites/omp that OMP's table of readings (suites/omp/readings.py) lacks: {missing}"
