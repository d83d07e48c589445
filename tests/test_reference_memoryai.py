"""The MemoryAI reference brain itself: round trip, idempotency, rejection, checksum, HTTP, stream."""

from __future__ import annotations

import json

import httpx
import pytest
from memconform.kit.loopback import serve_in_thread
from memconform.suites.memoryai import format as mai
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.suites.memoryai.reference.http_app import make_app
from memconform.targets.base import Rejected


def chunk(i: int, content: str, memory_type: str = "fact", **kw):
    return {"id": i, "content": content, "content_hash": mai.content_hash(content), "memory_type": memory_type,
            "embedding": mai.encode_embedding([0.5] * 384), "embedding_model": "memconform-hash-384",
            "tags": ["t"], "zone": "standard", "importance": 0.5, "is_pinned": False, "decay_score": 0.9,
            "tier": "warm", "created_at": f"2026-01-0{i}T00:00:00Z", "accessed_at": "2026-01-01T00:00:00Z",
            "valid_until": None, "metadata": {"k": "ü"}, **kw}


def bundle(**manifest):
    b = {"format": "memoryai-bundle", "version": 1, "generator": "test/1", "exported_at": "2026-01-01T00:00:00Z",
         "manifest": {"tenant_id": "11111111-1111-1111-1111-111111111111", "tenant_name": None, "tenant_plan": None,
                      "scope": "full", "since": None, "embedding_model": "memconform-hash-384", "embedding_dim": 384,
                      **manifest},
         "chunks": [chunk(1, "likes tea", "preference"), chunk(2, "it rained"), chunk(3, "met Bob", "episodic")],
         "memory_edges": [{"chunk_a": 1, "chunk_b": 2, "edge_type": "co", "weight": 0.4, "co_activation_count": 2,
                           "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}],
         "entities": [{"name": "Bob", "frequency": 3, "first_seen": "2026-01-01T00:00:00Z",
                       "last_seen": "2026-01-02T00:00:00Z", "is_dna": False}],
         "l2_sessions": [{"id": "s1"}], "mood_states": [{"mood": "ok"}], "agents": [{"name": "a"}]}
    return mai.seal(b)


@pytest.fixture
def brain():
    b = ReferenceBrain()
    yield b
    b.close()


def strip(c):
    return {k: v for k, v in c.items() if k != "id"}


def test_round_trip_and_checksum(brain):
    src = bundle()
    rep = brain.import_bundle(src)
    assert rep["success"] and rep["report"]["chunks"] == {"inserted": 3, "skipped_duplicate": 0, "skipped_invalid": 0}
    assert rep["report"]["warnings"] == [] and rep["report"]["embedding_model_match"] is True
    out = brain.export({"scope": "full"})
    assert out["manifest"]["checksum"] == mai.checksum(out)
    assert out["manifest"]["counts"] == {s: len(out[s]) for s in mai.RECORD_SECTIONS}
    assert out["manifest"]["tenant_id"] != src["manifest"]["tenant_id"]
    assert sorted(map(strip, out["chunks"]), key=lambda c: c["content"]) == sorted(map(strip, src["chunks"]), key=lambda c: c["content"])
    assert [e["name"] for e in out["entities"]] == ["Bob"]
    again = ReferenceBrain()
    again.import_bundle(out)
    assert {c["content_hash"] for c in again.export({"scope": "full"})["chunks"]} == {c["content_hash"] for c in src["chunks"]}


def test_reimport_is_idempotent_and_accumulates(brain):
    brain.import_bundle(bundle())
    rep = brain.import_bundle(bundle())["report"]
    assert rep["chunks"] == {"inserted": 0, "skipped_duplicate": 3, "skipped_invalid": 0}
    out = brain.export({"scope": "full"})
    assert len(out["chunks"]) == 3
    assert out["memory_edges"][0]["co_activation_count"] == 4 and out["memory_edges"][0]["weight"] == 0.4
    assert out["entities"][0]["frequency"] == 6


@pytest.mark.parametrize("mutate", [
    lambda b: b.update(format="memoryai"), lambda b: b.update(version=True), lambda b: b.update(version="1"),
    lambda b: b.update(version=2), lambda b: b.update(version=0), lambda b: b.pop("manifest"),
    lambda b: b["manifest"].pop("embedding_model"), lambda b: b["manifest"].pop("scope"),
])
def test_rejects_bad_envelope_and_writes_nothing(brain, mutate):
    b = bundle()
    mutate(b)
    with pytest.raises(Rejected) as exc:
        brain.import_bundle(b)
    assert exc.value.body["success"] is False and exc.value.body["report"]["warnings"]
    assert brain.export({"scope": "full"})["chunks"] == []


def test_checksum_mismatch_warns_and_invalid_chunks_skipped(brain):
    b = bundle()
    b["chunks"].append(chunk(4, "", "fact"))
    b["chunks"].append(chunk(5, "bad emb", embedding=mai.encode_embedding([0.1] * 383)))
    b["chunks"].append(chunk(6, "bad zone", zone="hot"))
    rep = brain.import_bundle(b)["report"]
    assert any("checksum" in w for w in rep["warnings"])
    assert rep["chunks"] == {"inserted": 3, "skipped_duplicate": 0, "skipped_invalid": 3}


def test_model_mismatch_drops_embeddings(brain):
    rep = brain.import_bundle(bundle(embedding_model="other"))["report"]
    assert rep["embedding_model_match"] is False and rep["warnings"]
    assert all(c["embedding"] is None for c in brain.export({"scope": "full"})["chunks"])


def test_scopes_decay_delete(brain):
    brain.import_bundle(bundle())
    assert [c["content"] for c in brain.export({"scope": "dna_only"})["chunks"]] == ["likes tea"]
    since = brain.export({"scope": "since", "since": "2026-01-02T00:00:00Z"})
    assert sorted(c["content"] for c in since["chunks"]) == ["it rained", "met Bob"]
    with pytest.raises(Rejected):
        brain.export({"scope": "nope"})
    for _ in range(6):
        brain.decay({})
    assert [c["content"] for c in brain.export({"scope": "full"})["chunks"]] == ["likes tea"]
    assert brain.delete_chunk({"content_hash": mai.content_hash("likes tea")}) == {"deleted": 1}
    assert brain.delete_chunk({"content_hash": mai.content_hash("likes tea")}) == {"deleted": 0}
    assert brain.export({"scope": "full"})["chunks"] == []


def test_stream_reassembles(brain):
    brain.import_bundle(bundle())
    raw = brain.export_stream({"scope": "full"})
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.splitlines()]
    env, rest = lines[0], lines[1:]
    full = brain.export({"scope": "full"})
    rebuilt = {**env, **{s: [r["record"] for r in rest if r["section"] == s] for s in mai.RECORD_SECTIONS}}
    assert rebuilt["chunks"] == full["chunks"]
    assert mai.checksum(rebuilt) == env["manifest"]["checksum"]
    assert brain.spec(None).startswith(b"# MemoryAI Protocol v1")


def test_http_profile():
    brain = ReferenceBrain()
    base, stop = serve_in_thread(make_app(brain))
    try:
        assert base.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=base, timeout=10) as client:
            r = client.post("/v1/brain/import", json=bundle())
            assert r.status_code == 200 and r.json()["report"]["chunks"]["inserted"] == 3
            r = client.post("/v1/brain/import", json=dict(bundle(), version=99))
            assert r.status_code == 422 and r.json()["success"] is False
            r = client.post("/v1/brain/import", content=b"not json", headers={"content-type": "application/json"})
            assert r.status_code == 400
            files = {"file": ("b.json", json.dumps(bundle()).encode(), "application/json")}
            r = client.post("/v1/brain/import/file", files=files)
            assert r.status_code == 200 and r.json()["report"]["chunks"]["skipped_duplicate"] == 3
            exp = client.post("/v1/brain/export", json={"scope": "full"}).json()
            assert exp["manifest"]["checksum"] == mai.checksum(exp)
            s = client.post("/v1/brain/export/stream", json={"scope": "full"})
            assert s.headers["content-type"].startswith("application/x-ndjson")
            recs = [json.loads(x) for x in s.content.splitlines()[1:]]
            assert [r["record"] for r in recs if r["section"] == "chunks"] == exp["chunks"]
            spec = client.get("/v1/spec")
            assert spec.headers["content-type"].startswith("text/markdown") and spec.text.startswith("# MemoryAI Protocol v1")
            assert client.post("/v1/x-memconform/decay", json={}).status_code == 200
    finally:
        stop()
        brain.close()


class _Calls:
    """A target over a brain that counts each operation it is asked for."""

    def __init__(self, brain: ReferenceBrain) -> None:
        from memconform.targets.pyobj import PythonTarget

        self.target = PythonTarget(brain, "brain")
        self.ops: list[str] = []
        inner = self.target.call

        def call(op, body=None, **kw):
            self.ops.append(op)
            return inner(op, body, **kw)

        self.target.call = call  # type: ignore[method-assign]


def _exported_contents(brain: ReferenceBrain) -> set[str]:
    return {c["content"] for c in brain.export({"scope": "full"})["chunks"]}


def test_the_runs_cleanup_deletes_in_batches_and_falls_back_to_one_a_call(brain) -> None:
    from types import SimpleNamespace

    from memconform.suites.memoryai import client

    brain.import_bundle(bundle())
    hashes = [mai.content_hash(t) for t in ("likes tea", "it rained", "met Bob")]
    assert _exported_contents(brain) == {"likes tea", "it rained", "met Bob"}
    calls = _Calls(brain)
    assert client._delete_written(SimpleNamespace(target=calls.target), hashes * 2)  # a chunk written twice: one delete
    assert calls.ops == ["delete_chunks"] and _exported_contents(brain) == set()

    class NoBatch(ReferenceBrain):  # only the one-at-a-time hook: each chunk still removed
        def delete_chunks(self, body=None, **params):
            from memconform.core.results import Unsupported

            raise Unsupported("delete_chunks")

    older = NoBatch()
    try:
        older.import_bundle(bundle())
        calls = _Calls(older)
        assert client._delete_written(SimpleNamespace(target=calls.target), hashes)
        assert calls.ops == ["delete_chunks", "delete_chunk", "delete_chunk", "delete_chunk"]
        assert _exported_contents(older) == set()
    finally:
        older.close()


def test_delete_chunks_refuses_what_is_not_a_list_of_hashes(brain) -> None:
    for body in (None, {}, {"content_hashes": "abc"}, {"content_hashes": [1]}):
        with pytest.raises(Rejected):
            brain.delete_chunks(body)
    assert brain.delete_chunks({"content_hashes": []}) == {"deleted": 0}
