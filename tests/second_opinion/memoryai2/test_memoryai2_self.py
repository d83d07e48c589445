"""Self-test of the memoryai2 second opinion: clean behaviour end to end, and each planted bug observable."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
MODEL = "memoryai2-hash-embed-v1"
DIM = 8


class Target:
    def __init__(self, state: Path, bugs: str = ""):
        env = dict(os.environ, SECOND_OPINION_STATE=str(state), SECOND_OPINION_BUGS=bugs)
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0"], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.proc.stderr.read()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(5)
        self.proc.stdout.close()
        self.proc.stderr.close()

    def call(self, path: str, body: object = None, *, method: str = "POST", raw: bytes | None = None,
             headers: dict | None = None) -> tuple[int, bytes, dict]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer k",
                                              **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as err:
            return err.code, err.read(), dict(err.headers)

    def json(self, path: str, body: object = None, **kw) -> tuple[int, dict]:
        status, data, _ = self.call(path, body, **kw)
        return status, json.loads(data)

    def export(self, scope: str = "full", **extra) -> dict:
        status, bundle = self.json("/v1/brain/export", {"scope": scope, **extra})
        assert status == 200, bundle
        return bundle

    def import_(self, bundle: dict) -> tuple[int, dict]:
        return self.json("/v1/brain/import", bundle)


@pytest.fixture
def start(tmp_path):
    started: list[Target] = []

    def _start(bugs: str = "", state: str = "state") -> Target:
        target = Target(tmp_path / state, bugs)
        started.append(target)
        return target

    yield _start
    for target in started:
        target.close()


def checksum(bundle: dict) -> str:
    body = json.loads(json.dumps(bundle))
    body["manifest"].pop("checksum", None)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def emb(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def chunk(content: str, memory_type: str = "fact", cid: int = 1, **extra) -> dict:
    return {"id": cid, "content": content, "content_hash": hashlib.sha256(content.encode()).hexdigest(),
            "memory_type": memory_type, **extra}


def bundle(chunks=(), edges=(), entities=(), *, model: str = MODEL, dim: int = DIM, version: int = 1,
           tenant_id: str | None = None) -> dict:
    out = {
        "format": "memoryai-bundle", "version": version, "generator": "selftest/1", "exported_at": "2026-01-01T00:00:00Z",
        "manifest": {"tenant_id": tenant_id, "tenant_name": None, "tenant_plan": None, "scope": "full", "since": None,
                     "embedding_model": model, "embedding_dim": dim,
                     "counts": {"chunks": len(chunks), "memory_edges": len(edges), "entities": len(entities),
                                "l2_sessions": 0, "mood_states": 0, "agents": 0}},
        "chunks": list(chunks), "memory_edges": list(edges), "entities": list(entities),
        "l2_sessions": [], "mood_states": [], "agents": [],
    }
    out["manifest"]["checksum"] = checksum(out)
    return out


def uniq(label: str) -> str:
    return f"{label} {uuid.uuid4().hex}"


def hashes(b: dict) -> set[str]:
    return {c["content_hash"] for c in b["chunks"]}


VEC = [0.25, -1.5, 3.0, 0.0, 1e-3, 2.5, -0.125, 7.0]


# ------------------------------------------------------------------ clean behaviour


def test_clean_end_to_end(start):
    t = start()
    empty = t.export()
    assert empty["format"] == "memoryai-bundle" and empty["version"] == 1
    assert {"scope", "embedding_model", "embedding_dim", "checksum", "counts"} <= set(empty["manifest"])
    assert empty["manifest"]["checksum"] == checksum(empty)

    fact, pref, pinned = uniq("fact"), uniq("pref"), uniq("pinned")
    b = bundle([chunk(fact, cid=10, embedding=emb(VEC), metadata={"api_key": "sk-x", "note": "ok"}),
                chunk(pref, "preference", cid=11), chunk(pinned, cid=12, is_pinned=True)],
               edges=[{"chunk_a": 10, "chunk_b": 11, "edge_type": "co", "weight": 0.5, "co_activation_count": 2}],
               entities=[{"name": "Ada", "frequency": 2, "is_dna": True}],
               tenant_id="11111111-1111-1111-1111-111111111111")
    status, rep = t.import_(b)
    assert status == 200 and rep["success"] is True
    r = rep["report"]
    assert r["chunks"] == {"inserted": 3, "skipped_duplicate": 0, "skipped_invalid": 0}
    assert r["memory_edges"]["upserted"] == 1 and r["entities"]["upserted"] == 1
    assert r["embedding_model_match"] is True and r["bundle_version"] == 1
    assert not any("checksum" in w for w in r["warnings"])

    out = t.export()
    assert out["manifest"]["checksum"] == checksum(out)
    assert out["manifest"]["tenant_id"] != "11111111-1111-1111-1111-111111111111"
    assert all(out["manifest"]["counts"][k] == len(out[k]) for k in out["manifest"]["counts"])
    by = {c["content"]: c for c in out["chunks"]}
    got = struct.unpack(f"<{DIM}f", base64.b64decode(by[fact]["embedding"]))
    assert list(got) == pytest.approx(VEC)
    assert "api_key" not in by[fact]["metadata"] and by[fact]["metadata"]["note"] == "ok"
    assert "sk-x" not in json.dumps(out)

    # idempotent re-import, round trip
    status, rep = t.import_(out)
    assert rep["report"]["chunks"]["skipped_duplicate"] == len(out["chunks"])
    assert rep["report"]["chunks"]["inserted"] == 0
    again = t.export()
    assert hashes(again) == hashes(out)
    assert {e["name"] for e in again["entities"]} == {e["name"] for e in out["entities"]}

    # dna_only scope
    dna = t.export("dna_only")
    assert {pref, pinned} <= {c["content"] for c in dna["chunks"]} and fact not in {c["content"] for c in dna["chunks"]}

    # NDJSON stream
    status, data, headers = t.call("/v1/brain/export/stream", {"scope": "full"})
    lines = [json.loads(x) for x in data.decode().splitlines()]
    assert status == 200 and "ndjson" in headers["Content-Type"]
    assert lines[0]["manifest"]["counts"]["chunks"] == sum(1 for x in lines[1:] if x["section"] == "chunks")

    # spec
    status, data, _ = t.call("/v1/spec", method="GET")
    assert status == 200 and b"MemoryAI Protocol v1" in data


def test_clean_rejections_and_warnings(start):
    t = start()
    assert t.import_(bundle(version=2))[0] == 422
    bad = bundle()
    bad["format"] = "memoryai-bundle-v1"
    assert t.import_(bad)[0] == 422
    assert t.call("/v1/brain/import", raw=b"{not json")[0] == 400
    nodim = bundle()
    del nodim["manifest"]["embedding_dim"]
    assert t.import_(nodim)[0] == 422

    tampered = bundle([chunk(uniq("tampered"))])
    tampered["chunks"][0]["tags"] = ["changed"]
    status, rep = t.import_(tampered)
    assert status == 200 and rep["report"]["chunks"]["inserted"] == 1
    assert any("checksum" in w for w in rep["report"]["warnings"])

    other = uniq("other-model")
    status, rep = t.import_(bundle([chunk(other, embedding=emb([1.0, 2.0]))], model="other", dim=2))
    assert rep["report"]["embedding_model_match"] is False and rep["report"]["chunks"]["inserted"] == 1
    assert {c["content"]: c for c in t.export()["chunks"]}[other]["embedding"] is None

    status, rep = t.import_(bundle([chunk(uniq("short"), embedding=emb([1.0, 2.0]))]))
    assert rep["report"]["chunks"]["skipped_invalid"] == 1
    status, rep = t.import_(bundle([chunk(uniq("weird"), "note")]))
    assert rep["report"]["chunks"]["skipped_invalid"] == 1
    status, rep = t.import_(bundle([chunk(uniq("vendor"), "x_vendor_note")]))
    assert rep["report"]["chunks"]["inserted"] == 1
    floaty = bundle()
    floaty["version"] = 1.0
    assert t.import_(floaty)[0] == 422


def test_clean_since_scope(start):
    t = start()
    old, new = uniq("old"), uniq("new")
    t.import_(bundle([chunk(old, cid=1, created_at="2020-01-01T00:00:00Z"),
                      chunk(new, cid=2, created_at="2030-01-01T00:00:00Z")]))
    out = t.export("since", since="2025-01-01T00:00:00Z")
    contents = {c["content"] for c in out["chunks"]}
    assert new in contents and old not in contents
    assert out["manifest"]["scope"] == "since" and out["manifest"]["since"] == "2025-01-01T00:00:00Z"
    assert t.json("/v1/brain/export", {"scope": "since"})[0] == 422
    assert t.json("/v1/brain/export", {"scope": "everything"})[0] == 422


def test_clean_import_file_decay_delete(start):
    t = start()
    names = {k: uniq(k) for k in ("fact", "decision", "critical", "pinned", "dying")}
    b = bundle([chunk(names["fact"], cid=1), chunk(names["decision"], "decision", cid=2, decay_score=0.05),
                chunk(names["critical"], cid=3, zone="critical", decay_score=0.05),
                chunk(names["pinned"], cid=4, is_pinned=True, decay_score=0.05),
                chunk(names["dying"], cid=5, decay_score=0.05)])
    boundary = "xyzBOUNDARY"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.json\"\r\n"
            f"Content-Type: application/json\r\n\r\n{json.dumps(b)}\r\n--{boundary}--\r\n").encode()
    status, rep = t.json("/v1/brain/import/file", raw=body,
                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 200 and rep["report"]["chunks"]["inserted"] == 5
    status, res = t.json("/v1/x-memconform/decay", {})
    assert status == 200
    after = {c["content"]: c for c in t.export()["chunks"]}
    for key in ("decision", "critical", "pinned"):
        assert after[names[key]]["decay_score"] == 0.05
    assert after[names["fact"]]["decay_score"] < 1.0
    assert names["dying"] not in after
    h = hashlib.sha256(names["fact"].encode()).hexdigest()
    status, res = t.json("/v1/x-memconform/delete", {"content_hash": h})
    assert status == 200 and res["deleted"] is True
    assert h not in hashes(t.export())


def test_unknown_bug_refuses_to_start(tmp_path):
    env = dict(os.environ, SECOND_OPINION_STATE=str(tmp_path), SECOND_OPINION_BUGS="no_such_bug")
    proc = subprocess.run([sys.executable, str(SERVER), "--port", "0"], env=env, capture_output=True, timeout=10)
    assert proc.returncode == 2 and proc.stdout == b""


# ------------------------------------------------------------------ one observable difference per bug


def test_bug_version_max_off_by_one(start):
    assert start("version_max_off_by_one").import_(bundle(version=2))[0] == 200


def test_bug_checksum_keeps_field(start):
    out = start("checksum_keeps_field").export()
    assert out["manifest"]["checksum"] != checksum(out)


def test_bug_embedding_big_endian(start):
    t = start("embedding_big_endian")
    text = uniq("vec")
    t.import_(bundle([chunk(text, embedding=emb(VEC))]))
    got = {c["content"]: c for c in t.export()["chunks"]}[text]["embedding"]
    assert got != emb(VEC)


def test_bug_duplicate_overwrites(start):
    t = start("duplicate_overwrites")
    text = uniq("dup")
    t.import_(bundle([chunk(text, tags=["first"])]))
    t.import_(bundle([chunk(text, tags=["second"])]))
    assert {c["content"]: c for c in t.export()["chunks"]}[text]["tags"] == ["second"]


def test_bug_edge_weight_summed(start):
    t = start("edge_weight_summed")
    a, b_ = uniq("a"), uniq("b")
    b = bundle([chunk(a, cid=1), chunk(b_, cid=2)],
               edges=[{"chunk_a": 1, "chunk_b": 2, "edge_type": "co", "weight": 0.5, "co_activation_count": 1}])
    t.import_(b)
    t.import_(b)
    edges = t.export()["memory_edges"]
    assert [e["weight"] for e in edges] == [1.0]


def test_bug_entity_is_dna_overwritten(start):
    t = start("entity_is_dna_overwritten")
    name = uniq("entity")
    t.import_(bundle(entities=[{"name": name, "frequency": 1, "is_dna": True}]))
    t.import_(bundle(entities=[{"name": name, "frequency": 1, "is_dna": False}]))
    ent = {e["name"]: e for e in t.export()["entities"]}[name]
    assert ent["is_dna"] is False and ent["frequency"] == 2


def test_bug_pinned_not_dna(start):
    t = start("pinned_not_dna")
    text = uniq("pinned")
    t.import_(bundle([chunk(text, is_pinned=True, decay_score=0.05)]))
    t.json("/v1/x-memconform/decay", {})
    assert text not in {c["content"] for c in t.export()["chunks"]}


def test_bug_exports_deleted(start):
    t = start("exports_deleted")
    text = uniq("secret")
    t.import_(bundle([chunk(text)]))
    t.json("/v1/x-memconform/delete", {"content_hash": hashlib.sha256(text.encode()).hexdigest()})
    assert text in {c["content"] for c in t.export()["chunks"]}
