"""Self-test of memorizz2: the clean behaviour end to end, and one observable difference per planted bug."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
APP = HERE / "app.py"
SPEC_TEXT = Path(__file__).resolve().parents[3] / "fixtures" / "specs" / "memorizz-archive-v1.md"

_spec = importlib.util.spec_from_file_location("memorizz2_app", APP)
assert _spec and _spec.loader
app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(app)


class Target:
    def __init__(self, tmp: Path, bugs: str = "") -> None:
        self.tmp = tmp
        self.state = tmp / "state"
        self.bugs = bugs

    def call(self, op: str, body: object, raw: bytes | None = None) -> tuple[int, dict]:
        name = uuid.uuid4().hex
        inp, out = self.tmp / f"{name}.in.json", self.tmp / f"{name}.out.json"
        inp.write_bytes(raw if raw is not None else json.dumps(body, ensure_ascii=False).encode("utf-8"))
        env = {**os.environ, "SECOND_OPINION_STATE": str(self.state), "SECOND_OPINION_BUGS": self.bugs}
        proc = subprocess.run([sys.executable, str(APP), op, str(inp), str(out)], env=env,
                              capture_output=True, timeout=30)
        body_out = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        return proc.returncode, body_out


@pytest.fixture
def target(tmp_path: Path) -> Target:
    return Target(tmp_path)


def bugged(tmp_path: Path, bug: str) -> Target:
    folder = tmp_path / bug
    folder.mkdir()
    return Target(folder, bug)


def archive(records: dict[str, list[dict]], extra: dict | None = None) -> dict:
    """A sealed archive (clean canonical form) holding `records`."""
    app.BUGS.clear()
    stores = {k: copy.deepcopy(records.get(k, [])) for k in app.STORE_KEYS}
    counts = {k: len(v) for k, v in stores.items()}
    doc = {
        "format": "memorizz.memory", "version": 1, "taxonomy": dict(app.TAXONOMY),
        "manifest": {
            "created_at": "2026-12-04T02:00:00Z", "memorizz_version": "0.0.0", "source_provider": "test",
            "scope": {"memory_id": None, "agent_id": None, "agent_ids": [], "user_scoped": False, "user_id": None},
            "counts": counts, "record_count": sum(counts.values()),
            "includes": {"delegates": True, "history": True, "context": True, "embeddings": False},
            "warnings": [],
        },
        "stores": stores,
    }
    doc.update(extra or {})
    return app.seal(doc)


def kb(rid: str, ns: str, content: str = "prose", **data: object) -> dict:
    return {"id": rid, "data": {"memory_id": ns, "user_id": None, "content": content, **data}}


def in_store(t: Target, ns: str, store: str = "knowledge_base") -> dict[str, dict]:
    code, doc = t.call("export", {"memory_id": ns, "include_embeddings": True})
    assert code == 0
    return {r["id"]: r["data"] for r in doc["stores"][store]}


# ------------------------------------------------------------------ canonical form


@pytest.mark.parametrize("value,text", [
    (1.0, "1"), (-0.0, "0"), (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (1e21, "1e+21"),
    (1e20, "100000000000000000000"), (1e16, "10000000000000000"), (0.1, "0.1"), (-2.5, "-2.5"),
    (123.456, "123.456"), (2.5e-300, "2.5e-300"),
])
def test_js_numbers(value: float, text: str) -> None:
    app.BUGS.clear()
    assert app.canonical(value) == text


def test_canonical_text() -> None:
    app.BUGS.clear()
    assert app.canonical({"b": [1, 2.0, True, None], "a": "é☃"}) == '{"a":"é☃","b":[1,2,true,null]}'
    with pytest.raises(app.CanonicalError):
        app.canonical({"x": float("nan")})


def test_bug_sentences_are_verbatim() -> None:
    bugs = json.loads((HERE / "bugs.json").read_text(encoding="utf-8"))
    assert len(bugs) == 8 and {b["name"] for b in bugs} == app.KNOWN_BUGS
    spec = SPEC_TEXT.read_text(encoding="utf-8")
    for bug in bugs:
        assert bug["sentence"] in spec, bug["name"]


# ------------------------------------------------------------------ clean behaviour


def test_process_contract(target: Target) -> None:
    assert target.call("nope", {})[0] == 4
    assert Target(target.tmp, "no_such_bug").call("export", {})[0] == 2
    code, doc = target.call("export", {})
    assert code == 0 and list(doc) == sorted(app.ENVELOPE)
    assert app.validate(doc) == [] and doc["manifest"]["record_count"] == 0
    assert set(doc["stores"]) == set(app.STORE_KEYS) and all(v == [] for v in doc["stores"].values())
    assert target.call("export", {"types": ["memagent"]})[0] == 3


def test_restore_export_roundtrip(target: Target) -> None:
    recs = {"knowledge_base": [kb("k1", "ns1", "Launch after 19:00 UTC é", score=1.0, embedding=[0.1, 0.2],
                                  id="k1")],
            "agents": [{"id": "a1", "data": {"memory_id": "ns1", "agent_id": "a1", "api_key": "sk-x",
                                             "automations": [{"name": "daily", "enabled": True}]}}]}
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "preview"})
    assert code == 0 and rep["ok"] and rep["dry_run"] and rep["planned"] == 2 and rep["imported"] == 0
    assert in_store(target, "ns1") == {}
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "restore"})
    assert code == 0 and rep["ok"] and rep["imported"] == 2 and rep["conflicts"] == []
    code, doc = target.call("export", {"memory_id": "ns1"})
    assert code == 0 and app.validate(doc) == []
    data = doc["stores"]["knowledge_base"][0]["data"]
    assert data["content"] == "Launch after 19:00 UTC é" and "embedding" not in data and data["score"] == 1
    agent = doc["stores"]["agents"][0]["data"]
    assert "api_key" not in agent and agent["automations"][0]["enabled"] is False
    assert "agents.api_key" in doc["manifest"]["omitted_fields"]
    assert doc["manifest"]["counts"]["knowledge_base"] == 1 and doc["manifest"]["record_count"] == 2
    code, only = target.call("export", {"memory_id": "ns1", "types": ["agents"]})
    assert only["manifest"]["counts"]["knowledge_base"] == 0 and only["stores"]["knowledge_base"] == []
    # conflicts: previewed, refused under error, skipped, replaced
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "preview"})
    assert code == 0 and {"memory_type": "knowledge_base", "id": "k1"} in rep["conflicts"]
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "restore"})
    assert code == 3 and not rep["ok"] and rep["imported"] == 0 and len(rep["conflicts"]) == 2
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "restore", "conflict": "skip"})
    assert code == 0 and rep["imported"] == 0 and rep["skipped"] == 2
    changed = {"knowledge_base": [kb("k1", "ns1", "changed")]}
    code, rep = target.call("import_archive", {"archive": archive(changed), "mode": "restore", "conflict": "replace"})
    assert code == 0 and rep["imported"] == 1 and in_store(target, "ns1")["k1"]["content"] == "changed"
    code, rep = target.call("delete_namespace", {"memory_id": "ns1"})
    assert code == 0 and rep["deleted"] == 2 and in_store(target, "ns1") == {}


def test_external_references(target: Target) -> None:
    recs = {"summaries": [{"id": "s1", "data": {"memory_id": "ns2", "summary_id": "s1", "source_ids": ["gone"]}}]}
    assert target.call("import_archive", {"archive": archive(recs), "mode": "restore"})[0] == 0
    doc = target.call("export", {"memory_id": "ns2"})[1]
    assert doc["manifest"]["external_references"][0]["target"] == "gone"


def test_clone_rewrites_ids_and_links(target: Target) -> None:
    recs = {"conversation_memory": [kb("m1", "ns3", "hello"), kb("m2", "ns3", "world", supersedes="m1")],
            "summaries": [{"id": "s1", "data": {"memory_id": "ns3", "summary_id": "s1", "content": "sum",
                                                "source_message_ids": ["m1", "m2", "outside"]}}]}
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "clone"})
    assert code == 0 and rep["imported"] == 3 and set(rep["id_map"]) == {"m1", "m2", "s1"}
    m = rep["id_map"]
    assert all(new != old for old, new in m.items())
    conv = in_store(target, "ns3", "conversation_memory")
    summ = in_store(target, "ns3", "summaries")
    assert set(conv) == {m["m1"], m["m2"]} and conv[m["m2"]]["supersedes"] == m["m1"]
    assert conv[m["m1"]]["content"] == "hello"
    assert summ[m["s1"]]["summary_id"] == m["s1"]
    assert summ[m["s1"]]["source_message_ids"] == [m["m1"], m["m2"], "outside"]


def test_partial_import_reported(target: Target) -> None:
    recs = {"knowledge_base": [kb(f"p{i}", "ns4") for i in range(5)]}
    assert target.call("arm_failure", {"after": 2})[0] == 0
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "preview"})
    assert code == 0  # a preview does not commit: the failure stays armed
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "restore"})
    assert code == 3 and not rep["ok"] and rep["imported"] == 2 and rep["errors"]
    assert set(in_store(target, "ns4")) == {"p0", "p1"}
    code, rep = target.call("import_archive", {"archive": archive(recs), "mode": "restore", "conflict": "skip"})
    assert code == 0 and rep["imported"] == 3 and len(in_store(target, "ns4")) == 5


def _mutations() -> list[tuple[str, object]]:
    base = archive({"knowledge_base": [kb("v1", "ns5")]})

    def resealed(change) -> dict:  # type: ignore[no-untyped-def]
        doc = copy.deepcopy(base)
        del doc["integrity"]
        change(doc)
        return app.seal(doc)

    def setk(path: list[str], value: object):  # type: ignore[no-untyped-def]
        def change(doc: dict) -> None:
            node = doc
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        return change

    bad_digest = copy.deepcopy(base)
    bad_digest["integrity"]["digest"] = "0" * 64
    return [
        ("version 2", resealed(setk(["version"], 2))),
        ("version string", resealed(setk(["version"], "1"))),
        ("format", resealed(setk(["format"], "memorizz.memories"))),
        ("extra field", resealed(setk(["extra"], 1))),
        ("taxonomy", resealed(setk(["taxonomy", "agents"], "memagent"))),
        ("missing store", resealed(lambda d: d["stores"].pop("tool_log"))),
        ("dup id", resealed(lambda d: d["stores"]["knowledge_base"].append(kb("v1", "ns5")))),
        ("data.id", resealed(setk(["stores", "knowledge_base", 0, "data", "id"], "v2"))),
        ("counts", resealed(setk(["manifest", "counts", "knowledge_base"], 2))),
        ("record_count", resealed(setk(["manifest", "record_count"], 3))),
        ("no warnings", resealed(lambda d: d["manifest"].pop("warnings"))),
        ("513 chars", resealed(setk(["stores", "knowledge_base", 0, "id"], "x" * 513))),
        ("empty id", resealed(setk(["stores", "knowledge_base", 0, "id"], ""))),
        ("checksum", bad_digest),
        ("upper digest", {**base, "integrity": {"algorithm": "sha256", "digest": base["integrity"]["digest"].upper()}}),
    ]


@pytest.mark.parametrize("name,doc", _mutations(), ids=[m[0] for m in _mutations()])
def test_invalid_archives_refused(target: Target, name: str, doc: dict) -> None:
    code, rep = target.call("import_archive", {"archive": doc, "mode": "preview"})
    assert code == 3 and rep["ok"] is False and rep["errors"], name


def test_limits_and_strict_json(target: Target) -> None:
    ok = archive({"knowledge_base": [kb("y" * 512, "ns6")]})
    assert target.call("import_archive", {"archive": ok, "mode": "preview"})[0] == 0
    raw = json.dumps({"archive": archive({}), "mode": "preview"}).replace('"version": 1', '"version": NaN')
    assert target.call("import_archive", None, raw.encode())[0] == 3


# ------------------------------------------------------------------ one difference per bug


def test_bug_id_len_513(tmp_path: Path) -> None:
    doc = archive({"knowledge_base": [kb("x" * 513, "nb")]})
    assert Target(tmp_path).call("import_archive", {"archive": doc, "mode": "preview"})[0] == 3
    assert bugged(tmp_path, "id_len_513").call("import_archive", {"archive": doc, "mode": "preview"})[0] == 0


@pytest.mark.parametrize("bug,data", [("python_float_repr", {"v": 1.0}), ("ascii_escape", {"v": "café"})])
def test_bug_canonical_form(tmp_path: Path, bug: str, data: dict) -> None:
    good = archive({"knowledge_base": [kb("c1", "nc", **data)]})
    clean, bad = Target(tmp_path), bugged(tmp_path, bug)
    assert clean.call("import_archive", {"archive": good, "mode": "restore"})[0] == 0
    assert bad.call("import_archive", {"archive": good, "mode": "preview"})[0] == 3  # checksum mismatch
    assert bad.call("import_archive", {"archive": good, "mode": "preview"})[1]["errors"] == ["checksum mismatch"]
    assert bad.call("import_archive", {"archive": good, "mode": "restore"})[0] == 3
    # another conforming archive holding such values is refused too, while the clean export validates
    assert bad.call("import_archive", {"archive": archive({"knowledge_base": [kb("c2", "nc", w=1e-7, x="é")]}),
                                       "mode": "restore"})[0] == 3
    code, doc = clean.call("export", {"memory_id": "nc"})
    assert code == 0 and app.validate(doc) == []


def test_bug_extra_envelope_field(tmp_path: Path) -> None:
    doc = archive({}, extra={"comment": "hi"})
    assert Target(tmp_path).call("import_archive", {"archive": doc, "mode": "preview"})[0] == 3
    assert bugged(tmp_path, "extra_envelope_field").call("import_archive", {"archive": doc, "mode": "preview"})[0] == 0


def test_bug_data_id_unchecked(tmp_path: Path) -> None:
    doc = archive({"agents": [{"id": "a1", "data": {"memory_id": "nd", "agent_id": "a2"}}]})
    assert Target(tmp_path).call("import_archive", {"archive": doc, "mode": "preview"})[0] == 3
    assert bugged(tmp_path, "data_id_unchecked").call("import_archive", {"archive": doc, "mode": "preview"})[0] == 0


def test_bug_progress_unreported(tmp_path: Path) -> None:
    t = bugged(tmp_path, "progress_unreported")
    t.call("arm_failure", {"after": 1})
    code, rep = t.call("import_archive", {"archive": archive({"knowledge_base": [kb("q1", "ne"), kb("q2", "ne")]}),
                                          "mode": "restore"})
    assert code == 3 and rep["imported"] == 0 and set(in_store(t, "ne")) == {"q1"}


def test_bug_clone_keeps_refs(tmp_path: Path) -> None:
    t = bugged(tmp_path, "clone_keeps_refs")
    recs = {"conversation_memory": [kb("m1", "nf"), kb("m2", "nf", supersedes="m1")]}
    rep = t.call("import_archive", {"archive": archive(recs), "mode": "clone"})[1]
    assert in_store(t, "nf", "conversation_memory")[rep["id_map"]["m2"]]["supersedes"] == "m1"


def test_bug_embeddings_kept(tmp_path: Path) -> None:
    recs = {"knowledge_base": [kb("e1", "ng", embedding=[0.5, 0.25])]}
    clean, bad = Target(tmp_path), bugged(tmp_path, "embeddings_kept")
    for t in (clean, bad):
        assert t.call("import_archive", {"archive": archive(recs), "mode": "restore"})[0] == 0
    assert "embedding" not in in_store(clean, "ng")["e1"]
    assert in_store(bad, "ng")["e1"]["embedding"] == [0.5, 0.25]


def test_agent_scope_with_delegates(target: Target) -> None:
    """memconform's adapter contract: the agent, its delegates, and the namespaces their memory_ids name."""
    recs = {"agents": [{"id": "boss", "data": {"memory_ids": ["nh-boss"], "agent_id": "boss", "delegates": ["helper"]}},
                       {"id": "helper", "data": {"memory_ids": ["nh-private"], "agent_id": "helper"}},
                       {"id": "other", "data": {"memory_ids": ["nh"], "agent_id": "other"}}],
            "knowledge_base": [kb("h1", "nh-private"), kb("o1", "nh"), kb("b1", "nh-boss")]}
    assert target.call("import_archive", {"archive": archive(recs), "mode": "restore"})[0] == 0
    doc = target.call("export", {"agent_id": "boss"})[1]
    assert sorted(doc["manifest"]["scope"]["agent_ids"]) == ["boss", "helper"]
    assert sorted(r["id"] for r in doc["stores"]["knowledge_base"]) == ["b1", "h1"]
    doc = target.call("export", {"memory_id": "nh"})[1]  # an agent is in the namespaces its memory_ids name
    assert [r["id"] for r in doc["stores"]["agents"]] == ["other"]
    doc = target.call("export", {"agent_id": "boss", "include_delegates": False})[1]
    assert doc["manifest"]["scope"]["agent_ids"] == ["boss"] and doc["manifest"]["includes"]["delegates"] is False
    for ns in ("nh", "nh-private", "nh-boss"):
        target.call("delete_namespace", {"memory_id": ns})


def test_bare_archive_body(target: Target) -> None:
    code, rep = target.call("import_archive", archive({"knowledge_base": [kb("b1", "ni")]}))
    assert code == 0 and rep["dry_run"] is True and rep["planned"] == 1


def test_concurrent_imports(target: Target) -> None:
    from concurrent.futures import ThreadPoolExecutor

    docs = [archive({"knowledge_base": [kb(f"cc{i}-{j}", "nj") for j in range(3)]}) for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda d: target.call("import_archive", {"archive": d, "mode": "restore"})[0], docs))
    assert codes == [0, 0, 0, 0] and len(in_store(target, "nj")) == 12
