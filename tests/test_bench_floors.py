"""The MemoryAI rule-including floor (bench/floors/memoryai_floor.py) answers as `memconform validate` does:
exit 0 on valid bundles (each accepted reading of the checksum, tiny floats, non-ASCII, SHOULD and MAY
findings that only warn) and 1 on each planted fault of a rule memconform judges. A floor that checked
fewer rules than memconform, or wrote the checksum otherwise, would be a bench anchor doing less work."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main as memconform_main
from memconform.suites.memoryai import format as mai

FLOOR_PATH = Path(__file__).resolve().parents[1] / "bench" / "floors" / "memoryai_floor.py"


def load_floor() -> Any:
    spec = importlib.util.spec_from_file_location("memoryai_floor", FLOOR_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLOOR = load_floor()
DIM = 4


def chunk(i: int, content: str | None = None, **extra: Any) -> dict[str, Any]:
    text = content if content is not None else f"memory {i}: the user prefers tea"
    record = {"id": i, "content": text, "content_hash": mai.content_hash(text), "memory_type": "fact",
              "embedding": mai.encode_embedding([0.25, -1.5, 3.0, 0.125]), "embedding_model": "m", "tags": ["a", "b"],
              "zone": "standard", "importance": 0.5, "is_pinned": False, "decay_score": 0.75, "tier": "warm",
              "created_at": "2026-01-01T00:00:00Z", "accessed_at": "2026-01-02T00:00:00+02:00", "valid_until": None,
              "metadata": {"n": i}}
    record.update(extra)
    return record


def bundle(chunks: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "memoryai-bundle", "version": 1, "generator": "test/1", "exported_at": "2026-01-03T00:00:00Z",
        "manifest": {"tenant_id": None, "tenant_name": None, "tenant_plan": None, "scope": "full", "since": None,
                     "embedding_model": "m", "embedding_dim": DIM},
        "chunks": chunks if chunks is not None else [chunk(1), chunk(2)],
        "memory_edges": [{"chunk_a": 1, "chunk_b": 2, "edge_type": "co", "weight": 0.5, "co_activation_count": 3,
                          "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}],
        "entities": [{"name": "Mira", "frequency": 2, "first_seen": "2026-01-01T00:00:00Z", "is_dna": False}],
        "l2_sessions": [], "mood_states": [], "agents": []}
    doc.update(extra)
    return doc


def sealed(doc: dict[str, Any], unicode: str = "literal", numbers: str = "python") -> dict[str, Any]:
    return mai.seal(doc, unicode, numbers)


def with_manifest(**fields: Any) -> dict[str, Any]:
    doc = bundle()
    doc["manifest"].update(fields)
    return sealed(doc)


def without(where: Callable[[dict[str, Any]], dict[str, Any]], name: str) -> dict[str, Any]:
    doc = bundle()
    del where(doc)[name]
    return sealed(doc)


def first_chunk(doc: dict[str, Any]) -> dict[str, Any]:
    chunk0: dict[str, Any] = doc["chunks"][0]
    return chunk0


def resealed_then(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A sealed bundle changed after sealing (a wrong count or checksum)."""
    doc = sealed(bundle())
    change(doc)
    return doc


VALID: dict[str, Any] = {
    "plain": sealed(bundle()),
    "floats below 1e-4 (orjson writes them otherwise than json)": sealed(bundle([chunk(1, importance=1e-5, decay_score=2.5e-7,
                                                                                       metadata={"w": [1e-9, -3e-5]})])),
    "non-ASCII content, literal UTF-8": sealed(bundle([chunk(1, "café ✓ 日本 \U0001f600")])),
    "checksum with ASCII escapes": sealed(bundle([chunk(1, "café ✓")]), unicode="ascii"),
    "checksum with JSON.stringify's numbers": sealed(bundle([chunk(1, importance=1e-5, decay_score=1.0)]), numbers="ecmascript"),
    "checksum with escapes and JSON.stringify's numbers": sealed(bundle([chunk(1, "ü", importance=0.00001)]), "ascii", "ecmascript"),
    "checksum in upper case": resealed_then(lambda d: d["manifest"].update(checksum=d["manifest"]["checksum"].upper())),
    "null embedding, no optional fields": sealed(bundle([{"content": "bare", "memory_type": "goal", "embedding": None}])),
    "no records at all": sealed(bundle([], memory_edges=[], entities=[])),
    "a vendor memory type (x_)": sealed(bundle([chunk(1, memory_type="x_plan")])),
    "an unknown memory type (a MAY: a warning)": sealed(bundle([chunk(1, memory_type="recipe")])),
    "content_hash of the NFC text (errata E2)": sealed(bundle([chunk(1, "cafe\u0301", content_hash=mai.content_hash("café"))])),
    "a wrong content_hash (a SHOULD: a warning)": sealed(bundle([chunk(1, content_hash="0" * 64)])),
    "exported_at not a date (a SHOULD: a warning)": sealed(bundle(exported_at="yesterday")),
    "a blank generator (a SHOULD: a warning)": sealed(bundle(generator=" ")),
    "counters and token counts are no credentials": sealed(bundle([chunk(1, metadata={"max_tokens": 5, "token_count": 9})])),
    "a credential field left empty": sealed(bundle([chunk(1, metadata={"api_key": "", "password": None})])),
    "bounds of the ranges": sealed(bundle([chunk(1, importance=0, decay_score=1), chunk(2, importance=1.0, decay_score=0.0)])),
    "embedding_dim 0 without embeddings": sealed(dict(bundle([chunk(1, embedding=None)]),
                                                      manifest=dict(bundle()["manifest"], embedding_dim=0))),
}

INVALID: dict[str, Any] = {
    "format": sealed(bundle(format="memoryai")),
    "version 0": sealed(bundle(version=0)),
    "version true": sealed(bundle(version=True)),
    "version 1.0": sealed(bundle(version=1.0)),
    "a later version (§7: this protocol is v1)": sealed(bundle(version=2)),
    "manifest without scope": without(lambda d: d["manifest"], "scope"),
    "manifest without embedding_model": without(lambda d: d["manifest"], "embedding_model"),
    "scope not in the enum": with_manifest(scope="partial"),
    "embedding_dim negative": with_manifest(embedding_dim=-1),
    "embedding_dim a string": with_manifest(embedding_dim="4"),
    "embedding_model not a string": with_manifest(embedding_model=3),
    "chunk without content": without(first_chunk, "content"),
    "chunk memory_type not a string": sealed(bundle([chunk(1, memory_type=7)])),
    "chunk not an object": sealed(bundle([chunk(1), "chunk"])),
    "chunk id a string": sealed(bundle([chunk(1, id="1")])),
    "content_hash not hex": sealed(bundle([chunk(1, content_hash="z" * 64)])),
    "tags not strings": sealed(bundle([chunk(1, tags=["a", 1])])),
    "importance above 1": sealed(bundle([chunk(1, importance=1.5)])),
    "importance a boolean": sealed(bundle([chunk(1, importance=True)])),
    "decay_score below 0": sealed(bundle([chunk(1, decay_score=-0.1)])),
    "is_pinned not a boolean": sealed(bundle([chunk(1, is_pinned="yes")])),
    "created_at not ISO-8601": sealed(bundle([chunk(1, created_at="yesterday")])),
    "valid_until an impossible date": sealed(bundle([chunk(1, valid_until="2026-13-01T00:00:00Z")])),
    "metadata not an object": sealed(bundle([chunk(1, metadata=[])])),
    "zone not in the enum": sealed(bundle([chunk(1, zone="cold")])),
    "tier not in the enum": sealed(bundle([chunk(1, tier="frozen")])),
    "embedding of another length": sealed(bundle([chunk(1, embedding=mai.encode_embedding([0.5] * (DIM + 1)))])),
    "embedding not base64": sealed(bundle([chunk(1, embedding="!!!!")])),
    "embedding of 3 bytes": sealed(bundle([chunk(1, embedding="AAAA")])),
    "embedding a number": sealed(bundle([chunk(1, embedding=5)])),
    "edge without chunk_b": sealed(bundle(memory_edges=[{"chunk_a": 1, "edge_type": "co"}])),
    "edge weight a string": sealed(bundle(memory_edges=[{"chunk_a": 1, "chunk_b": 2, "edge_type": "co", "weight": "1"}])),
    "entity without a name": sealed(bundle(entities=[{"frequency": 1}])),
    "entity frequency a float": sealed(bundle(entities=[{"name": "x", "frequency": 1.5}])),
    "counts wrong": resealed_then(lambda d: d["manifest"]["counts"].update(chunks=3)),
    "counts missing": resealed_then(lambda d: d["manifest"].pop("counts")),
    "checksum wrong": resealed_then(lambda d: d["manifest"].update(checksum="0" * 64)),
    "checksum missing": resealed_then(lambda d: d["manifest"].pop("checksum")),
    "checksum of other bytes (a float changed after sealing)": resealed_then(lambda d: d["chunks"][0].update(importance=0.25)),
    "a credential field": sealed(bundle([chunk(1, metadata={"openai_api_key": "abc"})])),
    "an audit log section": sealed(bundle(audit_log=[{"who": "x"}])),
    "a token-shaped string in content": sealed(bundle([chunk(1, "my key is sk-abcdefghijklmnop")])),
    "a token-shaped string nested in metadata": sealed(bundle([chunk(1, metadata={"note": ["ghp_" + "a" * 24]})])),
    "a token-shaped string in an entity": sealed(bundle(entities=[{"name": "Bearer abcdefghijklmnop"}])),
}


def verdicts(doc: Any, tmp_path: Path) -> tuple[int, int]:
    """(memconform validate's exit code, the floor's) on the bundle written as a file."""
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        ours = memconform_main(["validate", str(path), "--format", "memoryai"])
        floor = FLOOR.main(str(path))
    return ours, floor


@pytest.mark.parametrize("name", VALID)
def test_the_floor_and_memconform_find_a_valid_bundle_valid(name: str, tmp_path: Path) -> None:
    assert verdicts(copy.deepcopy(VALID[name]), tmp_path) == (0, 0)


@pytest.mark.parametrize("name", INVALID)
def test_the_floor_and_memconform_find_each_planted_fault(name: str, tmp_path: Path) -> None:
    assert verdicts(copy.deepcopy(INVALID[name]), tmp_path) == (1, 1)


def test_the_literal_checksum_is_written_by_orjson_only_where_it_is_json_dumps_text() -> None:
    """The fast path's fragments: a float below 1e-4 is written as Python's json writes it (1e-05, not 0.00001)."""
    doc = sealed(bundle([chunk(1, importance=1e-5)]))
    found, replaced = FLOOR.credentials_and_fragments(doc)
    assert found == 0 and [value for _, _, value in replaced] == [1e-5]
    body = dict(doc, manifest={k: v for k, v in doc["manifest"].items() if k != "checksum"})
    assert b"1e-05" in FLOOR.orjson.dumps(body, option=FLOOR.orjson.OPT_SORT_KEYS)
    assert FLOOR.checksum_ok(body, doc["manifest"]["checksum"], replaced)
