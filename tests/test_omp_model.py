"""The OMP model (suites/omp/model.py) alone: unit properties of its answer sets; and the reference
server's answers, over random request sequences, always in the model's set (the reference is called
in process, through its own dispatch, without HTTP)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.suites.omp import format as omp
from memconform.suites.omp.model import Model, Readings, Request, list_readings
from memconform.suites.omp.reference.parts import TOOL_A, Req
from memconform.suites.omp.reference.serve import ServerSpec

STAMP = "2026-06-29T12:00:00Z"


@dataclass
class Answer:
    status: int
    body: Any


def doc(i: int, **fields: Any) -> dict[str, Any]:
    """A stored memory as a server serves it: distinct created_at, updated_at in reverse order."""
    base = {"id": f"mem_{i:016d}", "content": f"memory {i} word{i % 3}", "type": omp.TYPES[i % 3],
            "source": {"tool": "claude" if i % 2 else "cursor", "timestamp": STAMP}, "tags": ["all"] + (["even"] if i % 2 == 0 else []),
            "created_at": f"2026-01-01T00:{i:02d}:00Z", "updated_at": f"2026-01-02T00:{59 - i:02d}:00Z", "expires_at": None,
            "metadata": {}}
    base.update(fields)
    return base


def page(model: Model, params: dict[str, str]) -> list[dict[str, Any]]:
    """The one exact page the model predicts (unique stamps), computed from its reading."""
    (reading,) = [r for r in list_readings(params.items(), model.readings) if r.filters is not None and r.exact]
    from memconform.suites.omp.model import ordered

    assert reading.filters is not None
    matches = ordered([d for d in model.memories() if reading.filters.fit(d)], reading.sort)
    return matches[reading.offset:reading.offset + reading.limit]


def list_answer(memories: list[dict[str, Any]], total: int, limit: int = 20, offset: int = 0) -> Answer:
    return Answer(200, {"memories": memories, "total": total, "limit": limit, "offset": offset})


MODEL = Model.seeded([doc(i) for i in range(30)])
PARAMS = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(omp.TYPES), "tool": st.sampled_from(["claude", "cursor"]), "tags": st.sampled_from(["all", "even", "all,even"]),
    "sort": st.sampled_from(omp.SORTS), "limit": st.integers(1, 100).map(str), "offset": st.integers(0, 40).map(str)})


@given(PARAMS)
def test_a_filtered_list_is_a_subset_of_the_unfiltered_one(params: dict[str, str]) -> None:
    unfiltered = {k: v for k, v in params.items() if k not in ("type", "tool", "tags")}
    whole = page(MODEL, {**unfiltered, "limit": "100", "offset": "0"})
    assert {d["id"] for d in page(MODEL, {**params, "limit": "100", "offset": "0"})} <= {d["id"] for d in whole}


@given(PARAMS, st.integers(1, 10))
def test_pages_concatenated_are_the_unpaged_list(params: dict[str, str], size: int) -> None:
    base = {k: v for k, v in params.items() if k not in ("limit", "offset")}
    whole = page(MODEL, {**base, "limit": "100"})
    pieces = [d for start in range(0, 40, size) for d in page(MODEL, {**base, "limit": str(size), "offset": str(start)})]
    assert pieces == whole
    total = len(whole)
    assert MODEL.accepts(Request.list({**base, "limit": "100"}), list_answer(whole, total, 100)) is None


def test_the_right_page_is_accepted_and_each_wrong_one_named() -> None:
    wanted = page(MODEL, {"tags": "even", "sort": "created_at_asc", "limit": "5", "offset": "2"})
    request = Request.list({"tags": "even", "sort": "created_at_asc", "limit": "5", "offset": "2"})
    assert MODEL.accepts(request, list_answer(wanted, 15, 5, 2)) is None
    wrong = {
        "total does not count": list_answer(wanted, 5, 5, 2),
        "not the page of the matching memories": list_answer(page(MODEL, {"tags": "even", "sort": "created_at_asc", "limit": "5"}), 15, 5, 2),
        "outside the filters": list_answer([doc(1), *wanted[1:]], 15, 5, 2),
        "more memories than the limit": list_answer(page(MODEL, {"tags": "even", "sort": "created_at_asc", "limit": "6", "offset": "2"}), 15, 5, 2),
        "not in created_at_asc order": list_answer(wanted[::-1], 15, 5, 2),
        "offset does not echo": list_answer(wanted, 15, 5, 0),
    }
    for title, answer in wrong.items():
        reason = MODEL.accepts(request, answer)
        assert reason is not None and title in reason.title, (title, reason)


def test_ties_in_sort_stamps_may_come_in_any_order() -> None:
    model = Model.seeded([doc(i, created_at=STAMP) for i in range(4)])
    served = model.memories()
    for order in (served, served[::-1]):
        assert model.accepts(Request.list({"limit": "100"}), list_answer(order, 4, 100)) is None


def test_pinned_readings_narrow_the_set() -> None:
    open_ = Model.seeded([doc(i) for i in range(3)])
    pinned = Model.seeded([doc(i) for i in range(3)], Readings(limit_over_max="reject", bad_params="reject"))
    clamped = list_answer(page(open_, {"limit": "100"}), 3, 100)
    for params in ({"limit": "101"}, {"limit": "abc"}, {"type": ""}, {"sort": "nope"}):
        request = Request.list(params)
        assert len(pinned.expect(request)) < len(open_.expect(request))
        assert set(pinned.expect(request)) <= set(open_.expect(request))
    assert open_.accepts(Request.list({"limit": "101"}), clamped) is None
    reason = pinned.accepts(Request.list({"limit": "101"}), clamped)
    assert reason is not None and "limit=101 refused" in reason.expected


def test_keyword_readings_and_their_pin() -> None:
    docs = [doc(0, content="alpha beta"), doc(1, content="beta then alpha"), doc(2, content="alpha only"), doc(3, content="nothing")]
    request = Request("search", body={"q": "alpha beta", "mode": "keyword", "limit": 100})

    def answer(*idx: int) -> Answer:
        return Answer(200, {"memories": [docs[i] for i in idx], "total": len(idx), "mode_used": "keyword"})

    lax = Model.seeded(docs)
    assert lax.fits(request, answer(0, 1)) == ["keyword match: all-words"]
    assert lax.fits(request, answer(0)) == ["keyword match: substring"]
    assert lax.fits(request, answer(2, 1, 0)) == ["keyword match: any-word"]  # any order: ranking is open
    assert lax.accepts(request, answer(0, 3)) is not None
    strict = Model.seeded(docs, Readings(keyword_match="all-words"))
    assert strict.accepts(request, answer(0)) is not None and strict.accepts(request, answer(1, 0)) is None


def test_an_open_world_model_judges_only_what_it_knows() -> None:
    model = Model.seeded([doc(i) for i in range(3)], complete=False)
    stranger = doc(40, tags=["all"])
    answer = list_answer([stranger, *model.memories()], 99, 100)
    assert model.accepts(Request.list({"limit": "100", "sort": "created_at_asc"}), answer) is not None  # order still judged
    ordered_answer = list_answer(sorted([stranger, *model.memories()], key=lambda d: d["created_at"], reverse=True), 99, 100)
    assert model.accepts(Request.list({"limit": "100"}), ordered_answer) is None
    reason = model.accepts(Request.list({"limit": "100", "type": "episodic"}), ordered_answer)
    assert reason is not None and "outside the filters" in reason.title


def test_writes_advance_the_state_and_bad_writes_are_refused() -> None:
    model = Model()
    body = {"content": "x", "type": "semantic", "source": {"tool": "claude", "timestamp": STAMP}, "tags": ["a"]}
    made = doc(1, content="x", type="semantic", tags=["a"], source=body["source"])
    assert model.step(Request("create", body=body), Answer(201, made)) is None
    assert model.accepts(Request("get", id=made["id"]), Answer(200, made)) is None
    assert model.accepts(Request("get", id=made["id"]), Answer(200, {**made, "content": "y"})) is not None
    bad = {**body, "content": "x" * (omp.MAX_CONTENT + 1)}
    assert model.accepts(Request("create", body=bad), Answer(201, made)) is not None
    assert model.accepts(Request("create", body=bad), Answer(422, {"error": "validation_error"})) is None
    assert model.step(Request("delete", id=made["id"]), Answer(204, None)) is None
    assert model.accepts(Request("get", id=made["id"]), Answer(404, {"error": "memory_not_found"})) is None


def test_each_reading_of_an_invalid_import_item_is_accepted_and_silence_is_not() -> None:
    model = Model.seeded([doc(1)])
    good = {"content": "fine", "type": "semantic", "source": {"tool": "claude", "timestamp": STAMP}, "tags": [],
            "created_at": STAMP, "updated_at": STAMP}
    bad = {**good, "content": "z" * (omp.MAX_CONTENT + 1)}
    request = Request("import", body={"omp_version": "0.1", "memories": [good, bad, good]}, params=(("conflict", "skip"),))
    reported = Answer(200, {"imported": 2, "skipped": 0, "errors": [{"index": 1, "error": "validation_error"}]})
    assert model.fits(request, reported) == ["invalid memory reported, the rest imported"]
    assert model.fits(request, Answer(422, {"error": "validation_error"})) == ["whole file refused"]
    reason = model.accepts(request, Answer(200, {"imported": 2, "skipped": 0, "errors": []}))
    assert reason is not None and set(reason.expected) == {"whole file refused", "invalid memory reported, the rest imported"}
    assert model.accepts(request, Answer(500, {"error": "internal_error"})) is not None
    narrowed = Model.seeded([doc(1)], Readings(invalid_import="refused"))
    assert narrowed.accepts(request, reported) is not None


def test_namespace_null_readings_and_an_unknown_strategy() -> None:
    model = Model.seeded([doc(1, namespace="project:a")])
    request = Request("update", id=doc(1)["id"], body={"namespace": None})
    cleared = Answer(200, {**doc(1), "updated_at": "2026-01-03T00:00:00Z"})
    assert model.fits(request, cleared) == ["namespace null clears it"]
    assert model.fits(request, Answer(422, {"error": "validation_error"})) == ["namespace null refused, nothing changed"]
    assert model.accepts(request, Answer(200, {**doc(1, namespace="project:a"), "updated_at": "2026-01-03T00:00:00Z"})) is not None
    unknown = Request("import", body={"memories": []}, params=(("conflict", "merge"),))
    assert model.accepts(unknown, Answer(200, {"imported": 0, "skipped": 0, "errors": []})) is not None
    assert model.accepts(unknown, Answer(422, {"error": "validation_error", "message": "unknown strategy"})) is None


# ---- the reference, in process, against the model ----------------------------------------------

class Params(dict):  # type: ignore[type-arg]
    """A query as the reference reads it: the last of repeated values (Starlette's QueryParams.get)."""


class InProcess:
    """The reference's own dispatch, without HTTP: an answer per model Request."""

    OPS = {"create": "create", "get": "get", "update": "update", "delete": "delete", "list": "list", "search": "search",
           "export": "export", "import": "import", "health": "health"}

    def __init__(self, api_class: Any = None) -> None:
        self.api = ServerSpec(**({"api_class": api_class} if api_class else {}), rate_limits={}).build()
        keys = self.api.keys
        self.keys = {"global": keys.global_key, "other-user": keys.other_user_key,
                     **{f"tool:{tool}": key for tool, key in keys.tool_keys.items()}}

    def call(self, request: Request) -> Answer:
        op = self.OPS[request.op]
        raw = b"" if request.body is None else json.dumps(request.body).encode()
        req = Req(Params(request.params), {"memory_id": request.id} if request.id else {}, raw,
                  {"authorization": f"Bearer {self.keys[request.key]}"})
        status, body, _ = self.api.dispatch(op, getattr(self.api, f"op_{op}"), req)
        return Answer(status, body)


WORDS = ("apple", "berry", "cherry")
KEYS = ["global", "global", "global", "other-user", f"tool:{TOOL_A}"]
TAGS = ["red", "blue", "green"]
LIST_VALUES = ["episodic", "semantic", TOOL_A, "red", "red,blue", "project:a", "created_at_asc", "updated_at_desc",
               "2", "5", "0", "101", "", "abc", "1"]


def memory_body(word: int, kind: str, tags: list[str], tool: str, ns: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": f"note {WORDS[word]}", "type": kind, "source": {"tool": tool, "timestamp": STAMP}, "tags": tags}
    if ns is not None:
        body["namespace"] = ns
    return body


def random_request(rng: random.Random, ids: list[str]) -> Request:
    """One request of any operation, with every filter, sort, paging, mode, strategy and key kind."""
    op = rng.choice(["create", "create", "list", "search", "follow", "follow", "import", "export"])
    key = rng.choice(KEYS)
    tags = rng.sample(TAGS, rng.randint(0, 2))
    if op == "create":
        body = memory_body(rng.randint(0, 2), rng.choice(omp.TYPES), tags, rng.choice([TOOL_A, "claude"]), rng.choice([None, "project:a"]))
        if rng.random() < 0.15:
            body["content"] = "z" * (omp.MAX_CONTENT + 1)
        return Request("create", key, body=body)
    if op == "list":
        names = ["type", "tool", "tags", "namespace", "sort", "limit", "offset"]
        return Request.list([(rng.choice(names), rng.choice(LIST_VALUES)) for _ in range(rng.randint(0, 3))], key)
    if op == "search":
        body = {"q": rng.choice(["apple", "APPLE berry", "note", "note cherry", "zzz", ""])}
        for name, values in (("mode", ["keyword", "semantic", "hybrid"]), ("type", ["semantic", "episodic"]),
                             ("tags", [["red"], ["red", "blue"]]), ("limit", [1, 3, 100]), ("namespace", ["project:a"])):
            if rng.random() < 0.4:
                body[name] = rng.choice(values)
        return Request("search", key, body=body)
    if op == "follow":
        return follow_up(rng, key, ids)
    if op == "import":
        return import_request(rng, ids)
    return Request("export", key)


def follow_up(rng: random.Random, key: str, ids: list[str]) -> Request:
    mem_id = rng.choice(ids) if ids and rng.random() < 0.8 else "mem_" + "0" * 16
    kind = rng.choice(["get", "delete", "update", "update-ns-null", "update-bad"])
    if kind == "update":
        return Request("update", key, mem_id, {"content": f"note {rng.choice(WORDS)} again", "tags": rng.sample(TAGS, 1)})
    if kind == "update-ns-null":
        return Request("update", key, mem_id, {"namespace": None, "expires_at": None})
    if kind == "update-bad":
        return Request("update", key, mem_id, {"type": "opinion"})
    return Request(kind, key, mem_id)


def import_request(rng: random.Random, ids: list[str]) -> Request:
    items: list[dict[str, Any]] = []
    for i in range(rng.randint(0, 3)):
        item = {**memory_body(rng.randint(0, 2), "episodic", ["red"], "claude", None),
                "created_at": f"2025-0{i + 1}-01T00:00:00Z", "updated_at": f"2025-0{i + 1}-01T00:00:00Z"}
        item["content"] += f" imp{rng.randint(0, 10**6)}"
        if ids and rng.random() < 0.5:
            item["id"] = rng.choice(ids)
        if rng.random() < 0.2:
            item["content"] = "z" * (omp.MAX_CONTENT + 1)
        items.append(item)
    conflict = rng.choice([None, "skip", "overwrite", "duplicate", "bogus"])
    return Request("import", "global", body={"omp_version": "0.1", "exported_at": STAMP, "memories": items},
                   params=(("conflict", conflict),) if conflict else ())


def run_sequence(rng: random.Random, server: InProcess, steps: int) -> str | None:
    """Random requests against the server, each answer judged by the model; the first reason, or None."""
    model = Model()
    ids: list[str] = []
    for _ in range(steps):
        request = random_request(rng, ids)
        answer = server.call(request)
        reason = model.step(request, answer)
        if reason is not None:
            return f"{request}: {reason}"
        if request.op == "import":  # the import is read back: the model resolves what it stored
            export = Request("export", "global")
            reason = model.step(export, server.call(export))
            if reason is not None:
                return f"export after {request}: {reason}"
        if request.op == "create" and answer.status == 201:
            ids.append(answer.body["id"])
    health = Request("health")
    reason = model.accepts(health, server.call(health))
    return None if reason is None else str(reason)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.randoms(use_true_random=False), st.integers(4, 25))
def test_the_reference_answers_are_always_in_the_models_set(rng: random.Random, steps: int) -> None:
    assert run_sequence(rng, InProcess(), steps) is None


# mutants whose fault shows in the operations above: the model is no constant "accept"
CAUGHT = ("tags_or", "offset_ignored", "sort_ignored", "total_is_page_size", "type_filter_ignored", "put_replaces_whole",
          "delete_returns_200_and_keeps", "search_case_sensitive", "conflict_ignored", "import_aborts_on_bad_memory",
          "duplicate_reuses_ids", "users_not_isolated", "tool_key_unscoped", "limit_not_capped", "namespace_filter_ignored",
          "no_validation", "stale_search_index", "put_ignores_null", "filter_after_paging", "overwrite_keeps_existing")


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUGHT)
def test_each_mutant_leaves_the_models_set(name: str) -> None:
    api_class = mutant_class(name)
    for seed in range(150):  # bounded: the first seeds that reach the fault
        if run_sequence(random.Random(seed), InProcess(api_class), 25) is not None:
            return
    pytest.fail(f"{name}: 150 random sequences stayed in the model's set")


def mutant_class(name: str) -> Any:
    from memconform.suites.omp.mutants import MUTANTS

    factory = MUTANTS[name]
    cell = dict(zip(factory.__code__.co_freevars, (c.cell_contents for c in factory.__closure__ or ()), strict=True))
    return cell["spec"].get("api_class", cell["api_class"])


# ---- the domain table and the model agree on every search class ---------------------------------

SEARCH_NAMES = {"tag": "all", "sub": "even", "namespace": "project:a", "word": "word1", "word2": "word2", "WORD": "WORD1",
                "tool": "claude"}


def search_class_cases() -> list[Any]:
    from memconform.kit import domain

    table = domain.required("omp")
    return [vc for name in ("search.q", "search.type", "search.tags", "search.namespace", "search.limit", "search.mode")
            for vc in table.field(name).classes]


@pytest.mark.parametrize("vc", search_class_cases(), ids=lambda vc: vc.key)
def test_the_domain_table_and_the_model_agree_on_each_search_class(vc: Any) -> None:
    """invalid: only a 422 is in the model's set; open: a 4xx and a page both are; valid: a page is."""
    from memconform.kit import domain
    from memconform.kit.domain_values import fill

    body: dict[str, Any] = {"q": "word1"}
    name = vc.field.split(".", 1)[1]
    value = vc.value()
    if value is domain.ABSENT:
        body.pop(name, None)
    else:
        body[name] = fill(value, SEARCH_NAMES)
    model = Model()  # nothing stored: an empty page is every reading's page
    request = Request("search", body=body)
    refusal = Answer(422, {"error": "validation_error", "message": "bad search"})
    served = Answer(200, {"memories": [], "total": 0, "mode_used": body.get("mode", "keyword")})
    refused_ok = model.accepts(request, refusal) is None
    page_ok = any(model.accepts(request, Answer(200, {**served.body, "mode_used": mode})) is None for mode in omp.SEARCH_MODES)
    assert (refused_ok, page_ok) == {"invalid": (True, False), "open": (True, True)}.get(vc.expect, (refused_ok, True)), vc.key


# ---- what the example checks ask of the model -------------------------------------------------------

def test_an_update_naming_id_or_created_at_is_ignored_or_refused_with_422() -> None:
    model = Model.seeded([doc(1)])
    request = Request("update", id=doc(1)["id"], body={"id": "mem_0000000000000999", "created_at": STAMP, "tags": ["x"]})
    kept = Answer(200, {**doc(1), "tags": ["x"], "updated_at": "2026-02-01T00:00:00Z"})
    assert model.accepts(request, kept) is None
    assert model.accepts(request, Answer(422, {"error": "validation_error"})) is None
    assert model.accepts(request, Answer(400, {"error": "bad_request"})) is not None  # errata O8: refused with 422
    moved = Answer(200, {**doc(1), "id": "mem_0000000000000999", "tags": ["x"], "updated_at": "2026-02-01T00:00:00Z"})
    assert "id changed" in str(model.accepts(request, moved))
    restamped = Answer(200, {**doc(1), "created_at": STAMP, "tags": ["x"], "updated_at": "2026-02-01T00:00:00Z"})
    assert "created_at changed" in str(model.accepts(request, restamped))


def test_a_write_is_judged_with_the_read_that_follows() -> None:
    model = Model.seeded([doc(1, namespace="project:a")])
    request = Request("update", id=doc(1)["id"], body={"namespace": None})
    checks = model.expect_read_back(request)
    assert set(checks) == {"namespace null clears it", "namespace null refused, nothing changed"}
    cleared = Answer(200, {**doc(1), "updated_at": "2026-02-01T00:00:00Z"})
    assert checks["namespace null clears it"]((cleared, cleared)) is None
    assert "read back" in str(checks["namespace null clears it"]((cleared, Answer(200, doc(1, namespace="project:a")))))
    refusal = Answer(422, {"error": "validation_error"})
    assert checks["namespace null refused, nothing changed"]((refusal, Answer(200, doc(1, namespace="project:a")))) is None
    assert checks["namespace null refused, nothing changed"]((refusal, cleared)) is not None
    assert model.memories()[0].get("namespace") == "project:a"  # judging never changes the state


def search_answer(docs: list[dict[str, Any]], mode_used: str) -> Answer:
    return Answer(200, {"memories": docs, "total": len(docs), "mode_used": mode_used})


def test_a_similarity_page_finds_the_memory_sharing_most_words_and_a_keyword_answer_is_a_keyword_page() -> None:
    near, far = doc(1, content="alpha beta gamma"), doc(2, content="delta epsilon")
    request = Request("search", body={"q": "alpha beta zeta", "mode": "semantic"})
    core = Model.seeded([near, far])
    assert core.accepts(request, search_answer([near, far], "semantic")) is None
    assert core.accepts(request, search_answer([far, near], "semantic")) is None  # ranking open at OMP-Core
    reason = core.accepts(request, search_answer([far], "semantic"))
    assert reason is not None and "a keyword search presented as semantic" in reason.title
    assert core.fits(request, search_answer([], "keyword"))  # honest keyword (all-words: no match)
    assert core.accepts(request, search_answer([near], "keyword")) is None  # any-word reads it so
    assert Model.seeded([near, far], Readings(keyword_match="all-words")).accepts(request, search_answer([near], "keyword")) is not None
    assert core.accepts(request, Answer(422, {"error": "validation_error"})) is None  # optional at OMP-Core
    search_level = Model.seeded([near, far], Readings(semantic_required=True))
    assert search_level.accepts(request, search_answer([near, far], "semantic")) is None
    assert "ranks a memory sharing no word" in str(search_level.accepts(request, search_answer([far, near], "semantic")))
    assert search_level.accepts(request, search_answer([], "keyword")) is not None
    assert search_level.accepts(request, Answer(422, {"error": "validation_error"})) is not None


def test_list_readings_are_named_by_the_parameter_that_decides_them() -> None:
    names = {frozenset(r.names) for r in list_readings((("tags", "t"), ("tool", ""), ("namespace", "")), Readings())}
    assert names == {frozenset({"empty tool: refused with a 4xx", "empty namespace: refused with a 4xx"}),
                     frozenset({"empty tool: served as absent", "empty namespace: served as absent"}),
                     frozenset({"empty tool: served as a value matching nothing", "empty namespace: served as a value matching nothing"})}
