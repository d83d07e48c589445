"""Shards as processes (issue 31's matrix items, issue 32's budgets): a start program's daemon dies with its
shard, in a PID namespace and under the subreaper alike; start-up errors and logs keep the shard's key
masked everywhere; `api_key_from` reads only the shard's or the registry's folder, or a variable; the
health probe follows no redirect; a shard that ran out of its run budget is not assessed, run again alone."""

from __future__ import annotations

import fcntl
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from memconform.matrix.launch import _answers
from memconform.matrix.registry import registry_from_data
from test_matrix_run import entry, memconform

pytestmark = pytest.mark.slow  # whole `matrix run` processes

# A start program that leaves a daemon behind: double fork, setsid, then exec with an empty environment (no
# token of the call survives), holding a lock on a file outside the shard; it answers on {port} only once
# the daemon has said its pid (as this test sees it: /proc is the host's, even inside a PID namespace).
DAEMON = """
import fcntl, os, socket, sys, time
lock, pidfile, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fh = open(lock, "w")
        fcntl.flock(fh, fcntl.LOCK_EX)
        os.set_inheritable(fh.fileno(), True)
        with open(pidfile + ".tmp", "w") as out:
            out.write(os.readlink("/proc/self"))
        os.rename(pidfile + ".tmp", pidfile)
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)"], {})
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.02)
server = socket.socket()
server.bind(("127.0.0.1", port))
server.listen()
time.sleep(300)
"""


def started_with(id_: str, argv: list[str], target: str = "reference:amps") -> str:
    return entry(id_, "amps", target) + f"start = {json.dumps(argv)}\n"


@pytest.mark.parametrize("containment", ["namespace-if-possible", "subreaper"])
def test_a_start_programs_setsid_daemon_dies_with_its_shard(tmp_path: Path, containment: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if containment == "subreaper":
        monkeypatch.setenv("MEMCONFORM_CONTAINMENT", "subreaper")
    lock, pidfile = tmp_path / "daemon.lock", tmp_path / "daemon.pid"
    registry = tmp_path / "implementations.toml"
    registry.write_text(started_with("leaves-a-daemon", [sys.executable, "-c", DAEMON, str(lock), str(pidfile), "{port}"]),
                        "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"),
                      "--check", "amps.schema_valid", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(next((tmp_path / "m" / "shards").glob("*/shard.json")).read_text("utf-8"))
    assert record["status"] == "ran", record
    assert pidfile.exists(), "the daemon never started"
    pid = int(pidfile.read_text())
    with lock.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # only once the daemon is gone
        except BlockingIOError:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"the daemon {pid} outlived its shard ({containment})") from None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_start_up_error_quoting_the_key_is_masked_everywhere(tmp_path: Path) -> None:
    leak = tmp_path / "the-key-as-started"  # outside the matrix folder: where the test learns the key
    crash = (f"import sys; open({str(leak)!r}, 'w').write(sys.argv[1]); "
             "print('cannot start: bad key', sys.argv[1], file=sys.stderr); sys.exit(3)")
    registry = tmp_path / "implementations.toml"
    registry.write_text(started_with("says-its-key", [sys.executable, "-c", crash, "{key}"],
                                     target="http://127.0.0.1:{port}"), "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"),
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    key = leak.read_text()
    assert len(key) >= 24
    record = json.loads(next((tmp_path / "m" / "shards").glob("*/shard.json")).read_text("utf-8"))
    assert record["status"] == "errored" and "exited with 3" in record["reason"] and "cannot start: bad key" in record["reason"]
    assert key not in done.stdout + done.stderr and "cannot start: bad key" in done.stdout
    written = [p for p in (tmp_path / "m").rglob("*") if p.is_file()]
    assert any(p.name == "implementation.log" for p in written) and any(p.name == "matrix.html" for p in written)
    for path in written:
        assert key.encode() not in path.read_bytes(), path


def test_api_key_from_reads_only_the_registrys_or_the_shards_folder_or_a_variable(tmp_path: Path) -> None:
    (tmp_path / "reg").mkdir()
    (tmp_path / "secret.json").write_text('{"api_key": "a-private-file-elsewhere"}', "utf-8")
    (tmp_path / "reg" / "key.json").write_text('{"api_key": "the-registry-key"}', "utf-8")
    (tmp_path / "reg" / "link.json").symlink_to(tmp_path / "secret.json")
    cases = {"outside": str(tmp_path / "secret.json") + "#api_key", "linked-out": "{root}/link.json#api_key",
             "inside": "{root}/key.json#api_key", "variable": "env:MATRIX_TEST_KEY"}
    registry = tmp_path / "reg" / "implementations.toml"
    registry.write_text("".join(entry(name, "amps", "reference:amps") + f"api_key_from = {json.dumps(src)}\n"
                                for name, src in cases.items()), "utf-8")
    env_done = subprocess.run([sys.executable, "-m", "memconform.cli.main", "matrix", "run", "--implementations",
                               str(registry), "--all", "--out", str(tmp_path / "m"), "--check", "amps.schema_valid"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "MATRIX_TEST_KEY": "the-variable-key"})
    assert env_done.returncode == 0, env_done.stderr
    records = {json.loads(p.read_text("utf-8"))["implementation"]: json.loads(p.read_text("utf-8"))
               for p in (tmp_path / "m" / "shards").glob("*/shard.json")}
    for refused in ("outside", "linked-out"):
        assert records[refused]["status"] == "errored", records[refused]
        assert "refused" in records[refused]["reason"] or "outside" in records[refused]["reason"]
    for fine in ("inside", "variable"):
        assert records[fine]["status"] == "ran", records[fine]
    assert "a-private-file-elsewhere" not in (tmp_path / "m" / "matrix.json").read_text("utf-8")


class _Redirecting(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/health":
            self.send_response(302)
            self.send_header("Location", "/ok")
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def redirecting_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def test_the_health_probe_follows_no_redirect(redirecting_server: int, tmp_path: Path) -> None:
    def impl(health: str) -> object:
        data = {"implementation": [{"id": "x", "name": "x", "version": "1", "source": "s", "suites": ["amps"],
                                    "target": "http://127.0.0.1:{port}", "claims": {"amps": []}, "license": "MIT",
                                    "ci": True, "health": health}]}
        return registry_from_data(data, tmp_path)[0]

    assert _answers(impl("/health"), redirecting_server) is False  # 302 to a 200: not an answer
    assert _answers(impl("/ok"), redirecting_server) is True  # the control: the same server answers 200


def test_shards_out_of_their_run_budget_are_not_assessed_and_run_again_alone(tmp_path: Path) -> None:
    registry = tmp_path / "implementations.toml"
    registry.write_text(entry("starved-a", "amps", "reference:amps") + entry("starved-b", "amps", "reference:amps"),
                        "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--jobs", "2",
                      "--run-budget", "0.000001", "--out", str(tmp_path / "m"), "--check", "amps.schema_valid",
                      "--check", "amps.delete_cascades", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text("utf-8"))
    assert doc["sentences"] and not any(x["class"] == "all-pass" for x in doc["sentences"])
    assert all(set(x["outcomes"].values()) == {"not assessed"} for x in doc["sentences"])
    reasons = {r for x in doc["sentences"] for r in x["not_assessed"].values()}
    assert any("budget" in r for r in reasons), reasons
    records = [json.loads(p.read_text("utf-8")) for p in (tmp_path / "m" / "shards").glob("*/shard.json")]
    from memconform.matrix.run import bounded_jobs

    if bounded_jobs(2) == 2:  # two at once (memory allowing): each was then run again with no other shard running
        assert all("run again alone" in r.get("rerun", "") for r in records), records
    assert "run again alone" in done.stdout or bounded_jobs(2) == 1


def test_a_key_the_implementation_wrote_before_failing_is_masked_too(tmp_path: Path) -> None:
    # the implementation makes its own key (api_key_from), as the OMP servers do: not the shard's {key}
    crash = ("import json, os, sys; key = 'k3y-' + os.urandom(12).hex(); "
             "json.dump({'api_key': key}, open(sys.argv[1] + '/creds.json', 'w')); "
             "print('refusing to serve with key', key, file=sys.stderr); sys.exit(3)")
    registry = tmp_path / "implementations.toml"
    registry.write_text(started_with("writes-then-fails", [sys.executable, "-c", crash, "{workdir}"],
                                     target="http://127.0.0.1:{port}")
                        + 'api_key_from = "{workdir}/creds.json#api_key"\n', "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"),
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [creds] = (tmp_path / "m" / "shards").glob(str(Path("*", "work", "creds.json")))
    key = json.loads(creds.read_text("utf-8"))["api_key"]
    record = json.loads(next((tmp_path / "m" / "shards").glob("*/shard.json")).read_text("utf-8"))
    assert record["status"] == "errored" and "refusing to serve with key" in record["reason"], record
    assert key not in done.stdout + done.stderr
    for path in (p for p in (tmp_path / "m").rglob("*") if p.is_file() and p.name != "creds.json"):
        assert key.encode() not in path.read_bytes(), path
