"""Self-test of the omp2 server: the clean build behaves as its README says, and each bug changes behaviour.

Loopback only; every server is started here and stopped at the end.
"""

import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from omp2_client import SERVER, RunningServer, memory  # noqa: E402

BUGS = [entry["name"] for entry in json.loads(Path(__file__).with_name("bugs.json").read_text())]


@pytest.fixture(scope="module")
def clean():
    server = RunningServer()
    yield server
    server.stop()
    server.cleanup()


def fresh_namespace() -> str:
    return "ns:" + uuid.uuid4().hex[:12]


def create(server, body, key="global"):
    status, reply, _ = server.call("POST", "/v1/memories", body, key=key)
    assert status == 201, reply
    return reply


def contents(server, query: str, key="global") -> list:
    status, reply, _ = server.call("GET", "/v1/memories?" + query, key=key)
    assert status == 200, reply
    return [m["content"] for m in reply["memories"]]


# ---- one observation per bug: the clean value is what the spec asks for ----------------------------------


def observe_limit_not_capped(server):
    ns = fresh_namespace()
    items = [memory(f"note {i}", ns) for i in range(101)]
    assert server.call("POST", "/v1/import", {"omp_version": "0.1", "memories": items})[0] == 200
    _, reply, _ = server.call("GET", f"/v1/memories?namespace={ns}&limit=150")
    return len(reply["memories"]), reply["limit"]


def observe_total_is_page_count(server):
    ns = fresh_namespace()
    for i in range(5):
        create(server, memory(f"page item {i}", ns))
    return server.call("GET", f"/v1/memories?namespace={ns}&limit=2")[1]["total"]


def observe_tags_or_logic(server):
    ns = fresh_namespace()
    create(server, memory("only x", ns, tags=["x"]))
    create(server, memory("only y", ns, tags=["y"]))
    create(server, memory("both", ns, tags=["x", "y"]))
    return sorted(contents(server, f"namespace={ns}&tags=x,y"))


def observe_updated_sort_falls_back(server):
    ns = fresh_namespace()
    first = create(server, memory("older", ns))
    create(server, memory("newer", ns))
    assert server.call("PUT", f"/v1/memories/{first['id']}", {"content": "older, edited"})[0] == 200
    return contents(server, f"namespace={ns}&sort=updated_at_desc")[0]


def observe_put_replaces_whole(server):
    ns = fresh_namespace()
    made = create(server, memory("keep my tags", ns, tags=["ui"], metadata={"k": 1}))
    _, reply, _ = server.call("PUT", f"/v1/memories/{made['id']}", {"content": "changed"})
    return reply["tags"], reply.get("namespace") == ns, reply["metadata"]


def observe_delete_returns_200(server):
    made = create(server, memory("to delete", fresh_namespace()))
    status, body, _ = server.call("DELETE", f"/v1/memories/{made['id']}")
    return status, body


def observe_import_aborts_midway(server):
    ns = fresh_namespace()
    items = [memory("good one", ns), {"content": "no type or source"}, memory("good two", ns)]
    status, reply, _ = server.call("POST", "/v1/import", {"omp_version": "0.1", "memories": items})
    return status, reply.get("imported"), sorted(contents(server, f"namespace={ns}"))


def observe_import_duplicate_reuses_id(server):
    given = "mem_" + uuid.uuid4().hex[:16]
    item = memory("duplicate me", fresh_namespace(), id=given)
    server.call("POST", "/v1/import?conflict=duplicate", {"omp_version": "0.1", "memories": [item]})
    return server.call("GET", f"/v1/memories/{given}")[0]


def observe_content_length_in_bytes(server):
    return server.call("POST", "/v1/memories", memory("é" * 10_000, fresh_namespace()))[0]


def observe_semantic_ignores_filters(server):
    ns = fresh_namespace()
    create(server, memory("dark mode theme settings", ns))
    create(server, memory("dark mode theme settings", fresh_namespace()))
    body = {"q": "dark theme", "mode": "semantic", "namespace": ns}
    return server.call("POST", "/v1/memories/search", body)[1]["total"]


def observe_tool_key_reads_all(server):
    ns = fresh_namespace()
    create(server, memory("written by cursor", ns, source={"tool": "cursor"}))
    return contents(server, f"namespace={ns}", key="claude")


def observe_cross_user_get_by_id(server):
    made = create(server, memory("user one's secret", fresh_namespace()))
    return server.call("GET", f"/v1/memories/{made['id']}", key="other")[0]


def observe_compress_without_key(server):
    status, reply, _ = server.call("POST", "/v1/compress", {"transcript": "We shipped. It went fine."})
    return status, reply.get("error")


def observe_content_logged(server):
    marker = "plaintext-marker-" + uuid.uuid4().hex
    create(server, memory(marker, fresh_namespace()))
    return marker in server.stderr_path.read_text()


EXPECTED_CLEAN = {
    "limit_not_capped": (100, 100),
    "total_is_page_count": 5,
    "tags_or_logic": ["both"],
    "updated_sort_falls_back": "older, edited",
    "put_replaces_whole": (["ui"], True, {"k": 1}),
    "delete_returns_200": (204, None),
    "import_aborts_midway": (200, 2, ["good one", "good two"]),
    "import_duplicate_reuses_id": 404,
    "content_length_in_bytes": 201,
    "semantic_ignores_filters": 1,
    "tool_key_reads_all": [],
    "cross_user_get_by_id": 404,
    "compress_without_key": (422, "no_api_key"),
    "content_logged": False,
}


def test_every_bug_has_an_observation():
    assert sorted(EXPECTED_CLEAN) == sorted(BUGS)


@pytest.mark.parametrize("bug", BUGS)
def test_bug_changes_behaviour(bug, clean):
    observe = globals()[f"observe_{bug}"]
    clean_value = observe(clean)
    assert clean_value == EXPECTED_CLEAN[bug]
    bugged = RunningServer(bugs=bug)
    try:
        assert observe(bugged) != clean_value
    finally:
        bugged.stop()
        bugged.cleanup()


# ---- the clean server, beyond the bug scenarios ----------------------------------------------------------


def test_credentials_file_and_keys(clean):
    mode = stat.S_IMODE(os.stat(clean.credentials).st_mode)
    assert mode == 0o600
    keys = [clean.keys["api_key"], clean.keys["other_user_key"], *clean.keys["tool_keys"].values()]
    assert set(clean.keys["tool_keys"]) == {"claude", "cursor"}
    assert len(set(keys)) == 4 and all(len(k) >= 32 for k in keys)


def test_health_without_auth_and_auth_errors(clean):
    status, body, _ = clean.call("GET", "/v1/health", key=None)
    assert status == 200 and body["status"] == "ok" and isinstance(body["memories_count"], int)
    status, body, headers = clean.call("GET", "/v1/memories", key=None)
    assert status == 401 and body["error"] == "unauthorized" and "message" in body and body["details"] == {}
    assert clean.call("GET", "/v1/memories", key="x" * 43)[0] == 401


def test_crud_round_trip(clean):
    made = create(clean, memory("round trip", fresh_namespace(), tags=["a"]))
    assert len(made["id"]) == 20 and made["id"].startswith("mem_")
    assert made["created_at"] == made["updated_at"] and made["expires_at"] is None
    assert clean.call("GET", f"/v1/memories/{made['id']}")[1] == made
    status, updated, _ = clean.call("PUT", f"/v1/memories/{made['id']}", {"tags": ["b"]})
    assert status == 200 and updated["tags"] == ["b"] and updated["content"] == "round trip"
    assert updated["created_at"] == made["created_at"] and updated["updated_at"] >= made["updated_at"]
    assert clean.call("DELETE", f"/v1/memories/{made['id']}")[0] == 204
    status, body, _ = clean.call("GET", f"/v1/memories/{made['id']}")
    assert status == 404 and body["error"] == "memory_not_found"


@pytest.mark.parametrize(
    "change",
    [
        {"type": "opinion"},
        {"content": "x" * 10_001},
        {"tags": ["t"] * 21},
        {"tags": ["t" * 51]},
        {"namespace": "n" * 101},
        {"metadata": {str(i): i for i in range(11)}},
        {"source": {"timestamp": "2026-06-29T12:00:00Z"}},
        {"expires_at": "tomorrow"},
    ],
)
def test_invalid_bodies_are_422(clean, change):
    status, body, _ = clean.call("POST", "/v1/memories", {**memory("v", fresh_namespace()), **change})
    assert status == 422 and body["error"] == "validation_error"


def test_boundaries_accepted(clean):
    body = memory("x" * 10_000, "n" * 100, tags=["t" * 50] * 20, metadata={str(i): i for i in range(10)})
    assert clean.call("POST", "/v1/memories", body)[0] == 201


def test_search_modes(clean):
    ns = fresh_namespace()
    create(clean, memory("User prefers TypeScript over JavaScript", ns, tags=["lang"]))
    create(clean, memory("User always runs tests before committing", ns, type="procedural"))

    def search(body):
        status, reply, _ = clean.call("POST", "/v1/memories/search", {"namespace": ns, **body})
        assert status == 200, reply
        return reply

    keyword = search({"q": "typescript"})
    assert keyword["mode_used"] == "keyword" and [m["content"][:10] for m in keyword["memories"]] == [
        "User prefe"
    ]
    assert search({"q": "preference", "mode": "semantic"})["total"] == 1
    assert search({"q": "test commit", "mode": "hybrid", "type": "procedural"})["total"] == 1
    assert search({"q": "typescript", "tags": ["nope"]})["total"] == 0
    assert clean.call("POST", "/v1/memories/search", {"q": "x", "mode": "fuzzy"})[0] == 422


def test_export_and_import_strategies(clean):
    ns = fresh_namespace()
    made = create(clean, memory("exported", ns))
    exported = clean.call("GET", "/v1/export")[1]
    assert exported["omp_version"] == "0.1" and made in exported["memories"]
    item = {**made, "content": "overwritten"}
    skip = clean.call("POST", "/v1/import", {"omp_version": "0.1", "memories": [item]})[1]
    assert skip == {"imported": 0, "skipped": 1, "errors": []}
    assert clean.call("POST", "/v1/import?conflict=overwrite", {"memories": [item]})[1]["imported"] == 1
    assert clean.call("GET", f"/v1/memories/{made['id']}")[1]["content"] == "overwritten"
    clean.call("POST", "/v1/import?conflict=duplicate", {"memories": [item]})
    assert sorted(contents(clean, f"namespace={ns}")) == ["overwritten", "overwritten"]
    assert clean.call("POST", "/v1/import?conflict=merge", {"memories": []})[0] == 422


def test_tool_keys_and_users(clean):
    ns = fresh_namespace()
    create(clean, memory("by claude", ns), key="claude")
    status, body, _ = clean.call(
        "POST", "/v1/memories", memory("as cursor", ns, source={"tool": "cursor"}), key="claude"
    )
    assert status == 403 and body["error"] == "forbidden"
    assert contents(clean, f"namespace={ns}", key="cursor") == []
    assert contents(clean, f"namespace={ns}", key="global") == ["by claude"]
    assert contents(clean, f"namespace={ns}", key="other") == []


def test_ai_endpoints_without_provider(clean):
    for path in ("/v1/extract", "/v1/compress"):
        status, body, _ = clean.call("POST", path, {"transcript": "Alice: I use TypeScript."})
        assert (status, body["error"]) == (422, "no_api_key")
        status, body, _ = clean.call("POST", path, {"transcript": "t", "api_key": "sk-test"})
        assert (status, body["error"]) == (502, "ai_error")
        assert clean.call("POST", path, {})[1]["error"] == "validation_error"


def test_unknown_bug_name_refuses_to_start(tmp_path):
    env = {**os.environ, "SECOND_OPINION_BUGS": "no_such_bug"}
    result = subprocess.run(
        [sys.executable, str(SERVER), "--credentials", str(tmp_path / "c.json")],
        env=env,
        capture_output=True,
        timeout=10,
    )
    assert result.returncode != 0 and result.stdout == b"" and not (tmp_path / "c.json").exists()
