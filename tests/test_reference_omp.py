"""The OMP reference server over real loopback HTTP: every endpoint, auth, keys, users, import,
search, rate limit, extract/compress, concurrency; and every mutant starts and serves health."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from memconform.suites.omp.format import ID_RE, UTC_RE
from memconform.suites.omp.mutants import MUTANTS
from memconform.suites.omp.reference.api import OmpApi
from memconform.suites.omp.reference.parts import TOOL_A, TOOL_B, OfflineProvider, RateLimit
from memconform.suites.omp.reference.serve import (
    ServedTarget,
    ServerSpec,
    reference_target,
    serve_target,
)
from memconform.targets import open_target
from memconform.targets.base import Reply

ROOT = Path(__file__).resolve().parents[1]

STAMP = "2026-06-29T12:00:00Z"
ENVELOPE_KEYS = {"error", "message", "details"}


@pytest.fixture(scope="module")
def ref() -> Iterator[ServedTarget]:
    target = reference_target()
    yield target
    target.close()


def key(ref: ServedTarget, who: str) -> dict[str, str]:
    creds = ref.omp_facts.credentials
    assert creds is not None and creds.other_user_key
    value = {"a": creds.tool_keys[TOOL_A], "b": creds.tool_keys[TOOL_B], "other": creds.other_user_key}[who]
    return {"Authorization": f"Bearer {value}"}


def body(content: str, **extra: Any) -> dict[str, Any]:
    return {"content": content, "type": "semantic", "source": {"tool": "claude", "timestamp": STAMP}, **extra}


def create(ref: ServedTarget, content: str, headers: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    r = ref.request("POST", "/v1/memories", json_body=body(content, **extra), headers=headers)
    assert r.status == 201, r.raw.decode()
    return r.json()


def assert_error(r: Reply, status: int, code: str) -> None:
    assert r.status == status, r.raw.decode()
    doc = r.json()
    assert set(doc) == ENVELOPE_KEYS and doc["error"] == code, doc
    assert isinstance(doc["message"], str) and doc["message"] and isinstance(doc["details"], dict), doc


def export_ids(ref: ServedTarget, headers: dict[str, str] | None = None) -> list[str]:
    r = ref.request("GET", "/v1/export", headers=headers)
    assert r.status == 200
    return [m["id"] for m in r.json()["memories"]]


def ns() -> str:
    return f"test:{uuid.uuid4().hex[:12]}"


# --- health, auth, envelope ----------------------------------------------------------------------


def test_health_needs_no_key_and_declares_omp_full(ref):
    r = ref.request("GET", "/v1/health", auth=False)
    doc = r.json()
    assert r.status == 200 and doc["status"] == "ok" and doc["version"] == "0.1" and doc["compliance"] == "OMP-Full"
    before = doc["memories_count"]
    create(ref, "counted in health")
    assert ref.request("GET", "/v1/health", auth=False).json()["memories_count"] == before + 1


ROUTES = [("POST", "/v1/memories"), ("GET", "/v1/memories"), ("GET", "/v1/memories/mem_0000000000000000"),
          ("PUT", "/v1/memories/mem_0000000000000000"), ("DELETE", "/v1/memories/mem_0000000000000000"),
          ("POST", "/v1/memories/search"), ("GET", "/v1/export"), ("POST", "/v1/import"), ("POST", "/v1/extract"),
          ("POST", "/v1/compress")]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_but_health_needs_a_valid_key(ref, method, path):
    assert_error(ref.request(method, path, json_body={}, auth=False), 401, "unauthorized")
    r = ref.request(method, path, json_body={}, headers={"Authorization": "Bearer " + "x" * 43})
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == "Bearer"
    assert_error(ref.request(method, path, json_body={}, headers={"Authorization": ref.api_key or ""}), 401, "unauthorized")


def test_keys_are_long_random_and_distinct(ref):
    creds = ref.omp_facts.credentials
    keys = [ref.api_key, *creds.tool_keys.values(), creds.other_user_key]
    assert len(set(keys)) == 4 and all(k and len(k) >= 32 for k in keys)
    assert ref.omp_facts.ai_key_configured is False


def test_unknown_routes_methods_and_crashes_answer_the_envelope(ref):
    assert_error(ref.request("GET", "/v1/nothing-here"), 404, "not_found")
    assert_error(ref.request("GET", "/v1/memories/"), 404, "not_found")
    r = ref.request("DELETE", "/v1/export")
    assert_error(r, 405, "method_not_allowed")
    assert "GET" in r.headers["allow"]

    class Crashing(OmpApi):
        def op_list(self, who, req):
            raise RuntimeError("secret content must not leak")

    crashing = serve_target(ServerSpec(api_class=Crashing))
    try:
        r = crashing.request("GET", "/v1/memories")
        assert_error(r, 500, "internal_error")
        assert "secret" not in r.raw.decode()
    finally:
        crashing.close()


# --- create / get / validation -----------------------------------------------------------------------


def test_create_answers_201_with_the_memory(ref):
    sent = body("User prefers dark mode", tags=["ui", "preferences"], namespace="project:myapp", expires_at=None,
                metadata={"k": [1, {"x": None}]})
    r = ref.request("POST", "/v1/memories", json_body=sent)
    assert r.status == 201
    doc = r.json()
    assert ID_RE.match(doc["id"]) and r.headers["location"] == f"/v1/memories/{doc['id']}"
    assert {k: doc[k] for k in sent} == sent
    assert UTC_RE.match(doc["created_at"]) and doc["created_at"] == doc["updated_at"]
    assert re.fullmatch(r".*T\d\d:\d\d:\d\d\.\d{3}Z", doc["created_at"])
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json() == doc


def test_optional_fields_default_and_namespace_is_omitted_when_unset(ref):
    doc = create(ref, "bare memory")
    assert doc["tags"] == [] and doc["metadata"] == {} and doc["expires_at"] is None
    assert "namespace" not in doc and "embedding" not in doc
    with_vector = create(ref, "with its own vector", embedding=[0.5, -1, 2e-3])
    assert with_vector["embedding"] == [0.5, -1, 2e-3]


def test_server_assigned_fields_in_a_create_body_are_ignored(ref):
    doc = create(ref, "server fields", id="mem_AAAAAAAAAAAAAAAA", created_at="2001-01-01T00:00:00Z")
    assert doc["id"] != "mem_AAAAAAAAAAAAAAAA" and not doc["created_at"].startswith("2001")


def test_ids_and_timestamps_are_unique_and_increasing(ref):
    docs = [create(ref, f"order {i}") for i in range(5)]
    assert len({d["id"] for d in docs}) == 5
    assert [d["created_at"] for d in docs] == sorted({d["created_at"] for d in docs})


BAD_BODIES = {
    "content 10,001 characters": body("x" * 10_001),
    "21 tags": body("t", tags=[f"t{i}" for i in range(21)]),
    "a 51-character tag": body("t", tags=["x" * 51]),
    "namespace 101 characters": body("t", namespace="n" * 101),
    "11 metadata keys": body("t", metadata={f"k{i}": i for i in range(11)}),
    "unknown type": dict(body("t"), type="opinion"),
    "content a number": dict(body("t"), content=5),
    "content missing": {k: v for k, v in body("t").items() if k != "content"},
    "tags a string": body("t", tags="a,b"),
    "tag a number": body("t", tags=[1]),
    "metadata a list": body("t", metadata=[1]),
    "source missing": {k: v for k, v in body("t").items() if k != "source"},
    "source without timestamp": dict(body("t"), source={"tool": "claude"}),
    "source timestamp not UTC": dict(body("t"), source={"tool": "claude", "timestamp": "2026-06-29T14:00:00+02:00"}),
    "expires_at not a date": body("t", expires_at="tomorrow"),
    "embedding with text": body("t", embedding=[1, "a"]),
    "a JSON array": [body("t")],
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_invalid_create_is_422_and_stores_nothing(ref, case):
    before = export_ids(ref)
    assert_error(ref.request("POST", "/v1/memories", json_body=BAD_BODIES[case]), 422, "validation_error")
    assert export_ids(ref) == before


@pytest.mark.parametrize("raw", [b"{not json", b"", b"NaN", b'{"content": NaN}', b"\xff\xfe"])
def test_malformed_json_is_422(ref, raw):
    assert_error(ref.request("POST", "/v1/memories", content=raw, headers={"Content-Type": "application/json"}),
                 422, "validation_error")


def test_limits_themselves_are_accepted(ref):
    doc = create(ref, "x" * 10_000, tags=[f"t{i:02d}".ljust(50, "x") for i in range(20)], namespace="n" * 100,
                 metadata={f"k{i}": i for i in range(10)})
    assert len(doc["content"]) == 10_000 and len(doc["tags"]) == 20


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_unknown_id_is_404_memory_not_found(ref, method):
    for memory_id in ("mem_ZZZZZZZZZZZZZZZZ", "not-an-id", "%20"):
        assert_error(ref.request(method, f"/v1/memories/{memory_id}", json_body={"content": "x"}), 404, "memory_not_found")


# --- list ---------------------------------------------------------------------------------------------


def list_(ref: ServedTarget, headers: dict[str, str] | None = None, **params: Any) -> dict[str, Any]:
    r = ref.request("GET", "/v1/memories", params={k: str(v) for k, v in params.items()}, headers=headers)
    assert r.status == 200, r.raw.decode()
    return r.json()


def test_list_filters_type_tool_tags_and_namespace(ref):
    space = ns()
    a = create(ref, "a", namespace=space, tags=["x", "y"])
    b = create(ref, "b", namespace=space, tags=["x"], type="episodic")
    c = create(ref, "c", namespace=space, tags=["y", "z"], source={"tool": "cursor", "timestamp": STAMP})
    create(ref, "d", namespace=ns(), tags=["x", "y"])

    def ids(**params: Any) -> set[str]:
        return {m["id"] for m in list_(ref, namespace=space, **params)["memories"]}

    assert ids() == {a["id"], b["id"], c["id"]}
    assert ids(tags="x,y") == {a["id"]}  # AND
    assert ids(tags="x") == {a["id"], b["id"]}
    assert ids(tags=" y , z ") == {c["id"]}
    assert ids(type="episodic") == {b["id"]}
    assert ids(tool="cursor") == {c["id"]}
    assert list_(ref, namespace=space)["total"] == 3


def test_list_limit_offset_total_and_sorts(ref):
    space = ns()
    docs = [create(ref, f"page {i}", namespace=space) for i in range(25)]
    first = list_(ref, namespace=space)
    assert (len(first["memories"]), first["total"], first["limit"], first["offset"]) == (20, 25, 20, 0)
    assert [m["id"] for m in first["memories"]] == [d["id"] for d in reversed(docs)][:20]
    rest = list_(ref, namespace=space, offset=20, limit=10)
    assert [m["id"] for m in rest["memories"]] == [d["id"] for d in reversed(docs)][20:]
    assert (rest["total"], rest["limit"], rest["offset"]) == (25, 10, 20)
    assert [m["id"] for m in list_(ref, namespace=space, sort="created_at_asc", limit=100)["memories"]] == [d["id"] for d in docs]
    ref.request("PUT", f"/v1/memories/{docs[3]['id']}", json_body={"tags": ["touched"]})
    assert list_(ref, namespace=space, sort="updated_at_desc")["memories"][0]["id"] == docs[3]["id"]
    assert list_(ref, namespace=space, limit=100, offset=10**20)["memories"] == []


def test_list_with_101_memories_serves_at_most_100(ref):
    space = ns()
    for i in range(101):
        create(ref, f"bulk {i}", namespace=space)
    page = list_(ref, namespace=space, limit=100)
    assert len(page["memories"]) == 100 and page["total"] == 101


@pytest.mark.parametrize("params", [{"limit": "abc"}, {"limit": "-1"}, {"limit": "0"}, {"limit": "101"}, {"limit": ""},
                                    {"offset": "-1"}, {"offset": "abc"}, {"sort": "random"}, {"type": "opinion"}])
def test_bad_list_parameters_are_422(ref, params):
    assert_error(ref.request("GET", "/v1/memories", params=params), 422, "validation_error")


# --- update / delete ----------------------------------------------------------------------------------


def test_update_changes_only_given_fields(ref):
    doc = create(ref, "before", tags=["keep"], namespace="ns:keep", metadata={"m": 1})
    r = ref.request("PUT", f"/v1/memories/{doc['id']}",
                    json_body={"content": "after", "id": "mem_BBBBBBBBBBBBBBBB", "created_at": "2001-01-01T00:00:00Z"})
    assert r.status == 200
    new = r.json()
    assert new["content"] == "after" and new["id"] == doc["id"] and new["created_at"] == doc["created_at"]
    assert {k: new[k] for k in ("tags", "namespace", "metadata", "source", "type")} == \
        {k: doc[k] for k in ("tags", "namespace", "metadata", "source", "type")}
    assert new["updated_at"] > doc["updated_at"] and UTC_RE.match(new["updated_at"])
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json() == new
    again = ref.request("PUT", f"/v1/memories/{doc['id']}", json_body={}).json()
    assert again["updated_at"] > new["updated_at"] and again["content"] == "after"
    cleared = ref.request("PUT", f"/v1/memories/{doc['id']}", json_body={"namespace": None, "metadata": None}).json()
    assert "namespace" not in cleared and cleared["metadata"] == {}


def test_invalid_update_is_422_and_changes_nothing(ref):
    doc = create(ref, "stable")
    for bad in ({"content": "x" * 10_001}, {"tags": [f"t{i}" for i in range(21)]}, {"type": "opinion"},
                {"content": None}, {"source": {"tool": "claude"}}, [1]):
        assert_error(ref.request("PUT", f"/v1/memories/{doc['id']}", json_body=bad), 422, "validation_error")
    assert_error(ref.request("PUT", f"/v1/memories/{doc['id']}", content=b"{oops"), 422, "validation_error")
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json() == doc


def test_delete_is_204_then_404(ref):
    doc = create(ref, "to delete")
    r = ref.request("DELETE", f"/v1/memories/{doc['id']}")
    assert r.status == 204 and r.raw == b""
    assert_error(ref.request("GET", f"/v1/memories/{doc['id']}"), 404, "memory_not_found")
    assert_error(ref.request("DELETE", f"/v1/memories/{doc['id']}"), 404, "memory_not_found")
    assert doc["id"] not in export_ids(ref)


# --- search -------------------------------------------------------------------------------------------


def search(ref: ServedTarget, **req: Any) -> dict[str, Any]:
    r = ref.request("POST", "/v1/memories/search", json_body=req)
    assert r.status == 200, r.raw.decode()
    return r.json()


def test_keyword_search_is_case_insensitive_and_needs_every_word(ref):
    token = uuid.uuid4().hex[:10]
    space = ns()
    a = create(ref, f"Zebra{token} prefers TypeScript over JavaScript", namespace=space, tags=["p", "q"])
    b = create(ref, f"zebra{token} uses Python for scripts", namespace=space, tags=["p"], type="procedural")
    got = search(ref, q=f"ZEBRA{token}", namespace=space)
    assert {m["id"] for m in got["memories"]} == {a["id"], b["id"]} and got["total"] == 2 and got["mode_used"] == "keyword"
    assert [m["id"] for m in search(ref, q=f"zebra{token} typescript")["memories"]] == [a["id"]]
    assert search(ref, q=f"zebra{token} typescripts")["memories"] == []  # words, not prefixes
    assert search(ref, q=f"zebra{token} rust")["memories"] == []
    assert [m["id"] for m in search(ref, q=f"zebra{token}", tags=["p", "q"])["memories"]] == [a["id"]]
    assert [m["id"] for m in search(ref, q=f"zebra{token}", type="procedural")["memories"]] == [b["id"]]
    page = search(ref, q=f"zebra{token}", limit=1)
    assert len(page["memories"]) == 1 and page["total"] == 2
    assert search(ref, q="!!!")["memories"] == []


def test_semantic_and_hybrid_say_what_they_ran(ref):
    token = uuid.uuid4().hex[:10]
    doc = create(ref, f"quokka{token} deploys with docker compose")
    assert search(ref, q=f"quokka{token} kubernetes", mode="keyword")["memories"] == []
    semantic = search(ref, q=f"quokka{token} kubernetes", mode="semantic")
    assert semantic["mode_used"] == "semantic" and semantic["memories"][0]["id"] == doc["id"]
    hybrid = search(ref, q=f"quokka{token} docker", mode="hybrid")
    assert hybrid["mode_used"] == "hybrid" and hybrid["memories"][0]["id"] == doc["id"]


@pytest.mark.parametrize("req", [{}, {"q": 5}, {"q": "x", "mode": "vector"}, {"q": "x", "limit": 101},
                                 {"q": "x", "limit": 0}, {"q": "x", "limit": "5"}, {"q": "x", "tags": "a"},
                                 {"q": "x", "type": "opinion"}])
def test_bad_search_is_422(ref, req):
    assert_error(ref.request("POST", "/v1/memories/search", json_body=req), 422, "validation_error")


# --- export / import ------------------------------------------------------------------------------------


def test_export_envelope(ref):
    doc = create(ref, "exported")
    r = ref.request("GET", "/v1/export")
    env = r.json()
    assert r.status == 200 and env["omp_version"] == "0.1" and UTC_RE.match(env["exported_at"])
    assert isinstance(env["server"], str) and doc in env["memories"]


def import_(ref: ServedTarget, memories: list[Any], conflict: str | None = None, **extra: Any) -> Reply:
    params = {"conflict": conflict} if conflict else None
    return ref.request("POST", "/v1/import", json_body={"omp_version": "0.1", "memories": memories, **extra}, params=params)


def test_import_strategies(ref):
    doc = create(ref, "original")
    changed = dict(doc, content="from the file")
    new_id = "mem_" + uuid.uuid4().hex[:16]
    fresh = dict(body("brand new"), id=new_id, created_at="2025-01-01T00:00:00Z", updated_at="2025-01-02T00:00:00Z")

    assert import_(ref, [changed, fresh]).json() == {"imported": 1, "skipped": 1, "errors": []}  # skip is the default
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json()["content"] == "original"
    assert ref.request("GET", f"/v1/memories/{new_id}").json()["created_at"] == "2025-01-01T00:00:00Z"

    assert import_(ref, [changed], "overwrite").json() == {"imported": 1, "skipped": 0, "errors": []}
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json()["content"] == "from the file"

    before = set(export_ids(ref))
    assert import_(ref, [changed, fresh], "duplicate").json() == {"imported": 2, "skipped": 0, "errors": []}
    added = set(export_ids(ref)) - before
    assert len(added) == 2 and all(ID_RE.match(i) for i in added) and before <= set(export_ids(ref))

    again = dict(changed, content="via the body field")
    assert import_(ref, [again]).json()["skipped"] == 1
    assert ref.request("POST", "/v1/import", json_body={"memories": [again], "conflict": "overwrite"}).json()["imported"] == 1
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json()["content"] == "via the body field"


def test_import_reports_bad_memories_and_keeps_the_good_and_the_existing(ref):
    before = set(export_ids(ref))
    good1, good2 = body("good one"), body("good two")
    bad = [body("x" * 10_001), "not an object", dict(body("bad id"), id="42"), dict(body("bad type"), type="opinion")]
    r = import_(ref, [good1, *bad, good2], "overwrite")
    report = r.json()
    assert r.status == 200 and report["imported"] == 2 and report["skipped"] == 0
    assert [e["index"] for e in report["errors"]] == [1, 2, 3, 4]
    assert all(e["error"] == "validation_error" and e["message"] for e in report["errors"])
    assert report["errors"][2]["id"] == "42"
    assert before < set(export_ids(ref))


@pytest.mark.parametrize("case", ["unknown strategy", "no memories", "memories not a list", "not JSON"])
def test_refused_import_imports_nothing(ref, case):
    before = export_ids(ref)
    if case == "unknown strategy":
        r = import_(ref, [body("never")], "merge")
    elif case == "not JSON":
        r = ref.request("POST", "/v1/import", content=b"{")
    else:
        r = ref.request("POST", "/v1/import", json_body={"memories": {"a": 1}} if case == "memories not a list" else {})
    assert_error(r, 422, "validation_error")
    assert export_ids(ref) == before


def test_export_then_import_into_a_fresh_server_round_trips(ref):
    space = ns()
    for i in range(3):
        create(ref, f"portable {i}", namespace=space, tags=["t"], metadata={"i": i})
    env = ref.request("GET", "/v1/export").json()
    mine = [m for m in env["memories"] if m.get("namespace") == space]
    other = reference_target()
    try:
        assert import_(other, mine).json() == {"imported": 3, "skipped": 0, "errors": []}
        assert other.request("GET", "/v1/export").json()["memories"] == mine
    finally:
        other.close()


def test_a_database_file_keeps_memories_across_restarts(tmp_path):
    db = str(tmp_path / "omp.sqlite")
    first = serve_target(ServerSpec(db=db))
    try:
        doc = create(first, "persisted across restarts")
    finally:
        first.close()
    second = serve_target(ServerSpec(db=db))
    try:
        assert second.request("GET", f"/v1/memories/{doc['id']}").json() == doc
        assert [m["id"] for m in search(second, q="PERSISTED restarts")["memories"]] == [doc["id"]]
    finally:
        second.close()


# --- per-tool keys, users -------------------------------------------------------------------------------


def test_tool_keys_see_and_write_only_their_tool(ref):
    space = ns()
    mine = create(ref, "tool a memory", headers=key(ref, "a"), namespace=space,
                  source={"tool": TOOL_A, "timestamp": STAMP})
    theirs = create(ref, "tool b memory", namespace=space, source={"tool": TOOL_B, "timestamp": STAMP})
    a = key(ref, "a")
    assert_error(ref.request("POST", "/v1/memories", json_body=body("claude's"), headers=a), 403, "forbidden")
    assert [m["id"] for m in list_(ref, headers=a, namespace=space)["memories"]] == [mine["id"]]
    assert list_(ref, headers=a, namespace=space, tool=TOOL_B)["memories"] == []
    for method, payload in (("GET", None), ("PUT", {"content": "hijack"}), ("DELETE", None)):
        assert_error(ref.request(method, f"/v1/memories/{theirs['id']}", json_body=payload, headers=a), 403, "forbidden")
    assert ref.request("GET", f"/v1/memories/{theirs['id']}").json() == theirs
    assert_error(ref.request("PUT", f"/v1/memories/{mine['id']}", json_body={"source": {"tool": TOOL_B, "timestamp": STAMP}},
                             headers=a), 403, "forbidden")
    assert ref.request("PUT", f"/v1/memories/{mine['id']}", json_body={"content": "edited"}, headers=a).status == 200
    assert set(export_ids(ref, a)) <= {m["id"] for m in ref.request("GET", "/v1/export").json()["memories"]
                                       if m["source"]["tool"] == TOOL_A}
    token = uuid.uuid4().hex[:10]
    create(ref, f"walrus{token} b", source={"tool": TOOL_B, "timestamp": STAMP})
    r = ref.request("POST", "/v1/memories/search", json_body={"q": f"walrus{token}"}, headers=a)
    assert r.json()["memories"] == []
    report = ref.request("POST", "/v1/import", json_body={"memories": [body("as claude"), body("as a", source={"tool": TOOL_A, "timestamp": STAMP})]},
                         headers=a).json()
    assert report["imported"] == 1 and [e["error"] for e in report["errors"]] == ["forbidden"]


def test_users_are_isolated(ref):
    doc = create(ref, "default user's")
    other = key(ref, "other")
    assert_error(ref.request("GET", f"/v1/memories/{doc['id']}", headers=other), 404, "memory_not_found")
    assert_error(ref.request("DELETE", f"/v1/memories/{doc['id']}", headers=other), 404, "memory_not_found")
    assert doc["id"] not in export_ids(ref, other)
    theirs = create(ref, "other user's", headers=other)
    assert theirs["id"] not in export_ids(ref)
    # the other user may import the default user's ids into their own space without touching them
    assert import_(ref, [dict(doc, content="copy")], "overwrite").json()["imported"] == 1
    r = ref.request("POST", "/v1/import", json_body={"memories": [dict(doc, content="theirs now")]}, headers=other)
    assert r.json()["imported"] == 1
    assert ref.request("GET", f"/v1/memories/{doc['id']}").json()["content"] == "copy"


# --- rate limit ------------------------------------------------------------------------------------------


def test_rate_limit_per_key_with_retry_after_and_health_exempt():
    target = reference_target(rate_limits={"global": RateLimit(10_000, 10.0), "*": RateLimit(5, 60.0)})
    try:
        a = key(target, "a")
        statuses = [target.request("GET", "/v1/memories", headers=a).status for _ in range(7)]
        assert statuses[:5] == [200] * 5 and statuses[5:] == [429, 429]
        r = target.request("GET", "/v1/memories", headers=a)
        assert_error(r, 429, "rate_limited")
        assert int(r.headers["retry-after"]) >= 1
        assert target.request("GET", "/v1/memories", headers=key(target, "b")).status == 200  # its own bucket
        assert target.request("GET", "/v1/memories").status == 200
        assert all(target.request("GET", "/v1/health", auth=False).status == 200 for _ in range(10))
    finally:
        target.close()


# --- extract / compress -------------------------------------------------------------------------------------


TRANSCRIPT = "Alice: I always use TypeScript. Bob: What about Python? Alice: Only for scripts."


@pytest.mark.parametrize("path", ["/v1/extract", "/v1/compress"])
def test_ai_endpoints_without_a_key_are_422_and_store_nothing(ref, path):
    before = export_ids(ref)
    assert_error(ref.request("POST", path, json_body={"transcript": TRANSCRIPT}), 422, "no_api_key")
    r = ref.request("POST", path, json_body={"transcript": TRANSCRIPT, "api_key": "sk-not-real"})
    assert_error(r, 502, "ai_error")  # the reference never calls a real provider
    assert_error(ref.request("POST", path, json_body={"transcript": 5}), 422, "validation_error")
    assert export_ids(ref) == before


def test_ai_endpoints_with_the_offline_provider():
    target = reference_target(provider=OfflineProvider())
    try:
        assert target.omp_facts.ai_key_configured is True
        r = target.request("POST", "/v1/extract", json_body={"transcript": TRANSCRIPT, "source_tool": "claude"})
        assert r.status == 201
        out = r.json()
        assert out["extracted"] == 3 == len(out["memories"])
        assert [m["content"] for m in out["memories"]] == ["I always use TypeScript.", "What about Python?", "Only for scripts."]
        assert all(m["type"] == "semantic" and m["source"]["tool"] == "claude" and ID_RE.match(m["id"]) for m in out["memories"])
        r = target.request("POST", "/v1/compress", json_body={"transcript": TRANSCRIPT})
        memory = r.json()["memory"]
        assert r.status == 201 and memory["type"] == "episodic" and memory["tags"] == ["session-summary"]
        assert memory["source"]["tool"] == "omp-extract"
        assert len(export_ids(target)) == 4
        r = target.request("POST", "/v1/extract", json_body={"transcript": TRANSCRIPT}, headers=key(target, "a"))
        assert {m["source"]["tool"] for m in r.json()["memories"]} == {TOOL_A}
    finally:
        target.close()


# --- concurrency -------------------------------------------------------------------------------------------


def run_writers(target: ServedTarget, clients: int, rounds: int) -> dict[str, Any]:
    """Each client creates `rounds` memories, updates each, deletes every other; returns what was acknowledged."""
    space = ns()
    acked: dict[str, str] = {}
    deleted: set[str] = set()
    lock = threading.Lock()
    errors: list[str] = []

    def client(n: int) -> None:
        with httpx.Client(base_url=target.base_url, headers={"Authorization": f"Bearer {target.api_key}"}, timeout=10) as c:
            for i in range(rounds):
                r = c.post("/v1/memories", json=body(f"client {n} item {i}", namespace=space))
                if r.status_code != 201:
                    errors.append(r.text)
                    continue
                mid = r.json()["id"]
                r = c.put(f"/v1/memories/{mid}", json={"content": f"client {n} item {i} updated"})
                with lock:
                    acked[mid] = f"client {n} item {i}" + (" updated" if r.status_code == 200 else "")
                if i % 2 and c.delete(f"/v1/memories/{mid}").status_code == 204:
                    with lock:
                        deleted.add(mid)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    stored = [m for m in target.request("GET", "/v1/export").json()["memories"] if m.get("namespace") == space]
    by_id = {m["id"]: m["content"] for m in stored}
    return {
        "errors": errors,
        "duplicated": len(stored) - len(by_id),
        "lost": sorted(i for i in acked if i not in deleted and by_id.get(i) != acked[i]),
        "resurrected": sorted(i for i in deleted if i in by_id),
        "acknowledged": len(acked),
    }


def test_concurrent_writers_lose_nothing(ref):
    out = run_writers(ref, clients=8, rounds=6)
    assert out == {"errors": [], "duplicated": 0, "lost": [], "resurrected": [], "acknowledged": 48}


def test_the_racy_mutant_loses_writes_under_the_same_load():
    target = MUTANTS["lost_update_under_concurrency"]()
    try:
        out = run_writers(target, clients=4, rounds=3)
        assert out["lost"] or out["resurrected"], out
    finally:
        target.close()


# --- mutants, stall detector, serve ---------------------------------------------------------------------------


def mutant_serves_health(name: str) -> str | None:
    """None when the mutant starts, serves health and shuts down; else what went wrong."""
    target = open_target(f"python:memconform.suites.omp.mutants:{name}")
    try:
        if not isinstance(target, ServedTarget) or target.omp_facts.credentials is None or not MUTANTS[name].__doc__:
            return "not a ServedTarget with credentials and a docstring"
        status = target.request("GET", "/v1/health", auth=False).status
        if status != (401 if name == "health_requires_auth" else 200):
            return f"health without a key answered {status}"
        level = target.request("GET", "/v1/health").json().get("compliance")
        return None if level == "OMP-Full" else f"health declares {level!r}"
    finally:
        target.close()


def test_every_mutant_starts_and_serves_health():
    with ThreadPoolExecutor(max_workers=8) as pool:  # a server takes ~0.2 s to stop: start them side by side
        problems = dict(zip(MUTANTS, pool.map(mutant_serves_health, MUTANTS), strict=True))
    assert {name: p for name, p in problems.items() if p} == {}
    assert len(MUTANTS) >= 33


def test_reference_resolves_by_name():
    target = open_target("reference:omp")
    try:
        assert isinstance(target, ServedTarget) and target.base_url.startswith("http://127.0.0.1:")
    finally:
        target.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_omp_prints_working_keys():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memconform.cli.main", "serve", "omp", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        lines = [proc.stdout.readline() for _ in range(8)]  # type: ignore[union-attr]
        keys = dict(re.findall(r"^\s+(global key|other-user key):\s+(\S+)", "".join(lines), re.M))
        credentials = re.search(r"credentials file:\s+(\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        audit_log = re.search(r"audit log:\s+(\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        assert set(keys) == {"global key", "other-user key"} and os.path.exists(credentials) and os.path.exists(audit_log)
        assert f"--api-key={keys['global key']}" in lines[-1] and f"--option omp.server_log={audit_log}" in lines[-1]
        deadline = time.monotonic() + 10
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/v1/memories", headers={"Authorization": f"Bearer {keys['global key']}"})
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert r.status_code == 200 and r.json()["total"] == 0
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
    assert not os.path.exists(credentials) and not os.path.exists(audit_log)


def test_empty_text_is_a_string_like_any_other(ref):
    """Errata O34: the spec gives content, source.tool and q a maximum only; the reference accepts "" (a target
    refusing it is another accepted reading, not blamed)."""
    made = ref.request("POST", "/v1/memories", json_body=dict(body(""), source={"tool": "", "timestamp": STAMP}))
    assert made.status == 201, made.raw
    assert made.json()["content"] == "" and made.json()["source"]["tool"] == ""
    found = ref.request("POST", "/v1/memories/search", json_body={"q": ""})
    assert found.status == 200 and isinstance(found.json()["memories"], list)
