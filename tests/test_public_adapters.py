"""The adapters for the public implementations (adapters/omp-server, adapters/emp-sdk) and the registry
entries that run them.

Unit tests need only a `node` (MEMCONFORM_NODE, else PATH): the loopback preload is loaded into small
scripts of our own, and the EMP `cmd:` adapter is driven against a fake SDK written here. The suite
runs against the real implementations are skipped unless MEMCONFORM_OMP_SERVER_HOME /
MEMCONFORM_EMP_SDK_HOME name copies built from their sources (none ships with memconform); they check
that a run completes with a full report, not what the implementations' verdicts are.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
LOOPBACK = ADAPTERS / "omp-server" / "loopback.cjs"
EMP_CMD = ADAPTERS / "emp-sdk" / "emp-cmd.cjs"
REGISTRY = ADAPTERS / "public-implementations.toml"
MEMCONFORM = Path(sys.executable).parent / "memconform"
OUTCOMES = {"passed", "failed", "errored", "skipped"}
NODE_TIMEOUT_S = 30


def node_binary() -> str | None:
    return os.environ.get("MEMCONFORM_NODE") or shutil.which("node")


def node_major(node: str) -> int:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    match = re.match(r"v(\d+)\.(\d+)", done.stdout.strip())
    return int(match.group(1)) if match else 0


NODE = node_binary()
needs_node = pytest.mark.skipif(NODE is None, reason="no node found (set MEMCONFORM_NODE or put node on PATH)")


def run_node(script: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, "-e", script, *args], capture_output=True, text=True, timeout=NODE_TIMEOUT_S,
                          env={**os.environ, **(env or {})}, cwd=cwd)


# ---- the loopback preload -------------------------------------------------------------------------

LISTEN_SCRIPT = """
require(process.argv[1]);
const http = require('node:http');
const forms = [
  (s, cb) => s.listen(0, '0.0.0.0', cb),
  (s, cb) => s.listen(0, cb),
  (s, cb) => s.listen({ port: 0, host: '::' }, cb),
  (s, cb) => s.listen(cb),
  (s, cb) => s.listen(0, '0.0.0.0', 16, cb),
];
(async () => {
  const seen = [];
  for (const listen of forms) {
    const server = http.createServer();
    await new Promise((resolve) => listen(server, resolve));
    seen.push(server.address().address);
    await new Promise((resolve) => server.close(resolve));
  }
  console.log(JSON.stringify(seen));
})();
"""

# The real fetch is replaced by a recorder before the preload wraps it, so nothing can leave the machine.
FETCH_SCRIPT = """
const calls = [];
globalThis.fetch = async (resource) => { calls.push(String(resource)); return 'sent'; };
require(process.argv[1]);
(async () => {
  const outcome = {};
  for (const url of ['https://api.anthropic.com/v1/messages', 'http://192.0.2.1/', 'http://127.0.0.1:9/x', 'http://localhost:9/y']) {
    try { outcome[url] = await fetch(url); } catch (error) { outcome[url] = 'refused: ' + error.message; }
  }
  console.log(JSON.stringify({ outcome, calls }));
})();
"""


@needs_node
def test_loopback_preload_binds_every_listen_form_to_127_0_0_1() -> None:
    done = run_node(LISTEN_SCRIPT, str(LOOPBACK))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["127.0.0.1"] * 5


@needs_node
def test_loopback_preload_leaves_unix_sockets_alone(tmp_path: Path) -> None:
    sock = tmp_path / "s.sock"
    script = ("require(process.argv[1]); const s = require('node:net').createServer();"
              "s.listen(process.argv[2], () => { console.log(JSON.stringify(s.address())); s.close(); });")
    done = run_node(script, str(LOOPBACK), str(sock))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == str(sock)


@needs_node
def test_loopback_preload_refuses_fetch_beyond_loopback() -> None:
    done = run_node(FETCH_SCRIPT, str(LOOPBACK))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["calls"] == ["http://127.0.0.1:9/x", "http://localhost:9/y"]
    for outside in ("https://api.anthropic.com/v1/messages", "http://192.0.2.1/"):
        assert result["outcome"][outside].startswith("refused: refused by the loopback preload")


# ---- the EMP cmd: adapter against a fake SDK --------------------------------------------------------

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


# ---- the registry entries -----------------------------------------------------------------------------

def test_registry_entries_name_a_version_a_home_and_loopback_only() -> None:
    entries = {e["id"]: e for e in tomllib.loads(REGISTRY.read_text())["implementation"]}
    assert set(entries) == {"omp-server-smjai", "emp-sdk-theianmay"}
    for entry in entries.values():
        assert entry["version"] not in ("main", "master", "HEAD", "latest") and entry["ci"] is False
        assert entry["home_env"] in ("MEMCONFORM_OMP_SERVER_HOME", "MEMCONFORM_EMP_SDK_HOME")
    omp = entries["omp-server-smjai"]
    assert omp["target"] == "http://127.0.0.1:{port}" and "{repo}/adapters/omp-server/loopback.cjs" in omp["start"]
    assert "{repo}/adapters/emp-sdk/emp-cmd.cjs" in entries["emp-sdk-theianmay"]["target"]


# ---- short suite runs against built copies (skipped unless present) ------------------------------------

def built_home(variable: str, marker: str) -> Path | None:
    value = os.environ.get(variable)
    return Path(value) if value and (Path(value) / marker).is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_health(url: str, proc: subprocess.Popen[bytes], attempts: int = 100) -> None:
    for _ in range(attempts):
        if proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}) before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        proc_wait(proc, 0.1)
    raise AssertionError(f"{url} did not answer within {attempts / 10:.0f} s")


def proc_wait(proc: subprocess.Popen[bytes], seconds: float) -> None:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def run_suite(args: list[str], report_dir: Path) -> tuple[int, list[dict[str, object]]]:
    done = subprocess.run([str(MEMCONFORM), "run", *args, "--profile", "ci", "--report-dir", str(report_dir)],
                          capture_output=True, text=True, timeout=600)
    records = [json.loads(line) for line in (report_dir / "report.jsonl").read_text().splitlines()]
    return done.returncode, records


def assert_full_report(code: int, records: list[dict[str, object]], checks: list[str], report_dir: Path) -> None:
    assert code in (0, 1), f"the run did not complete (exit {code})"
    assert records[0]["type"] == "header" and records[-1]["type"] == "footer"
    results = {r["check_id"]: r["outcome"] for r in records if r["type"] == "result"}
    assert set(results) == set(checks)
    assert set(results.values()) <= OUTCOMES and "errored" not in results.values()
    for name in ("summary.md", "junit.xml", "report.html"):
        assert (report_dir / name).is_file()


OMP_CHECKS = ["omp.list_response_shape", "omp.create_returns_201", "omp.search_keyword", "omp.list_filter_tags_and",
              "omp.auth_missing_key_401"]
EMP_CHECKS = ["emp.writer_append_keeps_foreign", "emp.reader_corrupt_line_isolated", "emp.writer_update_same_id"]


def test_short_omp_run_against_the_built_server(tmp_path: Path) -> None:
    home = built_home("MEMCONFORM_OMP_SERVER_HOME", "dist/index.js")
    if home is None:
        pytest.skip("MEMCONFORM_OMP_SERVER_HOME does not name a built OMP server (dist/index.js); none ships here")
    if NODE is None or node_major(NODE) < 22:
        pytest.skip("the OMP server needs Node 22 (node:sqlite): set MEMCONFORM_NODE")
    port, key = free_port(), "k" * 40
    env = {**os.environ, "PORT": str(port), "OMP_DB_PATH": str(tmp_path / "omp.db"), "OMP_API_KEY": key}
    for variable in ("OMP_AI_API_KEY", "OMP_AI_PROVIDER"):
        env.pop(variable, None)
    proc = subprocess.Popen([NODE, "-r", str(LOOPBACK), str(home / "dist" / "index.js")], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_health(f"http://127.0.0.1:{port}/v1/health", proc)
        args = ["--suite", "omp", "--target", f"http://127.0.0.1:{port}", "--api-key", key]
        code, records = run_suite([*args, *(a for c in OMP_CHECKS for a in ("--check", c))], tmp_path / "report")
        assert_full_report(code, records, OMP_CHECKS, tmp_path / "report")
    finally:
        proc.terminate()
        proc_wait(proc, 10)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_short_emp_run_against_the_built_sdk(tmp_path: Path) -> None:
    home = built_home("MEMCONFORM_EMP_SDK_HOME", "dist/MemoryStore.js")
    if home is None:
        pytest.skip("MEMCONFORM_EMP_SDK_HOME does not name a built EMP SDK (dist/MemoryStore.js); none ships here")
    if NODE is None:
        pytest.skip("no node found (set MEMCONFORM_NODE)")
    target = f"cmd:{NODE} {EMP_CMD} {{op}} {{input}} {{output}}"
    code, records = run_suite(["--suite", "emp", "--target", target, *(a for c in EMP_CHECKS for a in ("--check", c))],
                              tmp_path / "report")
    assert_full_report(code, records, EMP_CHECKS, tmp_path / "report")
