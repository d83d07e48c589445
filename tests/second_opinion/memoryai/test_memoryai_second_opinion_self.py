"""Self-test of the second-opinion MemoryAI implementation: end to end without bugs, and each bug visible.

Loopback only; servers run in-process on ephemeral ports (one subprocess checks the start command).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import struct
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _load(name: str, filename: str):
    spec = importlib.util.spec_from_file_location(name, HERE / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


server = _load("so_memoryai_server", "server.py")
brain = server.brain
BUGS = [b["name"] for b in json.loads((HERE / "bugs.json").read_text(encoding="utf-8"))]


# -- helpers -------------------------------------------------------------------------------------

@pytest.fixture
def serve():
    started = []

    def start(bugs=()):
        srv = server.make_server(store=brain.open_store(bugs=frozenset(bugs)))
        thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append((srv, thread))
        host, port = srv.server_address[:2]
        return f"http://{host}:{port}"

    yield start
    for srv, thread in started:
        srv.shutdown()
        srv.server_close()
        thread.join(2)


def call(base, path, body=None, *, method="POST", raw=None, headers=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8"))
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers or {})
    if body is not None and raw is None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            status, payload, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        with exc:
            status, payload, ctype = exc.code, exc.read(), exc.headers.get("Content-Type", "")
    if "ndjson" in ctype:
        return status, [json.loads(line) for line in payload.decode("utf-8").splitlines() if line]
    if "json" in ctype:
        return status, json.loads(payload)
    return status, payload.decode("utf-8")


def upload(base, bundle_bytes, filename="bundle.json"):
    boundary = "so" + uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/json\r\n\r\n").encode() + bundle_bytes + f"\r\n--{boundary}--\r\n".encode()
    return call(base, "/v1/brain/import/file", raw=body,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def checksum(bundle):
    """Independent §3.6 digest: checksum key removed, sorted keys, no whitespace, UTF-8."""
    body = json.loads(json.dumps(bundle))
    body["manifest"].pop("checksum", None)
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


def vec(*values):
    values = list(values) + [0.0] * (brain.EMBEDDING_DIM - len(values))
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def chunk(content, memory_type="fact", cid=1, **extra):
    return {"id": cid, "content": content, "content_hash": sha(content), "memory_type": memory_type, **extra}


def bundle(chunks=(), edges=(), entities=(), version=1, model=None, dim=None, seal=True, **sections):
    b = {"format": "memoryai-bundle", "version": version, "generator": "selftest/1", "exported_at": "2026-01-01T00:00:00Z",
         "manifest": {"tenant_id": str(uuid.uuid4()), "tenant_name": None, "tenant_plan": None, "scope": "full",
                      "since": None, "embedding_model": model or brain.EMBEDDING_MODEL,
                      "embedding_dim": brain.EMBEDDING_DIM if dim is None else dim},
         "chunks": list(chunks), "memory_edges": list(edges), "entities": list(entities),
         "l2_sessions": [], "mood_states": [], "agents": [], **sections}
    b["manifest"]["counts"] = {k: len(b[k]) for k in brain.SECTIONS}
    if seal:
        b["manifest"]["checksum"] = checksum(b)
    return b


def export(base, scope="full", **extra):
    status, body = call(base, "/v1/brain/export", {"scope": scope, **extra})
    assert status == 200, body
    return body


def by_hash(bundle_):
    return {c["content_hash"]: c for c in bundle_["chunks"]}


# -- end to end, no bugs -------------------------------------------------------------------------

def test_start_command_prints_base_url():
    proc = subprocess.Popen([sys.executable, str(HERE / "server.py"), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        status, text = call(url, "/v1/spec", method="GET")
        assert status == 200 and text.startswith("# MemoryAI Protocol v1")
    finally:
        proc.terminate()
        proc.wait(5)
        proc.stdout.close()


def test_end_to_end(serve):
    a = serve()
    dna = [chunk("likes green tea ☕", "preference", 1), chunk("standard zone critical", "fact", 2, zone="critical"),
           chunk("pinned fact", "fact", 3, is_pinned=True)]
    fact = chunk("the sky was grey", "fact", 4, embedding=vec(1.0, 2.0), tags=["weather"], metadata={"k": [1]})
    src = bundle(dna + [fact, {"id": 5, "memory_type": "fact"}],
                 edges=[{"chunk_a": 1, "chunk_b": 4, "edge_type": "co", "weight": 0.4, "co_activation_count": 2},
                        {"chunk_a": 1, "chunk_b": 99, "edge_type": "co", "weight": 0.1, "co_activation_count": 1}],
                 entities=[{"name": "tea", "frequency": 2, "first_seen": "2026-01-01T00:00:00Z",
                            "last_seen": "2026-02-01T00:00:00Z", "is_dna": True}],
                 agents=[{"name": "helper", "api_key": "sk-" + "x" * 24}])
    status, rep = call(a, "/v1/brain/import", src)
    assert status == 200 and rep["success"] and rep["report"]["embedding_model_match"]
    r = rep["report"]
    assert r["chunks"] == {"inserted": 4, "skipped_duplicate": 0, "skipped_invalid": 1}
    assert r["memory_edges"] == {"upserted": 1, "skipped": 1} and r["entities"] == {"upserted": 1}
    assert not any("checksum" in w for w in r["warnings"])

    out = export(a)
    assert out["format"] == "memoryai-bundle" and out["version"] == 1
    assert out["manifest"]["checksum"] == checksum(out)
    assert out["manifest"]["counts"] == {k: len(out[k]) for k in brain.SECTIONS}
    assert by_hash(out)[fact["content_hash"]]["embedding"] == fact["embedding"]
    assert by_hash(out)[fact["content_hash"]]["metadata"] == {"k": [1]}
    assert "sk-" not in json.dumps(out) and out["manifest"]["tenant_id"] != src["manifest"]["tenant_id"]

    # re-import: idempotent chunks, accumulated edges and entities
    again = bundle(dna + [fact], edges=[{"chunk_a": 1, "chunk_b": 4, "edge_type": "co", "weight": 0.2,
                                         "co_activation_count": 3}],
                   entities=[{"name": "tea", "frequency": 1, "last_seen": "2026-01-15T00:00:00Z", "is_dna": False}])
    r2 = call(a, "/v1/brain/import", again)[1]["report"]
    assert r2["chunks"]["inserted"] == 0 and r2["chunks"]["skipped_duplicate"] == 4
    out2 = export(a)
    (edge,) = out2["memory_edges"]
    assert edge["weight"] == 0.4 and edge["co_activation_count"] == 5
    (ent,) = out2["entities"]
    assert ent["frequency"] == 3 and ent["is_dna"] is True and ent["last_seen"] == "2026-02-01T00:00:00Z"

    # round trip into a second brain
    b = serve()
    assert call(b, "/v1/brain/import", out2)[1]["report"]["chunks"]["inserted"] == 4
    out3 = export(b)
    assert set(by_hash(out3)) == set(by_hash(out2)) and [e["name"] for e in out3["entities"]] == ["tea"]

    # dna_only, stream, decay, delete
    assert set(by_hash(export(a, "dna_only"))) == {c["content_hash"] for c in dna}
    lines = call(a, "/v1/brain/export/stream", {"scope": "full"})[1]
    assert lines[0]["kind"] == "header" and lines[-1] == {"kind": "end", "records": len(lines) - 2}
    assert sum(1 for ln in lines if ln["kind"] == "chunks") == lines[0]["manifest"]["counts"]["chunks"] == 4
    assert call(a, "/v1/x-memconform/decay")[1] == {"decayed": 1, "deleted": 0}
    after = by_hash(export(a))
    assert after[fact["content_hash"]]["decay_score"] == 0.75
    assert all(after[c["content_hash"]]["decay_score"] == 1.0 for c in dna)
    for _ in range(3):
        call(a, "/v1/x-memconform/decay")
    assert fact["content_hash"] not in by_hash(export(a))  # forgotten
    assert call(a, "/v1/x-memconform/delete", {"content_hash": dna[0]["content_hash"]})[1] == {"deleted": 1}
    assert call(a, "/v1/x-memconform/delete", {"content_hash": dna[0]["content_hash"]})[1] == {"deleted": 0}
    assert dna[0]["content_hash"] not in by_hash(export(a))
    assert dna[0]["content_hash"] not in json.dumps(call(a, "/v1/brain/export/stream", {"scope": "full"})[1])


def test_consumer_rules(serve):
    a = serve()
    status, rep = call(a, "/v1/brain/import", bundle([chunk("v2")], version=2))
    assert status == 422 and rep["success"] is False
    for broken in ({"format": "other", "version": 1, "manifest": {}}, {"format": "memoryai-bundle", "version": "1"}):
        assert call(a, "/v1/brain/import", broken)[0] == 422
    assert call(a, "/v1/brain/import", raw=b"{not json", headers={"Content-Type": "application/json"})[0] == 400
    tampered = bundle([chunk("tampered")])
    tampered["manifest"]["checksum"] = "0" * 64
    status, rep = call(a, "/v1/brain/import", tampered)
    assert status == 200 and rep["report"]["chunks"]["inserted"] == 1
    assert any("checksum" in w for w in rep["report"]["warnings"])
    foreign = bundle([chunk("foreign vec", embedding=vec(3.0))], model="someone-else-v2")
    rep = call(a, "/v1/brain/import", foreign)[1]["report"]
    assert rep["embedding_model_match"] is False
    assert by_hash(export(a))[sha("foreign vec")]["embedding"] is None
    status, rep = upload(a, json.dumps(bundle([chunk("über upload")]), ensure_ascii=False).encode("utf-8"))
    assert status == 200 and rep["report"]["chunks"]["inserted"] == 1 and not rep["report"]["warnings"]
    assert sha("über upload") in by_hash(export(a))
    assert call(a, "/v1/brain/export", {"scope": "nope"})[0] == 400
    assert call(a, "/v1/brain/export", {"scope": "since"})[0] == 400
    since = export(a, "since", since="2999-01-01T00:00:00Z")
    assert since["chunks"] == [] and since["manifest"]["since"] == "2999-01-01T00:00:00Z"
    assert call(a, "/v1/brain/export", method="GET")[0] == 405


# -- each bug visibly changes behaviour --------------------------------------------------------------

def _checksum_ascii_escaped(base):
    call(base, "/v1/brain/import", bundle([chunk("naïve café")]))
    out = export(base)
    return out["manifest"]["checksum"] == checksum(out)


def _counts_unfiltered(base):
    call(base, "/v1/brain/import", bundle([chunk("dna one", "decision", 1), chunk("plain one", "fact", 2)]))
    out = export(base, "dna_only")
    return out["manifest"]["counts"]["chunks"] == len(out["chunks"])


def _stream_exports_deleted(base):
    call(base, "/v1/brain/import", bundle([chunk("to be deleted")]))
    call(base, "/v1/x-memconform/delete", {"content_hash": sha("to be deleted")})
    return sha("to be deleted") in json.dumps(call(base, "/v1/brain/export/stream", {"scope": "full"})[1])


def _pinned_not_protected(base):
    call(base, "/v1/brain/import", bundle([chunk("pinned note", is_pinned=True, decay_score=0.9)]))
    call(base, "/v1/x-memconform/decay")
    return by_hash(export(base))[sha("pinned note")]["decay_score"]


def _duplicate_hash_overwrites(base):
    call(base, "/v1/brain/import", bundle([chunk("same text", tags=["first"])]))
    call(base, "/v1/brain/import", bundle([chunk("same text", tags=["second"])]))
    return by_hash(export(base))[sha("same text")]["tags"]


def _edge_weight_last_wins(base):
    for w in (0.9, 0.1):
        call(base, "/v1/brain/import", bundle([chunk("e1", cid=1), chunk("e2", cid=2)],
                                              edges=[{"chunk_a": 1, "chunk_b": 2, "edge_type": "co", "weight": w,
                                                      "co_activation_count": 1}]))
    return export(base)["memory_edges"][0]["weight"]


def _entity_is_dna_overwritten(base):
    for dna in (True, False):
        call(base, "/v1/brain/import", bundle(entities=[{"name": "Ada", "frequency": 1, "is_dna": dna}]))
    return export(base)["entities"][0]["is_dna"]


def _version_off_by_one(base):
    return call(base, "/v1/brain/import", bundle([chunk("from the future")], version=2))[0]


def _foreign_embeddings_kept(base):
    call(base, "/v1/brain/import", bundle([chunk("vector", embedding=vec(0.5))], model="other-embedder-v9"))
    return by_hash(export(base))[sha("vector")]["embedding"]


def _file_upload_latin1(base):
    upload(base, json.dumps(bundle([chunk("Zürich café")]), ensure_ascii=False).encode("utf-8"))
    return by_hash(export(base))[sha("Zürich café")]["content"]


SCENARIOS = {
    "checksum_ascii_escaped": (_checksum_ascii_escaped, True),
    "counts_unfiltered": (_counts_unfiltered, True),
    "stream_exports_deleted": (_stream_exports_deleted, False),
    "pinned_not_protected": (_pinned_not_protected, 0.9),
    "duplicate_hash_overwrites": (_duplicate_hash_overwrites, ["first"]),
    "edge_weight_last_wins": (_edge_weight_last_wins, 0.9),
    "entity_is_dna_overwritten": (_entity_is_dna_overwritten, True),
    "version_off_by_one": (_version_off_by_one, 422),
    "foreign_embeddings_kept": (_foreign_embeddings_kept, None),
    "file_upload_latin1": (_file_upload_latin1, "Zürich café"),
}


def test_bug_list_matches_code():
    assert sorted(BUGS) == sorted(brain.BUGS) == sorted(SCENARIOS) and 6 <= len(BUGS) <= 10
    for entry in json.loads((HERE / "bugs.json").read_text(encoding="utf-8")):
        assert set(entry) == {"name", "description", "section", "sentence", "keyword", "level"}
        spec_text = " ".join((HERE / "spec.md").read_text(encoding="utf-8").split())
        assert " ".join(entry["sentence"].split()) in spec_text, entry["name"]


@pytest.mark.parametrize("bug", sorted(SCENARIOS))
def test_bug_is_visible(serve, bug):
    scenario, correct = SCENARIOS[bug]
    assert scenario(serve()) == correct
    assert scenario(serve([bug])) != correct


def test_unknown_bug_name_refused():
    with pytest.raises(ValueError):
        brain.bugs_from_env({"SECOND_OPINION_BUGS": "no_such_bug"})
