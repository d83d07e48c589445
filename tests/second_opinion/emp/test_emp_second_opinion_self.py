"""Self-test of the second-opinion EMP app: correct end to end, and every bug visibly changes behaviour.

Each call is a separate process (as separate apps would be), on loopback-free local files only.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

APP = Path(__file__).with_name("app.py")
BUG_NAMES = [bug["name"] for bug in json.loads(APP.with_name("bugs.json").read_text(encoding="utf-8"))]


def _load_app():
    spec = importlib.util.spec_from_file_location("emp_second_opinion_app", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


app = _load_app()


def run(tmp: Path, op: str, request: dict, bugs: str = "", proc: bool = False, **env_extra: str) -> tuple[int, object]:
    """One operation: in a separate process when `proc`, else through app.main in this process
    (the same code path, minus interpreter start-up; bugs and tunables set as start-up would)."""
    work = tmp / f"call-{uuid.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    (work / "in.json").write_text(json.dumps(request), encoding="utf-8")
    argv = [str(APP), op, str(work / "in.json"), str(work / "out.json")]
    if proc:
        env = {k: v for k, v in os.environ.items() if k != "SECOND_OPINION_BUGS"}
        if bugs:
            env["SECOND_OPINION_BUGS"] = bugs
        env.update(env_extra)
        rc = subprocess.run([sys.executable, "-S", *argv], cwd=work, env=env, capture_output=True, timeout=30).returncode
    else:
        app.BUGS = frozenset(b for b in bugs.split(",") if b)
        app.LOCK_WAIT_S = float(env_extra.get("EMP_LOCK_WAIT_S", "15"))
        try:
            rc = app.main(argv)
        finally:
            app.BUGS, app.LOCK_WAIT_S = frozenset(), 15.0
    out = work / "out.json"
    return rc, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else None)


def line(ident: str, ts: int, content: str = "x", **extra: object) -> bytes:
    entry = {"v": "1.0", "id": ident, "ts": ts, "src": "com.example.test", "content": content, **extra}
    return json.dumps(entry, ensure_ascii=False).encode("utf-8") + b"\n"


def new_id() -> str:
    return str(uuid.uuid4())


def hold_lock(mem: Path) -> Path:
    """A fresh lock owned by this (live) test process, as another app holding it would look."""
    lock = Path(str(mem) + ".lock")
    lock.write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "app": "com.example.other"}))
    return lock


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    return tmp_path / "EdgeMemory" / "memory.jsonl"


# ------------------------------------------------------------------------------ correct behaviour

def test_end_to_end(tmp_path: Path, mem: Path) -> None:
    p = str(mem)
    rc, body = run(tmp_path, "append", {"path": p, "entry": {"content": "Été à Paris", "type": "event", "tags": ["travel"]}}, proc=True)
    assert rc == 0 and isinstance(body, dict)
    first = body["id"]
    assert len(str(body["ts"])) == 13  # milliseconds
    rc, _ = run(tmp_path, "update", {"path": p, "id": first, "entry": {"content": "ÉTÉ À LYON"}}, proc=True)
    assert rc == 0
    other = new_id()
    rc, _ = run(tmp_path, "append", {"path": p, "entry": {"id": other, "ts": 1701234567890, "src": "com.example.chat",
                                                           "content": "User prefers dark mode", "tags": ["ui", "theme"]}})
    assert rc == 0
    rc, view = run(tmp_path, "resolve", {"path": p}, proc=True)
    assert rc == 0 and [e["content"] for e in view] == ["User prefers dark mode", "ÉTÉ À LYON"]
    assert run(tmp_path, "query", {"path": p, "text": "été à lyon"})[1][0]["id"] == first
    assert run(tmp_path, "query", {"path": p, "tags": ["ui"]})[1][0]["id"] == other
    assert run(tmp_path, "query", {"path": p, "start": 1701234567890, "end": 1701234567890})[1][0]["id"] == other
    assert run(tmp_path, "query", {"path": p, "type": "event"})[1][0]["id"] == first
    assert run(tmp_path, "query", {"path": p, "text": "paris"})[1] == []  # the superseded version is not found
    rc, _ = run(tmp_path, "delete", {"path": p, "id": first}, proc=True)
    assert rc == 0
    assert [e["id"] for e in run(tmp_path, "resolve", {"path": p})[1]] == [other]
    lines = [json.loads(x) for x in mem.read_bytes().splitlines()]
    assert lines[-1]["id"] == first and lines[-1]["deleted"] is True
    assert "Paris" not in mem.read_text(encoding="utf-8")  # deleted content scrubbed
    assert run(tmp_path, "delete", {"path": p, "id": first})[0] == 3
    assert run(tmp_path, "update", {"path": p, "id": first, "entry": {"content": "y"}})[0] == 3
    assert not Path(p + ".lock").exists()
    assert run(tmp_path, "frobnicate", {"path": p}, proc=True)[0] == 4


def test_reader_resilience_and_rewrite_preserves_foreign_lines(tmp_path: Path, mem: Path) -> None:
    mem.parent.mkdir(parents=True)
    a, b, c = new_id(), new_id(), new_id()
    foreign = [b"not json at all", b'{"v":"2.0","id":"' + c.encode() + b'","ts":5,"blob":1}',
               b'{"v":"1.0","id":"bad-utf8","ts":3,"src":"com.x","content":"\xff\xfe"}']
    mem.write_bytes(line(a, 1, "keep me") + b"\n".join(foreign) + b"\n" + line(b, 2, "drop me", extra={"k": 1})
                    + b'{"v":"1.0","id":"torn')
    rc, view = run(tmp_path, "resolve", {"path": str(mem)})
    assert rc == 0 and {e["id"] for e in view} == {a, b}
    assert [e for e in view if e["id"] == b][0]["extra"] == {"k": 1}  # unknown fields kept
    ino = mem.stat().st_ino
    assert run(tmp_path, "delete", {"path": str(mem), "id": b})[0] == 0
    data = mem.read_bytes()
    assert all(f in data for f in foreign) and mem.stat().st_ino != ino  # atomic replace, nothing foreign lost
    rc, _ = run(tmp_path, "append", {"path": str(mem), "entry": {"content": "after torn"}})
    assert rc == 0
    assert {e["content"] for e in run(tmp_path, "resolve", {"path": str(mem)})[1]} == {"keep me", "after torn"}


def test_validation(tmp_path: Path, mem: Path) -> None:
    p = str(mem)
    assert run(tmp_path, "append", {"path": p, "entry": {"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "content": "v1 uuid"}})[0] == 3
    assert run(tmp_path, "append", {"path": p, "entry": {"content": "x", "tags": ["UI"]}})[0] == 3
    assert run(tmp_path, "append", {"path": p, "entry": {"content": "x", "v": "1"}})[0] == 3
    assert run(tmp_path, "append", {"path": p, "entry": {"content": "encrypted::abc"}})[0] == 3
    assert run(tmp_path, "append", {"path": p, "entry": {"content": "\ud800"}})[0] == 3
    assert run(tmp_path, "append", {"path": p, "entry": {"content": "encrypted:AES256:QUJD"}})[0] == 0
    assert run(tmp_path, "query", {"path": p, "text": "aes256"})[1] == []  # ciphertext is not searched


def test_lock_wait_and_stale_break(tmp_path: Path, mem: Path) -> None:
    mem.parent.mkdir(parents=True)
    lock = hold_lock(mem)
    rc, body = run(tmp_path, "append", {"path": str(mem), "entry": {"content": "x"}}, EMP_LOCK_WAIT_S="0.3")
    assert rc == 3 and body["busy"] and lock.exists() and not mem.exists()
    dead = subprocess.run([sys.executable, "-S", "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(json.dumps({"pid": int(dead.stdout), "host": os.uname().nodename}))
    rc, _ = run(tmp_path, "append", {"path": str(mem), "entry": {"content": "x"}}, EMP_LOCK_WAIT_S="0.3")
    assert rc == 0 and not lock.exists()


def test_concurrent_apps_lose_nothing(tmp_path: Path, mem: Path) -> None:
    mem.parent.mkdir(parents=True)
    procs = []
    for n in range(6):
        work = tmp_path / f"w{n}"
        work.mkdir()
        (work / "in.json").write_text(json.dumps({"path": str(mem), "entry": {"content": f"app {n}"}}))
        procs.append(subprocess.Popen([sys.executable, "-S", str(APP), "append", str(work / "in.json"), str(work / "out.json")], cwd=work))
    assert [p.wait(timeout=30) for p in procs] == [0] * 6
    assert sorted(e["content"] for e in run(tmp_path, "resolve", {"path": str(mem)})[1]) == [f"app {n}" for n in range(6)]
    assert all(json.loads(x) for x in mem.read_bytes().splitlines()) and not Path(str(mem) + ".lock").exists()


def test_bugs_come_from_the_environment(tmp_path: Path, mem: Path) -> None:
    entry = {"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "content": "c"}
    assert run(tmp_path, "append", {"path": str(mem), "entry": entry}, proc=True)[0] == 3
    assert run(tmp_path, "append", {"path": str(mem), "entry": entry}, "accepts_non_v4_id", proc=True)[0] == 0


# ------------------------------------------------------------------------------ each bug is visible

def test_bug_list_is_complete() -> None:
    assert 6 <= len(BUG_NAMES) <= 10 and len(set(BUG_NAMES)) == len(BUG_NAMES)
    assert set(BUG_NAMES) == {n for n in BUG_NAMES if f'bug("{n}")' in APP.read_text(encoding="utf-8")}


def _update_under_held_lock(tmp: Path, mem: Path, bugs: str) -> int:
    ident = new_id()
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_bytes(line(ident, 1))
    hold_lock(mem)
    return run(tmp, "update", {"path": str(mem), "id": ident, "entry": {"content": "y"}}, bugs, EMP_LOCK_WAIT_S="0.2")[0]


def _append_under_held_lock(tmp: Path, mem: Path, bugs: str) -> bool:
    mem.parent.mkdir(parents=True, exist_ok=True)
    lock = hold_lock(mem)
    rc = run(tmp, "append", {"path": str(mem), "entry": {"content": "x"}}, bugs, EMP_LOCK_WAIT_S="0.7")[0]
    return rc == 0 and not lock.exists()


def _lock_after_refused_update(tmp: Path, mem: Path, bugs: str) -> bool:
    run(tmp, "update", {"path": str(mem), "id": new_id(), "entry": {"content": "y"}}, bugs)
    return Path(str(mem) + ".lock").exists()


def _delete_keeps_inode(tmp: Path, mem: Path, bugs: str) -> bool:
    ident = new_id()
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_bytes(line(ident, 1) + line(new_id(), 2))
    ino = mem.stat().st_ino
    assert run(tmp, "delete", {"path": str(mem), "id": ident}, bugs)[0] == 0
    return mem.stat().st_ino == ino


def _resolve_content(tmp: Path, mem: Path, data: bytes, bugs: str) -> object:
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_bytes(data)
    rc, view = run(tmp, "resolve", {"path": str(mem)}, bugs)
    return [e["content"] for e in view] if rc == 0 else rc


def _out_of_order(tmp: Path, mem: Path, bugs: str) -> object:
    ident = new_id()
    return _resolve_content(tmp, mem, line(ident, 200, "newer") + line(ident, 100, "older"), bugs)


def _recreated_after_tombstone(tmp: Path, mem: Path, bugs: str) -> object:
    ident = new_id()
    tomb = {"v": "1.0", "id": ident, "ts": 2, "src": "com.x", "content": "", "deleted": True}
    return _resolve_content(tmp, mem, line(ident, 1, "old") + json.dumps(tomb).encode() + b"\n" + line(ident, 3, "back"), bugs)


def _append_after_torn_line(tmp: Path, mem: Path, bugs: str) -> object:
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_bytes(line(new_id(), 1, "a") + b'{"v":"1.0","id":"half')
    run(tmp, "append", {"path": str(mem), "entry": {"content": "b"}}, bugs)
    return sorted(e["content"] for e in run(tmp, "resolve", {"path": str(mem)})[1])


def _bad_utf8_line(tmp: Path, mem: Path, bugs: str) -> object:
    return _resolve_content(tmp, mem, b'{"v":"1.0","id":"z","ts":1,"src":"com.x","content":"\xc3"}\n' + line(new_id(), 2, "ok"), bugs)


def _query_old_version(tmp: Path, mem: Path, bugs: str) -> object:
    ident = new_id()
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_bytes(line(ident, 1, "alpha") + line(ident, 2, "beta"))
    return run(tmp, "query", {"path": str(mem), "text": "alpha"}, bugs)[1]


def _append_v1_uuid(tmp: Path, mem: Path, bugs: str) -> int:
    return run(tmp, "append", {"path": str(mem), "entry": {"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "content": "c"}}, bugs)[0]


PROBES = {
    "update_skips_lock": _update_under_held_lock,
    "live_lock_broken_after_retries": _append_under_held_lock,
    "lock_left_on_refusal": _lock_after_refused_update,
    "rewrite_in_place": _delete_keeps_inode,
    "last_line_wins": _out_of_order,
    "tombstone_beats_newer_entry": _recreated_after_tombstone,
    "append_glued_to_torn_line": _append_after_torn_line,
    "whole_file_utf8_decode": _bad_utf8_line,
    "query_filter_before_resolve": _query_old_version,
    "accepts_non_v4_id": _append_v1_uuid,
}


def test_every_bug_has_a_probe() -> None:
    assert set(PROBES) == set(BUG_NAMES)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_bug_changes_behaviour(tmp_path: Path, name: str) -> None:
    probe = PROBES[name]
    correct = probe(tmp_path / "ok", tmp_path / "ok" / "memory.jsonl", "")
    buggy = probe(tmp_path / "bug", tmp_path / "bug" / "memory.jsonl", name)
    assert correct != buggy, f"{name}: same observable result with and without the bug ({correct!r})"
