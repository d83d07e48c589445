"""Self-test of the second-opinion OMP server: end to end over loopback HTTP, then one visible
behaviour change per switchable bug (each bug in its own server process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
BUG_NAMES = [b["name"] for b in json.loads((HERE / "bugs.json").read_text())]


class Api:
    def __init__(self, proc: subprocess.Popen, url: str, creds: dict) -> None:
        self.proc, self.url, self.creds = proc, url, creds
        self.key = creds["api_key"]

    def call(self, method: str, path: str, body=None, key: str | None = "main"):
        headers = {"Content-Type": "application/json"}
        token = {"main": self.key, "other": self.creds["other_user_key"]}.get(key, key)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, (json.loads(raw) if raw else None)

    def create(self, content: str, key: str | None = "main", **extra):
        body = {"content": content, "type": "semantic",
                "source": {"tool": extra.pop("tool", "claude"), "timestamp": "2026-06-29T12:00:00Z"}, **extra}
        status, memory = self.call("POST", "/v1/memories", body, key)
        assert status == 201, memory
        return memory


def start(tmp: Path, bugs: str = "") -> Api:
    creds_file = tmp / f"creds-{bugs or 'clean'}.json"
    env = {**os.environ, "SECOND_OPINION_BUGS": bugs}
    env.pop("OMP_AI_API_KEY", None)
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--credentials", str(creds_file),
                             "--audit-log", str(tmp / f"audit-{bugs or 'clean'}.log")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return Api(proc, url, json.loads(creds_file.read_text()))


def stop(api: Api) -> None:
    api.proc.terminate()
    try:
        api.proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        api.proc.kill()
        api.proc.wait()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("omp")
    with ThreadPoolExecutor(max_workers=4) as pool:
        started = dict(zip(["", *BUG_NAMES], pool.map(lambda b: start(tmp, b), ["", *BUG_NAMES])))
    yield started
    for api in started.values():
        stop(api)


# ------------------------------------------------------------------------------------------------
# clean behaviour, end to end

def test_credentials_and_health(servers):
    api = servers[""]
    assert len(api.key) >= 32 and set(api.creds) == {"api_key", "tool_keys", "other_user_key"}
    status, body = api.call("GET", "/v1/health", key=None)
    assert status == 200 and body["status"] == "ok" and body["version"] == "0.1"
    assert isinstance(body["memories_count"], int) and body["compliance_level"] == "OMP-Full"
    assert api.call("GET", "/v1/memories", key=None)[0] == 401
    status, err = api.call("GET", "/v1/memories", key="omp_" + "x" * 40)
    assert status == 401 and err["error"] == "unauthorized" and "message" in err and "details" in err


def test_crud_round_trip(servers):
    api = servers[""]
    m = api.create("clean crud round trip", tags=["a", "b"], namespace="project:crud", metadata={"k": 1})
    assert m["id"].startswith("mem_") and len(m["id"]) == 20 and m["expires_at"] is None
    assert api.call("GET", f"/v1/memories/{m['id']}") == (200, m)
    time.sleep(0.002)
    status, upd = api.call("PUT", f"/v1/memories/{m['id']}", {"content": "clean crud updated"})
    assert status == 200 and upd["content"] == "clean crud updated"
    assert upd["tags"] == ["a", "b"] and upd["metadata"] == {"k": 1} and upd["namespace"] == "project:crud"
    assert upd["created_at"] == m["created_at"] and upd["updated_at"] > m["updated_at"]
    assert api.call("PUT", f"/v1/memories/{m['id']}", {"content": "x" * 10_001})[0] == 422
    assert api.call("PUT", f"/v1/memories/{m['id']}", {"content": "x" * 10_000})[0] == 200
    assert api.call("DELETE", f"/v1/memories/{m['id']}") == (204, None)
    status, err = api.call("GET", f"/v1/memories/{m['id']}")
    assert status == 404 and err["error"] == "memory_not_found" and "message" in err
    status, err = api.call("POST", "/v1/memories", {"content": "no type", "source": {"tool": "t",
                                                                                   "timestamp": "2026-06-29T12:00:00Z"}})
    assert status == 422 and err["error"] == "validation_error"
    assert api.call("POST", "/v1/memories", {"content": "t", "type": "semantic", "tags": ["x"] * 21,
                                             "source": {"tool": "t", "timestamp": "2026-06-29T12:00:00Z"}})[0] == 422


def test_list_filters_paging_sort(servers):
    api = servers[""]
    ns = "project:list-clean"
    made = [api.create(f"list clean {i}", namespace=ns, tags=["x"] + (["y"] if i % 2 else [])) for i in range(5)]
    status, page = api.call("GET", f"/v1/memories?namespace={ns}&limit=2&offset=1")
    assert status == 200 and page["total"] == 5 and page["limit"] == 2 and page["offset"] == 1
    assert [m["id"] for m in page["memories"]] == [made[3]["id"], made[2]["id"]]
    assert api.call("GET", f"/v1/memories?namespace={ns}&tags=x,y")[1]["total"] == 2
    asc = api.call("GET", f"/v1/memories?namespace={ns}&sort=created_at_asc")[1]["memories"]
    assert [m["id"] for m in asc] == [m["id"] for m in made]
    api.call("PUT", f"/v1/memories/{made[0]['id']}", {"tags": ["x", "z"]})
    upd = api.call("GET", f"/v1/memories?namespace={ns}&sort=updated_at_desc")[1]["memories"]
    assert upd[0]["id"] == made[0]["id"]
    assert api.call("GET", "/v1/memories?limit=1000")[1]["limit"] == 100
    assert api.call("GET", "/v1/memories?sort=bogus")[0] == 422


def test_search_modes(servers):
    api = servers[""]
    api.create("User prefers xylophonic dark mode", namespace="project:s1", tags=["ui"])
    api.create("User asked about xylophonic Python async", namespace="project:s2")
    status, res = api.call("POST", "/v1/memories/search", {"q": "XYLOPHONIC", "namespace": "project:s1"})
    assert status == 200 and res["mode_used"] == "keyword" and res["total"] == 1
    res = api.call("POST", "/v1/memories/search", {"q": "python async", "mode": "semantic"})[1]
    assert res["mode_used"] == "semantic" and "Python async" in res["memories"][0]["content"]
    assert api.call("POST", "/v1/memories/search", {"q": "xylophonic", "mode": "hybrid"})[1]["total"] == 2
    assert api.call("POST", "/v1/memories/search", {"q": "x", "mode": "fuzzy"})[0] == 422


def test_export_import_strategies(servers):
    api = servers[""]
    m = api.create("export me", namespace="project:exp")
    status, exp = api.call("GET", "/v1/export")
    assert status == 200 and exp["omp_version"] == "0.1" and any(x["id"] == m["id"] for x in exp["memories"])
    one = {"omp_version": "0.1", "memories": [dict(m, content="imported version")]}
    assert api.call("POST", "/v1/import", one)[1] == {"imported": 0, "skipped": 1, "errors": []}
    assert api.call("POST", "/v1/import?conflict=overwrite", one)[1]["imported"] == 1
    assert api.call("GET", f"/v1/memories/{m['id']}")[1]["content"] == "imported version"
    fresh = dict(m, id="mem_" + "q" * 16)
    assert api.call("POST", "/v1/import?conflict=duplicate", {"memories": [fresh]})[1]["imported"] == 1
    assert api.call("GET", f"/v1/memories/{fresh['id']}")[0] == 404
    bad = {"memories": [dict(m, type="nonsense")]}
    res = api.call("POST", "/v1/import?conflict=overwrite", bad)[1]
    assert res["imported"] == 0 and res["errors"][0]["error"] == "validation_error"
    assert api.call("GET", f"/v1/memories/{m['id']}")[0] == 200
    assert api.call("POST", "/v1/import?conflict=merge", one)[0] == 422


def test_isolation_and_tool_keys(servers):
    api = servers[""]
    mine = api.create("isolated memory", tool="cursor")
    assert api.call("GET", f"/v1/memories/{mine['id']}", key="other")[0] == 404
    assert api.call("DELETE", f"/v1/memories/{mine['id']}", key="other")[0] == 404
    claude = api.creds["tool_keys"]["claude"]
    assert api.call("GET", f"/v1/memories/{mine['id']}", key=claude)[0] == 403
    assert api.call("POST", "/v1/memories", {"content": "c", "type": "semantic",
                                             "source": {"tool": "cursor", "timestamp": "2026-06-29T12:00:00Z"}},
                    key=claude)[0] == 403
    listed = api.call("GET", "/v1/memories?limit=100", key=claude)[1]["memories"]
    assert listed and all(x["source"]["tool"] == "claude" for x in listed)


def test_extract_compress_without_ai_key(servers):
    api = servers[""]
    body = {"transcript": "Alice: I always use TypeScript. Bob: What about Python? Alice: Only for scripts."}
    status, err = api.call("POST", "/v1/extract", body)
    assert status == 422 and err["error"] == "no_api_key"
    assert api.call("POST", "/v1/compress", body)[1]["error"] == "no_api_key"
    status, res = api.call("POST", "/v1/extract", dict(body, api_key="local"))
    assert status == 201 and res["extracted"] == len(res["memories"]) >= 1
    status, res = api.call("POST", "/v1/compress", dict(body, api_key="local", source_tool="claude"))
    assert status == 201 and res["memory"]["type"] == "episodic" and res["memory"]["tags"] == ["session-summary"]


# ------------------------------------------------------------------------------------------------
# each bug visibly changes behaviour

def test_bug_put_resets_omitted_fields(servers):
    api = servers["put_resets_omitted_fields"]
    m = api.create("bug put", tags=["keep"], metadata={"k": 1})
    assert api.call("PUT", f"/v1/memories/{m['id']}", {"content": "bug put 2"})[1]["tags"] == []


def test_bug_tags_filter_or_logic(servers):
    api = servers["tags_filter_or_logic"]
    api.create("bug tags a", namespace="project:t", tags=["a"])
    api.create("bug tags ab", namespace="project:t", tags=["a", "b"])
    assert api.call("GET", "/v1/memories?namespace=project:t&tags=a,b")[1]["total"] == 2


def test_bug_filter_after_paging(servers):
    api = servers["filter_after_paging"]
    api.create("bug paging target", namespace="project:p")
    for i in range(3):
        api.create(f"bug paging filler {i}", namespace="project:other")
    page = api.call("GET", "/v1/memories?namespace=project:p&limit=2")[1]
    assert page["total"] == 1 and page["memories"] == []


def test_bug_updated_at_sort_uses_created(servers):
    api = servers["updated_at_sort_uses_created"]
    old = api.create("bug sort old", namespace="project:s")
    api.create("bug sort new", namespace="project:s")
    api.call("PUT", f"/v1/memories/{old['id']}", {"content": "bug sort old, touched"})
    first = api.call("GET", "/v1/memories?namespace=project:s&sort=updated_at_desc")[1]["memories"][0]
    assert first["id"] != old["id"]


def test_bug_search_ignores_namespace(servers):
    api = servers["search_ignores_namespace"]
    api.create("bug marimba here", namespace="project:n1")
    api.create("bug marimba there", namespace="project:n2")
    assert api.call("POST", "/v1/memories/search", {"q": "marimba", "namespace": "project:n1"})[1]["total"] == 2


def test_bug_import_duplicate_reuses_free_ids(servers):
    api = servers["import_duplicate_reuses_free_ids"]
    m = api.create("bug dup")
    fresh = dict(m, id="mem_" + "d" * 16)
    api.call("POST", "/v1/import?conflict=duplicate", {"memories": [fresh]})
    assert api.call("GET", f"/v1/memories/{fresh['id']}")[0] == 200


def test_bug_import_overwrite_loses_on_invalid(servers):
    api = servers["import_overwrite_loses_on_invalid"]
    m = api.create("bug overwrite")
    api.call("POST", "/v1/import?conflict=overwrite", {"memories": [dict(m, type="nonsense")]})
    assert api.call("GET", f"/v1/memories/{m['id']}")[0] == 404


def test_bug_delete_cross_user(servers):
    api = servers["delete_cross_user"]
    m = api.create("bug victim")
    assert api.call("DELETE", f"/v1/memories/{m['id']}", key="other")[0] == 204


def test_bug_tool_key_list_unscoped(servers):
    api = servers["tool_key_list_unscoped"]
    api.create("bug cursor memory", tool="cursor")
    listed = api.call("GET", "/v1/memories", key=api.creds["tool_keys"]["claude"])[1]["memories"]
    assert any(x["source"]["tool"] == "cursor" for x in listed)


def test_bug_error_envelope_bare(servers):
    api = servers["error_envelope_bare"]
    assert api.call("GET", "/v1/memories/mem_0000000000000000") == (404, {"error": "memory_not_found"})


def test_bug_stores_lone_surrogates(servers):
    """Not planted: memconform's first run found it; the clean server now refuses the body."""
    body = {"content": "\ud800 lone", "type": "semantic", "source": {"tool": "claude", "timestamp": "2026-06-29T12:00:00Z"}}
    assert servers[""].call("POST", "/v1/memories", body)[0] == 422
    api = servers["stores_lone_surrogates"]
    assert api.call("POST", "/v1/memories", body)[0] == 500
    assert api.call("GET", "/v1/memories")[0] == 500


def test_every_bug_has_a_test():
    names = {n[len("test_bug_"):] for n in globals() if n.startswith("test_bug_")}
    assert names == set(BUG_NAMES)
