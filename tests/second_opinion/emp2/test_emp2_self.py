"""Self-test of the emp2 app, one process per operation as the harness drives it.

The clean build behaves as its README says, and each bug in bugs.json changes what an operation does.
"""

import importlib
import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from unittest import mock

import pytest

HERE = Path(__file__).resolve().parent
APP = HERE / "app.py"
BUGS = [entry["name"] for entry in json.loads((HERE / "bugs.json").read_text())]
APP_MODULES = ("bugs", "entry", "lock", "store", "writer", "app")


def load_app():
    """app.py imported under its plain module names without leaving them (or taking others) in sys.modules."""
    saved = {name: sys.modules.pop(name) for name in APP_MODULES if name in sys.modules}
    sys.path.insert(0, str(HERE))
    try:
        return importlib.import_module("app")
    finally:
        sys.path.remove(str(HERE))
        for name in APP_MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


APP_MODULE = load_app()


def run(
    folder: Path, operation: str, request: dict, bugs: str = "", lock_timeout: str = "0.3", process=False
):
    """(exit code, reply) of one operation: app.main in this process (fast), or a real process."""
    request_file, reply_file = folder / f"in-{uuid.uuid4().hex}.json", folder / f"out-{uuid.uuid4().hex}.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    env = {"SECOND_OPINION_BUGS": bugs, "EMP2_LOCK_TIMEOUT": lock_timeout}
    arguments = [operation, str(request_file), str(reply_file)]
    if process:
        command = [sys.executable, str(APP), *arguments]
        code = subprocess.run(command, env={**os.environ, **env}, capture_output=True, timeout=20).returncode
    else:
        with mock.patch.dict(os.environ, env):
            code = APP_MODULE.main(arguments)
    reply = json.loads(reply_file.read_text(encoding="utf-8")) if reply_file.exists() else None
    return code, reply


def line(content: str, ts: int, entry_id: str | None = None, **fields) -> str:
    entry = {
        "v": "1.0",
        "id": entry_id or str(uuid.uuid4()),
        "ts": ts,
        "src": "com.example.test",
        "content": content,
    }
    entry.update(fields)
    return json.dumps(entry, ensure_ascii=False)


def memory_file(folder: Path, *lines: str, end: str = "\n") -> str:
    path = folder / "memory.jsonl"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return str(path)


def contents(folder: Path, path: str, bugs: str = "") -> list:
    code, reply = run(folder, "resolve", {"path": path}, bugs)
    assert code == 0, reply
    return [entry["content"] for entry in reply]


# ---- one observation per bug ---------------------------------------------------------------------------


def observe_resolve_by_file_order(folder, bugs):
    same = str(uuid.uuid4())
    path = memory_file(folder, line("newer", 2000, same), line("older", 1000, same))
    return contents(folder, path, bugs)


def observe_corrupt_line_aborts(folder, bugs):
    path = memory_file(folder, line("one", 1000), "{not json", line("two", 2000))
    code, reply = run(folder, "resolve", {"path": path}, bugs)
    return code, reply and len(reply)


def observe_no_newline_guard(folder, bugs):
    path = memory_file(folder, line("kept", 1000), '{"v":"1.0","id":"trunc', end="")
    run(folder, "append", {"path": path, "entry": {"content": "new one", "src": "com.example.test"}}, bugs)
    return contents(folder, path)


def observe_ignore_lock(folder, bugs):
    path = memory_file(folder, line("existing", 1000))
    Path(path + ".lock").write_text("another app\n")
    code, _ = run(folder, "append", {"path": path, "entry": {"content": "while locked"}}, bugs)
    return code, contents(folder, path)


def observe_lock_left_behind(folder, bugs):
    path = memory_file(folder, line("existing", 1000))
    code, _ = run(folder, "update", {"path": path, "id": str(uuid.uuid4()), "entry": {"content": "x"}}, bugs)
    return code, os.path.exists(path + ".lock")


def observe_lock_no_wait(folder, bugs):
    path = memory_file(folder, line("existing", 1000))
    lock = Path(path + ".lock")
    lock.write_text("another app\n")
    releaser = threading.Timer(0.3, lock.unlink)
    releaser.start()
    try:
        code, _ = run(
            folder, "append", {"path": path, "entry": {"content": "after wait"}}, bugs, lock_timeout="3"
        )
    finally:
        releaser.join()
    return code


def observe_delete_only_last_line(folder, bugs):
    path = memory_file(folder, line("unrelated", 500))
    _, made = run(folder, "append", {"path": path, "entry": {"content": "first version", "ts": 1000}}, bugs)
    run(folder, "update", {"path": path, "id": made["id"], "entry": {"content": "second version"}}, bugs)
    run(folder, "delete", {"path": path, "id": made["id"]}, bugs)
    return contents(folder, path)


def observe_uuid_not_v4(folder, bugs):
    path = str(folder / "memory.jsonl")
    _, made = run(folder, "append", {"path": path, "entry": {"content": "no id given"}}, bugs)
    return uuid.UUID(made["id"]).version


def observe_ts_in_seconds(folder, bugs):
    path = str(folder / "memory.jsonl")
    run(folder, "append", {"path": path, "entry": {"content": "no ts given"}}, bugs)
    _, (entry,) = run(folder, "resolve", {"path": path})
    return entry["ts"] > 10**12


def observe_time_end_exclusive(folder, bugs):
    path = memory_file(folder, line("a", 1000), line("b", 2000), line("c", 3000))
    _, reply = run(folder, "query", {"path": path, "start": 1000, "end": 2000}, bugs)
    return [entry["content"] for entry in reply]


def observe_text_ascii_casefold(folder, bugs):
    path = memory_file(folder, line("Café crème au lait", 1000), line("tea", 2000))
    _, reply = run(folder, "query", {"path": path, "text": "CAFÉ"}, bugs)
    return [entry["content"] for entry in reply]


def observe_tags_not_lowercased(folder, bugs):
    path = str(folder / "memory.jsonl")
    code, _ = run(folder, "append", {"path": path, "entry": {"content": "x", "tags": ["UI", "theme"]}}, bugs)
    return code


def observe_unknown_fields_rejected(folder, bugs):
    path = memory_file(folder, line("from a 1.1 app", 1000, v="1.1", mood="calm"), line("plain", 2000))
    return contents(folder, path, bugs)


def observe_update_keeps_old_ts(folder, bugs):
    path = memory_file(folder)
    _, made = run(folder, "append", {"path": path, "entry": {"content": "before", "ts": 1000}}, bugs)
    run(folder, "update", {"path": path, "id": made["id"], "entry": {"content": "after"}}, bugs)
    last = json.loads(Path(path).read_text(encoding="utf-8").splitlines()[-1])
    return last["content"], last["ts"] > 1000


EXPECTED_CLEAN = {
    "resolve_by_file_order": ["newer"],
    "corrupt_line_aborts": (0, 2),
    "no_newline_guard": ["kept", "new one"],
    "ignore_lock": (3, ["existing"]),
    "lock_left_behind": (3, False),
    "lock_no_wait": 0,
    "delete_only_last_line": ["unrelated"],
    "uuid_not_v4": 4,
    "ts_in_seconds": True,
    "time_end_exclusive": ["a", "b"],
    "text_ascii_casefold": ["Café crème au lait"],
    "tags_not_lowercased": 3,
    "unknown_fields_rejected": ["from a 1.1 app", "plain"],
    "update_keeps_old_ts": ("after", True),
}


def test_every_bug_has_an_observation():
    assert sorted(EXPECTED_CLEAN) == sorted(BUGS)


@pytest.mark.parametrize("bug", BUGS)
def test_bug_changes_behaviour(bug, tmp_path):
    observe = globals()[f"observe_{bug}"]
    (tmp_path / "clean").mkdir()
    (tmp_path / "bugged").mkdir()
    clean_value = observe(tmp_path / "clean", "")
    assert clean_value == EXPECTED_CLEAN[bug]
    assert observe(tmp_path / "bugged", bug) != clean_value


# ---- the clean app, beyond the bug scenarios -----------------------------------------------------------


def test_append_fills_and_keeps_fields(tmp_path):
    path = str(tmp_path / "sub" / "memory.jsonl")
    entry = {
        "content": "User prefers dark mode",
        "src": "com.example.chat",
        "type": "preference",
        "tags": ["ui"],
    }
    code, made = run(tmp_path, "append", {"path": path, "entry": {**entry, "meta": {"priority": "high"}}})
    assert code == 0 and uuid.UUID(made["id"]).version == 4
    _, (stored,) = run(tmp_path, "resolve", {"path": path})
    assert stored["v"] == "1.0" and stored["id"] == made["id"] and isinstance(stored["ts"], int)
    assert {k: stored[k] for k in entry} == entry and stored["meta"] == {"priority": "high"}
    assert not os.path.exists(path + ".lock")


def test_query_combines_filters(tmp_path):
    path = memory_file(
        tmp_path,
        line("Meeting with John", 1000, type="event", tags=["calendar", "person:john"]),
        line("Meeting with Ann", 2000, type="event", tags=["calendar"]),
        line("John likes tea", 3000, type="fact", tags=["person:john"]),
        line("encrypted:AES256:Sm9obg==", 3500, tags=["person:john"]),
    )

    def query(**filters):
        code, reply = run(tmp_path, "query", {"path": path, **filters})
        assert code == 0, reply
        return [entry["content"] for entry in reply]

    assert query(tags=["calendar", "person:john"]) == ["Meeting with John"]
    assert query(type="event", text="ann") == ["Meeting with Ann"]
    assert query(text="john", start=1500) == ["John likes tea"]
    assert query(tags="person:john", end=3500) == [
        "Meeting with John",
        "John likes tea",
        "encrypted:AES256:Sm9obg==",
    ]
    assert run(tmp_path, "query", {"path": path, "start": "yesterday"})[0] == 3


def test_update_and_delete(tmp_path):
    path = str(tmp_path / "memory.jsonl")
    _, made = run(tmp_path, "append", {"path": path, "entry": {"content": "v1", "tags": ["a"]}})
    assert run(tmp_path, "update", {"path": path, "id": made["id"], "entry": {"content": "v2"}})[0] == 0
    _, (stored,) = run(tmp_path, "resolve", {"path": path})
    assert stored["content"] == "v2" and stored["tags"] == ["a"]
    stale = {"path": path, "id": made["id"], "entry": {"content": "v0", "ts": 1}}
    assert run(tmp_path, "update", stale)[0] == 3
    assert run(tmp_path, "delete", {"path": path, "id": made["id"]}) == (0, {"deleted": made["id"]})
    assert contents(tmp_path, path) == [] and Path(path).read_text() == ""
    assert run(tmp_path, "delete", {"path": path, "id": made["id"]})[0] == 3


@pytest.mark.parametrize(
    "entry",
    [
        {"content": "x", "id": "not-a-uuid"},
        {"content": "x", "id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
        {"content": "x", "v": "2.0"},
        {"content": "x", "src": "myapp"},
        {"content": "x", "tags": "ui"},
        {"content": "x", "emb": [0.1, "high"]},
        {"content": "x", "ts": "yesterday"},
        {"content": "encrypted:AES256"},
        {"src": "com.example.test"},
    ],
)
def test_invalid_entries_refused_and_file_untouched(tmp_path, entry):
    path = memory_file(tmp_path, line("existing", 1000))
    before = Path(path).read_bytes()
    code, reply = run(tmp_path, "append", {"path": path, "entry": entry})
    assert code == 3 and "error" in reply and Path(path).read_bytes() == before


def test_reader_tolerates_other_apps(tmp_path):
    same = str(uuid.uuid4())
    raw = (
        "\ufeff"
        + line("with bom", 1000)
        + "\r\n"
        + line("tombstoned", 1000, same)
        + "\n"
        + json.dumps({"v": "1.0", "id": same, "ts": 2000, "src": "com.other", "content": "", "deleted": True})
        + "\n"
        + "\n[1, 2]\n"
        + line("from 2.0", 1000, v="2.0")
        + "\n"
        + line("not a v4 id", 1500, "legacy-id-1")
        + "\n"
    )
    path = tmp_path / "memory.jsonl"
    path.write_bytes(raw.encode("utf-8") + b'{"bad utf8": "\xff"}\n')
    assert contents(tmp_path, str(path)) == ["with bom", "not a v4 id"]


def test_delete_keeps_unreadable_lines_byte_for_byte(tmp_path):
    doomed = str(uuid.uuid4())
    kept = line("kept", 2000)
    path = memory_file(tmp_path, "garbage line {", line("doomed", 1000, doomed), kept)
    assert run(tmp_path, "delete", {"path": path, "id": doomed})[0] == 0
    assert Path(path).read_text().splitlines() == ["garbage line {", kept]


def test_command_line_contract(tmp_path):
    """Real processes: exit codes 0, 3, 4, and an unknown bug name refused before any work."""
    path = str(tmp_path / "memory.jsonl")
    code, made = run(tmp_path, "append", {"path": path, "entry": {"content": "via a process"}}, process=True)
    assert code == 0 and uuid.UUID(made["id"]).version == 4
    assert run(tmp_path, "resolve", {"path": path}, process=True)[1][0]["content"] == "via a process"
    assert run(tmp_path, "delete", {"path": path, "id": str(uuid.uuid4())}, process=True)[0] == 3
    assert run(tmp_path, "compact", {"path": path}, process=True)[0] == 4
    assert run(tmp_path, "resolve", {"path": path}, bugs="no_such_bug", process=True)[0] not in (0, 3, 4)
    assert run(tmp_path, "resolve", {"path": str(tmp_path / "missing.jsonl")}) == (0, [])
