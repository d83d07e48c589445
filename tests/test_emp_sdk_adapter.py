"""The EMP SDK `cmd:` adapter (adapters/emp-sdk) driven against a fake SDK written here, and its fs
platform handler on its own: the operation mapping, exit codes and file handling, without the SDK."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from node_kit import NODE, NODE_TIMEOUT_S, needs_node, run_node

ADAPTERS = Path(__file__).resolve().parents[1] / "adapters"
EMP_CMD = ADAPTERS / "emp-sdk" / "emp-cmd.cjs"


# A stand-in with the SDK's store surface, so the adapter's mapping, exit codes and fs handler are
# exercised without the SDK. It records what it was asked through the platform handler it is given.
FAKE_STORE = r"""
'use strict';
class EdgeMemoryStore {
  constructor(config, platform) {
    if (!/^[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)+$/.test(config.appId)) {
      const error = new Error('bad app id'); error.name = 'ValidationError'; throw error;
    }
    this.config = config; this.platform = platform;
  }
  async initialize() {
    const dir = this.config.filePath.substring(0, this.config.filePath.lastIndexOf('/'));
    await this.platform.ensureDirectory(dir);
    if (!(await this.platform.fileExists(this.config.filePath))) await this.platform.writeFile(this.config.filePath, '');
  }
  async write(input) {
    if (input.content === 'invalid') { const e = new Error('content'); e.name = 'ValidationError'; throw e; }
    const line = { id: 'picked-by-fake', src: this.config.appId, ...input };
    await this.platform.appendFile(this.config.filePath, JSON.stringify(line) + '\n');
    return line;
  }
  async read(filter) {
    const text = await this.platform.readFile(this.config.filePath);
    return [{ lines: text.split('\n').filter(Boolean).length, filter: filter === undefined ? null : filter }];
  }
  async search(text, filter) { return [{ text, filter }]; }
  async update(id, updates) {
    if (id === 'missing') throw new Error(`Entry with id ${id} not found`);
    return this.write({ ...updates });
  }
  async delete(id) {
    if (id === 'boom') throw new Error('disk on fire');
    if (id === 'busy') { const e = new Error('lock'); e.name = 'LockTimeoutError'; throw e; }
  }
}
module.exports = { EdgeMemoryStore };
"""


@pytest.fixture
def fake_sdk(tmp_path: Path) -> Path:
    home = tmp_path / "fake-sdk"
    (home / "dist").mkdir(parents=True)
    (home / "dist" / "MemoryStore.js").write_text(FAKE_STORE)
    return home


def emp_call(op: str, body: object, work: Path, sdk_home: Path | None) -> tuple[int, object, str]:
    """One adapter process: (exit code, reply JSON or None, stderr)."""
    assert NODE is not None
    request, reply = work / f"{op}.in.json", work / f"{op}.out.json"
    request.write_text(body if isinstance(body, str) else json.dumps(body))
    reply.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "MEMCONFORM_EMP_SDK_HOME"}
    if sdk_home is not None:
        env["MEMCONFORM_EMP_SDK_HOME"] = str(sdk_home)
    done = subprocess.run([NODE, str(EMP_CMD), op, str(request), str(reply)], capture_output=True, text=True,
                          timeout=NODE_TIMEOUT_S, env=env, cwd=work)
    return done.returncode, json.loads(reply.read_text()) if reply.exists() else None, done.stderr


@needs_node
def test_emp_adapter_append_creates_the_file_and_reports_the_sdk_id(tmp_path: Path, fake_sdk: Path) -> None:
    memory = tmp_path / "new-folder" / "memory.jsonl"
    entry = {"v": "1.0", "id": "given", "ts": 5, "src": "com.example.other", "content": "hi", "tags": ["a"], "x": 1}
    code, reply, _ = emp_call("append", {"path": str(memory), "entry": entry}, tmp_path, fake_sdk)
    assert (code, reply) == (0, {"ok": True, "id": "picked-by-fake"})
    written = json.loads(memory.read_text())
    # only the SDK's input fields reach it; the app is the entry's src
    assert written == {"id": "picked-by-fake", "src": "com.example.other", "content": "hi", "ts": 5, "tags": ["a"]}


@needs_node
def test_emp_adapter_resolve_and_query_map_onto_read_and_search(tmp_path: Path, fake_sdk: Path) -> None:
    memory = tmp_path / "memory.jsonl"
    memory.write_text('{"a":1}\n{"b":2}\n')
    assert emp_call("resolve", {"path": str(memory)}, tmp_path, fake_sdk)[:2] == (0, [{"lines": 2, "filter": None}])
    query = {"path": str(memory), "start": 1, "end": 9, "tags": ["t"], "type": "note"}
    assert emp_call("query", query, tmp_path, fake_sdk)[1] == [
        {"lines": 2, "filter": {"since": 1, "until": 9, "type": "note", "tags": ["t"]}}]
    assert emp_call("query", {**query, "text": "kw"}, tmp_path, fake_sdk)[1] == [
        {"text": "kw", "filter": {"since": 1, "until": 9, "type": "note", "tags": ["t"]}}]


@needs_node
def test_emp_adapter_hands_odd_query_values_to_the_sdk_as_given(tmp_path: Path, fake_sdk: Path) -> None:
    """A value outside the SDK's filter types (tags as a string, a bound written as a string, null) is the
    SDK's to read: the adapter drops none of them, so a filter it cannot read is never shown as ignored."""
    memory = tmp_path / "memory.jsonl"
    memory.write_text('{"a":1}\n')
    odd = {"path": str(memory), "start": None, "end": "9", "tags": "ui", "type": ""}
    assert emp_call("query", odd, tmp_path, fake_sdk)[1] == [
        {"lines": 1, "filter": {"since": None, "until": "9", "type": "", "tags": "ui"}}]
    assert emp_call("query", {"path": str(memory), "tags": []}, tmp_path, fake_sdk)[1] == [{"lines": 1, "filter": {"tags": []}}]


@needs_node
def test_emp_adapter_exit_codes(tmp_path: Path, fake_sdk: Path) -> None:
    memory = str(tmp_path / "memory.jsonl")
    refused = [
        ("append", "not json"),
        ("append", {"path": memory, "entry": [1]}),
        ("append", {"path": memory, "entry": {"content": "invalid"}}),
        ("append", {"path": memory, "entry": {"content": "x", "src": "Not An App"}}),
        ("update", {"path": memory, "id": "missing", "entry": {"content": "x"}}),
        ("delete", {"path": memory, "id": "busy"}),
        ("resolve", {"entry": {}}),
    ]
    for op, body in refused:
        code, reply, _ = emp_call(op, body, tmp_path, fake_sdk)
        assert code == 3 and isinstance(reply, dict) and reply["errors"], (op, body, code, reply)
    code, reply, stderr = emp_call("delete", {"path": memory, "id": "boom"}, tmp_path, fake_sdk)
    assert (code, reply) == (1, None) and "disk on fire" in stderr
    assert emp_call("delete", {"path": memory, "id": "fine"}, tmp_path, fake_sdk)[:2] == (0, {"ok": True})
    assert emp_call("export", {"path": memory}, tmp_path, fake_sdk)[0] == 4
    code, _, stderr = emp_call("append", {"path": memory, "entry": {"content": "x"}}, tmp_path, None)
    assert code == 2 and "MEMCONFORM_EMP_SDK_HOME" in stderr


@needs_node
def test_fs_platform_handler(tmp_path: Path) -> None:
    script = """
const { FsPlatformHandler } = require(process.argv[1]);
const dir = process.argv[2];
(async () => {
  const h = new FsPlatformHandler(dir + '/m.jsonl');
  const out = { missing: await h.readFile(dir + '/none'), access: await h.hasAccess(), path: await h.getFilePath() };
  await h.ensureDirectory(dir + '/a/b');
  await h.appendFile(dir + '/a/b/f', 'one\\n'); await h.appendFile(dir + '/a/b/f', 'two\\n');
  out.appended = await h.readFile(dir + '/a/b/f');
  await h.writeFile(dir + '/a/b/f', 'three\\n'); out.written = await h.readFile(dir + '/a/b/f');
  await h.deleteFile(dir + '/a/b/f'); await h.deleteFile(dir + '/a/b/f');
  out.exists = await h.fileExists(dir + '/a/b/f');
  let refused = '';
  try { await new FsPlatformHandler(undefined).getFilePath(); } catch (e) { refused = e.message; }
  out.refused = refused;
  console.log(JSON.stringify(out));
})();
"""
    done = run_node(script, str(ADAPTERS / "emp-sdk" / "fs-platform.cjs"), str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "missing": "", "access": True, "path": f"{tmp_path}/m.jsonl", "appended": "one\ntwo\n",
        "written": "three\n", "exists": False, "refused": "no memory file path was configured"}
