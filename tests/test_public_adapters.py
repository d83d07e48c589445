"""The adapters for the public implementations (adapters/omp-server, adapters/emp-sdk) and the registry
entries that run them.

Unit tests need only a `node` (MEMCONFORM_NODE, else PATH): the loopback and fresh-key preloads are
loaded into small scripts of our own (the EMP adapter's own tests: test_emp_sdk_adapter.py). The suite
runs against the real implementations are skipped unless MEMCONFORM_OMP_SERVER_HOME /
MEMCONFORM_EMP_SDK_HOME name copies built from their sources (none ships with memconform); they check
that a run completes with a full report, not what the implementations' verdicts are.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from node_kit import NODE, NODE_TIMEOUT_S, needs_node, node_major, run_node

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
LOOPBACK = ADAPTERS / "omp-server" / "loopback.cjs"
EMP_CMD = ADAPTERS / "emp-sdk" / "emp-cmd.cjs"
REGISTRY = ROOT / "implementations.toml"
MEMCONFORM = Path(sys.executable).parent / "memconform"
OUTCOMES = {"passed", "failed", "errored", "skipped"}


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


# ---- the registry entries -----------------------------------------------------------------------------

def test_registry_entries_name_a_version_a_home_and_loopback_only() -> None:
    entries = {e["id"]: e for e in tomllib.loads(REGISTRY.read_text())["implementation"]
               if e["id"] in ("omp-server-smjai", "emp-sdk-theianmay")}
    assert set(entries) == {"omp-server-smjai", "emp-sdk-theianmay"}
    for entry in entries.values():
        assert entry["version"] not in ("main", "master", "HEAD", "latest") and entry["ci"] is False
        assert entry["home_env"] in ("MEMCONFORM_OMP_SERVER_HOME", "MEMCONFORM_EMP_SDK_HOME")
    omp = entries["omp-server-smjai"]
    assert omp["target"] == "http://127.0.0.1:{port}" and "{root}/adapters/omp-server/loopback.cjs" in omp["start"]
    assert "{root}/adapters/emp-sdk/emp-cmd.cjs" in entries["emp-sdk-theianmay"]["target"]


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


def registry_entry(entry_id: str) -> dict[str, Any]:
    entries = {e["id"]: e for e in tomllib.loads(REGISTRY.read_text())["implementation"]}
    entry: dict[str, Any] = entries[entry_id]
    return entry


def fill(template: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def read_key(spec: str) -> str:
    """The key a started server published (api_key_from = FILE#MEMBER); the preload writes it before
    the server listens, so it is there once health answers."""
    path, _, member = spec.rpartition("#")
    return str(json.loads(Path(path).read_text())[member])


def test_short_omp_run_against_the_built_server(tmp_path: Path) -> None:
    home = built_home("MEMCONFORM_OMP_SERVER_HOME", "dist/index.js")
    if home is None:
        pytest.skip("MEMCONFORM_OMP_SERVER_HOME does not name a built OMP server (dist/index.js); none ships here")
    if NODE is None or node_major(NODE) < 22:
        pytest.skip("the OMP server needs Node 22 (node:sqlite): set MEMCONFORM_NODE")
    entry = registry_entry("omp-server-smjai")
    port = free_port()
    values = {"node": NODE, "root": str(ROOT), "home": str(home), "port": str(port), "workdir": str(tmp_path)}
    argv = [fill(word, values) for word in entry["start"]]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_AI_API_KEY", "OMP_AI_PROVIDER", "OMP_API_KEY")}
    env.update({k: fill(v, values) for k, v in entry["env"].items()})
    proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_health(fill(str(entry["target"]), values) + str(entry["health"]), proc)
        key = read_key(fill(str(entry["api_key_from"]), values))
        args = ["--suite", "omp", "--target", fill(str(entry["target"]), values), f"--api-key={key}",
                *(f"--option={option}" for option in entry["options"])]
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


# ---- the fresh-key preload ------------------------------------------------------------------------

FRESH_KEY = ADAPTERS / "omp-server" / "fresh-key.cjs"


@needs_node
def test_fresh_key_preload_sets_and_publishes_a_random_key(tmp_path: Path) -> None:
    assert NODE is not None
    keys = []
    for name in ("a.json", "b.json"):
        key_file = tmp_path / name
        env = {k: v for k, v in os.environ.items() if k != "OMP_API_KEY"} | {"MEMCONFORM_KEY_FILE": str(key_file)}
        done = subprocess.run([NODE, "-r", str(FRESH_KEY), "-e", "console.log(process.env.OMP_API_KEY)"],
                              capture_output=True, text=True, timeout=NODE_TIMEOUT_S, env=env)
        assert done.returncode == 0, done.stderr
        key = done.stdout.strip()
        assert re.fullmatch(r"[0-9a-f]{64}", key)
        assert json.loads(key_file.read_text()) == {"api_key": key}
        assert key_file.stat().st_mode & 0o777 == 0o600
        keys.append(key)
    assert keys[0] != keys[1]


@needs_node
def test_fresh_key_preload_keeps_a_given_key_and_never_overwrites_a_file(tmp_path: Path) -> None:
    assert NODE is not None
    key_file = tmp_path / "k.json"
    env = {**os.environ, "MEMCONFORM_KEY_FILE": str(key_file), "OMP_API_KEY": "given-" + "x" * 40}
    script = ["-e", "console.log(process.env.OMP_API_KEY)"]
    done = subprocess.run([NODE, "-r", str(FRESH_KEY), *script], capture_output=True, text=True, timeout=NODE_TIMEOUT_S, env=env)
    assert done.stdout.strip() == env["OMP_API_KEY"] and json.loads(key_file.read_text())["api_key"] == env["OMP_API_KEY"]
    again = subprocess.run([NODE, "-r", str(FRESH_KEY), *script], capture_output=True, text=True, timeout=NODE_TIMEOUT_S, env=env)
    assert again.returncode != 0 and "EEXIST" in again.stderr
