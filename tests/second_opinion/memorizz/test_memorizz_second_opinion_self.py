"""Self-test of the second-opinion MemoRizz archive implementation: end to end without bugs, and
each switchable bug visibly changing behaviour. Runs app.py as the harness would (one process per
operation, files in and out, a private state folder); loopback only, nothing else started."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP = HERE / "app.py"


def _load_clean_module():
    """mzarchive with no bugs switched on, whatever the environment of the test runner says."""
    saved = os.environ.pop("SECOND_OPINION_BUGS", None)
    try:
        spec = importlib.util.spec_from_file_location("mzarchive_selftest", HERE / "mzarchive.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is not None:
            os.environ["SECOND_OPINION_BUGS"] = saved


mz = _load_clean_module()


def call(tmp: Path, op: str, body, bugs: str = "", raw: bytes | None = None, env_extra=None):
    state = tmp / "state"
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    inp, out = work / "input.json", work / "output.json"
    inp.write_bytes(raw if raw is not None else json.dumps(body).encode())
    if out.exists():
        out.unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SECOND_OPINION", "MEMCONFORM_"))}
    env["SECOND_OPINION_STATE"] = str(state)
    if bugs:
        env["SECOND_OPINION_BUGS"] = bugs
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-S", str(APP), op, str(inp), str(out)], cwd=work, env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode in (0, 3, 4), proc.stderr.decode()
    reply = json.loads(out.read_text()) if out.exists() else None
    return proc.returncode, reply


def empty_stores():
    return {k: [] for k in mz.STORE_KEYS}


def make_archive(stores, manifest_extra=None):
    counts = {k: len(stores.get(k, [])) for k in mz.STORE_KEYS}
    archive = {
        "format": "memorizz.memory",
        "version": 1,
        "taxonomy": dict(mz.TAXONOMY),
        "manifest": {
            "created_at": "2026-01-02T03:04:05Z", "memorizz_version": "0.0.1", "source_provider": "test",
            "scope": {"memory_id": None, "agent_id": None, "agent_ids": [], "user_id": None, "user_scoped": False},
            "counts": counts, "record_count": sum(counts.values()),
            "includes": {"delegates": True, "history": True, "captured_context": True, "embeddings": False},
            "warnings": [],
            **(manifest_extra or {}),
        },
        "stores": {k: stores.get(k, []) for k in mz.STORE_KEYS},
    }
    return mz.seal(archive)


def graph():
    """Agent A (namespace ns-a) delegating to B (private namespace ns-b), with linked records."""
    stores = empty_stores()
    stores["agents"] = [
        {"id": "agent-a", "data": {"agent_id": "agent-a", "memory_id": "ns-a", "delegates": ["agent-b"],
                                   "automations": [{"name": "nightly", "enabled": True}]}},
        {"id": "agent-b", "data": {"agent_id": "agent-b", "memory_id": "ns-b", "delegates": []}},
        {"id": "agent-c", "data": {"agent_id": "agent-c", "memory_id": "ns-c", "delegates": []}},
    ]
    stores["knowledge_base"] = [
        {"id": "kb-1", "data": {"id": "kb-1", "memory_id": "ns-a", "agent_id": "agent-a", "user_id": None,
                                "content": "Namespace ns-a belongs to agent-a; see kb-1.", "score": 1.0,
                                "tiny": 1e-7, "big": 1e16, "embedding": [0.1, 0.2]}},
        {"id": "kb-c", "data": {"memory_id": "ns-c", "agent_id": "agent-c", "content": "other agent"}},
    ]
    stores["conversation_memory"] = [
        {"id": "msg-1", "data": {"memory_id": "ns-b", "agent_id": "agent-b", "content": "hello from B"}},
    ]
    stores["summaries"] = [
        {"id": "sum-1", "data": {"summary_id": "sum-1", "memory_id": "ns-b", "agent_id": "agent-b",
                                 "source_message_ids": ["msg-1", "msg-deleted"], "content": "summary of msg-1"}},
    ]
    return stores


def ids(archive, store):
    return sorted(r["id"] for r in archive["stores"][store])


# ---------------------------------------------------------------------------------------------


def test_end_to_end_without_bugs(tmp_path):
    archive = make_archive(graph())
    assert mz.validate_archive(archive) == []

    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "preview"})
    assert code == 0 and rep["dry_run"] and rep["planned"] == 7 and rep["imported"] == 0
    code, exported = call(tmp_path, "export", {})
    assert exported["manifest"]["record_count"] == 0  # preview wrote nothing

    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "restore"})
    assert code == 0 and rep["ok"] and rep["imported"] == 7 and rep["id_map"] == {}

    # export by namespace: every store key present, counts with zeros, valid digest, embeddings gone
    code, exported = call(tmp_path, "export", {"memory_id": "ns-a"})
    assert code == 0 and mz.validate_archive(exported) == []
    assert set(exported["stores"]) == set(mz.STORE_KEYS)
    assert set(exported["manifest"]["counts"]) == set(mz.STORE_KEYS)
    assert ids(exported, "knowledge_base") == ["kb-1"] and ids(exported, "agents") == ["agent-a"]
    assert "embedding" not in exported["stores"]["knowledge_base"][0]["data"]
    assert exported["stores"]["agents"][0]["data"]["automations"][0]["enabled"] is False

    # export by agent: the agent, its delegate and their namespaces, not agent-c
    code, exported = call(tmp_path, "export", {"agent_id": "agent-a"})
    assert ids(exported, "agents") == ["agent-a", "agent-b"]
    assert ids(exported, "conversation_memory") == ["msg-1"] and ids(exported, "summaries") == ["sum-1"]
    assert ids(exported, "knowledge_base") == ["kb-1"]
    targets = {r["target"] for r in exported["manifest"]["external_references"]}
    assert targets == {"msg-deleted"}

    # types: unselected stores are [] and the link to an unselected target is an external reference
    code, exported = call(tmp_path, "export", {"agent_id": "agent-a", "types": ["summaries"]})
    assert set(exported["stores"]) == set(mz.STORE_KEYS) and exported["manifest"]["record_count"] == 1
    assert {r["target"] for r in exported["manifest"]["external_references"]} >= {"msg-1", "agent-b"}
    assert call(tmp_path, "export", {"types": ["memagent"]})[0] == 3

    # conflicts: preview lists them, restore (error) refuses and writes nothing, skip and replace work
    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "preview", "conflict": "skip"})
    assert code == 0 and len(rep["conflicts"]) == 7 and rep["skipped"] == 7 and rep["planned"] == 0
    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "restore"})
    assert code == 3 and rep["imported"] == 0 and {"memory_type": "agents", "id": "agent-a"} in rep["conflicts"]
    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "restore", "conflict": "replace"})
    assert code == 0 and rep["imported"] == 7

    # clone: new ids, prose kept, namespaces remapped one to one (delegate-private stays separate)
    code, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "clone"})
    assert code == 0 and rep["imported"] == 7
    id_map = rep["id_map"]
    assert id_map["kb-1"] != "kb-1" and id_map["ns-a"] != id_map["ns-b"]
    code, cloned = call(tmp_path, "export", {"memory_id": id_map["ns-a"]})
    kb = cloned["stores"]["knowledge_base"][0]
    assert kb["id"] == id_map["kb-1"] and kb["data"]["id"] == id_map["kb-1"]
    assert kb["data"]["agent_id"] == id_map["agent-a"]
    assert kb["data"]["content"] == "Namespace ns-a belongs to agent-a; see kb-1."
    code, cloned_b = call(tmp_path, "export", {"memory_id": id_map["ns-b"]})
    summary = cloned_b["stores"]["summaries"][0]["data"]
    assert summary["summary_id"] == id_map["sum-1"]
    assert summary["source_message_ids"] == [id_map["msg-1"], "msg-deleted"]

    # failure mid-import: committed progress stays and is reported
    fresh = empty_stores()
    fresh["short_term_memory"] = [{"id": f"st-{i}", "data": {"memory_id": "ns-fail", "content": str(i)}} for i in range(3)]
    assert call(tmp_path, "arm_failure", {"after": 1})[0] == 0
    code, rep = call(tmp_path, "import_archive", {"archive": make_archive(fresh), "mode": "restore"})
    assert code == 3 and rep["ok"] is False and rep["imported"] == 1 and rep["errors"]
    code, exported = call(tmp_path, "export", {"memory_id": "ns-fail"})
    assert exported["manifest"]["record_count"] == 1
    code, rep = call(tmp_path, "import_archive", {"archive": make_archive(fresh), "mode": "restore", "conflict": "skip"})
    assert code == 0 and rep["imported"] == 2 and rep["skipped"] == 1

    code, rep = call(tmp_path, "delete_namespace", {"memory_id": "ns-fail"})
    assert rep["deleted"] == 3
    assert call(tmp_path, "no_such_op", {})[0] == 4


def test_rejections_without_bugs(tmp_path):
    archive = make_archive(graph())

    def refused(doc=None, raw=None):
        body = None if raw is not None else {"archive": doc, "mode": "preview"}
        return call(tmp_path, "import_archive", body, raw=raw)[0] == 3

    bad = copy.deepcopy(archive)
    bad["integrity"]["digest"] = "0" * 64
    assert refused(bad)
    bad = copy.deepcopy(archive)
    bad["version"] = True
    assert refused(mz.seal(bad))
    bad = copy.deepcopy(archive)
    bad["version"] = 2
    assert refused(mz.seal(bad))
    raw = json.dumps({"archive": archive, "mode": "preview"}).replace('"score": 1.0', '"score": NaN').encode()
    assert refused(raw=raw)
    bad = copy.deepcopy(archive)
    bad["stores"]["knowledge_base"][0]["id"] = "x" * 513
    assert refused(mz.seal(bad))
    ok = copy.deepcopy(archive)
    ok["stores"]["knowledge_base"][0] = {"id": "x" * 512, "data": {"content": "max id"}}
    assert not refused(mz.seal(ok))
    bad = copy.deepcopy(archive)
    del bad["stores"]["tool_log"]
    assert refused(mz.seal(bad))


# ---------------------------------------------------------------------------------------------
# each bug visibly changes behaviour


def preview_code(tmp_path, archive, bugs):
    return call(tmp_path, "import_archive", {"archive": archive, "mode": "preview"}, bugs=bugs)[0]


def test_bug_envelope_unknown_field_accepted(tmp_path):
    bad = copy.deepcopy(make_archive(empty_stores()))
    bad["signature"] = "x"
    bad = mz.seal(bad)
    assert preview_code(tmp_path, bad, "") == 3
    assert preview_code(tmp_path, bad, "envelope_unknown_field_accepted") == 0


def test_bug_taxonomy_values_unchecked(tmp_path):
    bad = make_archive(empty_stores())
    bad["taxonomy"]["skillbox"] = "long_term.semantic"
    bad = mz.seal(bad)
    assert preview_code(tmp_path, bad, "") == 3
    assert preview_code(tmp_path, bad, "taxonomy_values_unchecked") == 0


def test_bug_natural_id_unchecked(tmp_path):
    stores = empty_stores()
    stores["personas"] = [{"id": "p-1", "data": {"persona_id": "p-2", "name": "Mira"}}]
    bad = make_archive(stores)
    assert preview_code(tmp_path, bad, "") == 3
    assert preview_code(tmp_path, bad, "natural_id_unchecked") == 0


def test_bug_counts_omit_zero_stores(tmp_path):
    call(tmp_path, "import_archive", {"archive": make_archive(graph()), "mode": "restore"})
    _, good = call(tmp_path, "export", {"memory_id": "ns-a"})
    _, buggy = call(tmp_path, "export", {"memory_id": "ns-a"}, bugs="counts_omit_zero_stores")
    assert len(good["manifest"]["counts"]) == 13 and len(buggy["manifest"]["counts"]) == 2


def test_bug_canonical_python_floats(tmp_path):
    archive = make_archive(graph())  # holds 1.0, 1e-7 and 1e16, sealed in the spec's number form
    assert preview_code(tmp_path, archive, "") == 0
    assert preview_code(tmp_path, archive, "canonical_python_floats") == 3  # checksum "mismatch"


def test_bug_record_limit_off_by_one(tmp_path):
    # the same comparison as at the default 100,000, at a lowered limit of 50 to keep the test fast
    limit = {"MEMORIZZ_ARCHIVE_MAX_RECORDS": "50"}
    def with_records(n):
        stores = empty_stores()
        stores["short_term_memory"] = [{"id": str(i), "data": {}} for i in range(n)]
        return {"archive": make_archive(stores), "mode": "preview"}

    at_limit, over = with_records(50), with_records(51)
    assert call(tmp_path, "import_archive", at_limit, env_extra=limit)[0] == 0
    assert call(tmp_path, "import_archive", over, env_extra=limit)[0] == 3
    assert call(tmp_path, "import_archive", at_limit, bugs="record_limit_off_by_one", env_extra=limit)[0] == 3


def test_bug_unselected_stores_dropped(tmp_path):
    call(tmp_path, "import_archive", {"archive": make_archive(graph()), "mode": "restore"})
    _, good = call(tmp_path, "export", {"types": ["knowledge_base"]})
    _, buggy = call(tmp_path, "export", {"types": ["knowledge_base"]}, bugs="unselected_stores_dropped")
    assert len(good["stores"]) == 13 and list(buggy["stores"]) == ["knowledge_base"]


def test_bug_restore_conflict_partial_write(tmp_path):
    call(tmp_path, "import_archive", {"archive": make_archive(graph()), "mode": "restore"})
    stores = empty_stores()
    stores["knowledge_base"] = [{"id": "new-1", "data": {"memory_id": "ns-x", "content": "new"}},
                                {"id": "kb-1", "data": {"memory_id": "ns-x", "content": "clash"}}]
    archive = make_archive(stores)
    code, _ = call(tmp_path, "import_archive", {"archive": archive, "mode": "restore"})
    assert code == 3 and call(tmp_path, "export", {"memory_id": "ns-x"})[1]["manifest"]["record_count"] == 0
    code, _ = call(tmp_path, "import_archive", {"archive": archive, "mode": "restore"}, bugs="restore_conflict_partial_write")
    assert code == 3 and call(tmp_path, "export", {"memory_id": "ns-x"})[1]["manifest"]["record_count"] == 1


def test_bug_clone_rewrites_prose(tmp_path):
    archive = make_archive(graph())
    _, rep = call(tmp_path, "import_archive", {"archive": archive, "mode": "clone"}, bugs="clone_rewrites_prose")
    _, cloned = call(tmp_path, "export", {"memory_id": rep["id_map"]["ns-a"]})
    content = cloned["stores"]["knowledge_base"][0]["data"]["content"]
    assert content != "Namespace ns-a belongs to agent-a; see kb-1."


def test_bug_failure_progress_unreported(tmp_path):
    stores = empty_stores()
    stores["short_term_memory"] = [{"id": f"st-{i}", "data": {"memory_id": "ns-f"}} for i in range(3)]
    call(tmp_path, "arm_failure", {"after": 2}, bugs="failure_progress_unreported")
    code, rep = call(tmp_path, "import_archive", {"archive": make_archive(stores), "mode": "restore"},
                     bugs="failure_progress_unreported")
    assert code == 3 and rep["imported"] == 0
    assert call(tmp_path, "export", {"memory_id": "ns-f"})[1]["manifest"]["record_count"] == 2


def test_bugs_json_lists_every_bug():
    bugs = json.loads((HERE / "bugs.json").read_text())
    names = {b["name"] for b in bugs}
    assert 6 <= len(bugs) <= 12 and len(names) == len(bugs)
    source = (HERE / "app.py").read_text() + (HERE / "mzarchive.py").read_text()
    for entry in bugs:
        # found_by: bugs memconform found in the first version (not planted), now switchable
        assert set(entry) - {"found_by"} == {"name", "description", "section", "sentence", "keyword", "level"}
        assert f'"{entry["name"]}"' in source
        assert entry["sentence"] in (HERE.parents[2] / "fixtures" / "specs" / "memorizz-archive-v1.md").read_text()
