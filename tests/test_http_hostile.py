"""The hostile HTTP zoo: fake OMP servers that hang, trickle, bomb, flood, redirect, set cookies, echo the
key back or answer JSON no parser should trust, each run through `memconform run --suite omp`.

Every run ends in bounded time with exit 1 (a complete report: footer, junit.xml) or exit 2 (one
`memconform: error:` line), no check passed on a hostile answer, and the canary key appears nowhere:
not in the report folder, not in the terminal output. The servers answer the two preflights
(`GET /` and `GET /v1/memories?limit=1`) sensibly unless the point is that they do not, so the
checks themselves meet the hostility.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from made_once import made_once, shared_folder

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

ROOT = Path(__file__).resolve().parents[1]
CANARY = "mcCANARY" + "7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"
BOUND_S = 240  # a whole run against the worst of them, on a loaded machine
PREFLIGHT_OK = b'{"memories": [], "total": 0, "limit": 1, "offset": 0}'
# checks that judge what the harness was given, never an answer of the target
JUDGE_NO_ANSWER = {"omp.api_keys_at_least_32_chars"}  # the length of the --api-key given


@functools.cache
def gzip_bomb() -> bytes:
    """~80 KB of gzip that inflates to 80 MiB, past the default 64 MiB cap."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    return b"".join(squeeze.compress(zeros) for _ in range(80)) + squeeze.flush()


def head(status: str, headers: list[tuple[str, str]], length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers)]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def plain(status: str, body: bytes, ctype: str = "application/json", extra: list[tuple[str, str]] | None = None) -> bytes:
    return head(status, [("Content-Type", ctype), *(extra or [])], len(body)) + body


# mode -> what the server does with a request after the preflights: (conn, auth header, cookie header)
Behaviour = Callable[[socket.socket, str, str], bool]  # True: keep the connection open


def never_answers(conn: socket.socket, auth: str, cookie: str) -> bool:
    time.sleep(3600)
    return False


def trickle(conn: socket.socket, auth: str, cookie: str) -> bool:
    for byte in b"HTTP/1.1 200 OK\r\nX-Trickle: " + b"a" * 100_000:
        conn.sendall(bytes([byte]))
        time.sleep(0.1)
    return False


def bomb(conn: socket.socket, auth: str, cookie: str) -> bool:
    data = gzip_bomb()
    conn.sendall(head("200 OK", [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], len(data)) + data)
    return True


def endless_chunked(conn: socket.socket, auth: str, cookie: str) -> bool:
    conn.sendall(head("200 OK", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")], None))
    chunk = b"%x\r\n%s\r\n" % (65536, b"[" * 65536)
    while True:
        conn.sendall(chunk)


def huge_headers(conn: socket.socket, auth: str, cookie: str) -> bool:
    conn.sendall(head("200 OK", [("X-Huge", "h" * 200_000), ("Content-Type", "application/json")], 2) + b"{}")
    return False


def redirect(conn: socket.socket, auth: str, cookie: str) -> bool:
    conn.sendall(plain("302 Found", b"", extra=[("Location", "http://127.0.0.1:9/steal-the-key")]))
    return True


def set_cookie(conn: socket.socket, auth: str, cookie: str) -> bool:
    body = json.dumps({"cookie_seen": cookie}).encode()
    conn.sendall(plain("200 OK", body, extra=[("Set-Cookie", f"session={auth.removeprefix('Bearer ')}; Path=/")]))
    return True


def echo_key(conn: socket.socket, auth: str, cookie: str) -> bool:
    body = json.dumps({"error": "unauthorized", "message": f"your key is {auth}", "details": {"key": auth},
                       "memories": [{"id": auth, "content": auth}]}).encode()
    conn.sendall(plain("200 OK", body, extra=[("X-Echo", auth), ("WWW-Authenticate", auth)]))
    return True


def json_battery(raw: bytes) -> Behaviour:
    def answer(conn: socket.socket, auth: str, cookie: str) -> bool:
        conn.sendall(plain("200 OK", raw))
        return True
    return answer


ZOO: dict[str, Behaviour] = {
    "never_answers": never_answers,
    "trickle": trickle,
    "gzip_bomb": bomb,
    "endless_chunked": endless_chunked,
    "huge_headers": huge_headers,
    "redirect": redirect,
    "set_cookie": set_cookie,
    "echo_key": echo_key,
    "invalid_utf8": json_battery(b'{"id": "\xff\xfe", "content": "\xc3\x28", "memories": []}'),
    "lone_surrogates": json_battery(b'{"id": "\\ud800", "content": "\\udfff x", "status": "\\ud83d", "memories": ['
                                    b'{"id": "\\udc00", "content": "\\ud800"}], "total": 1}'),
    "nan": json_battery(b'{"id": NaN, "total": Infinity, "limit": -Infinity, "memories": []}'),
    "nested": json_battery(b'{"memories": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"),
}


class HostileServer:
    """Keep-alive HTTP/1.1 on loopback; the preflights answered (unless `preflights`), the rest hostile."""

    def __init__(self, behaviour: Behaviour, preflights: bool = True, probe: Behaviour | None = None) -> None:
        self.behaviour = behaviour
        self.preflights = preflights
        self.probe = probe
        self.cookies_back: list[str] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        threading.Thread(target=self.accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def accept(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                for request_line, headers in self.requests(conn):
                    cookie = headers.get("cookie", "")
                    if cookie:
                        self.cookies_back.append(cookie)
                    if self.probe and request_line.startswith("GET / "):
                        if not self.probe(conn, "", cookie):
                            return
                        continue
                    if self.preflights and request_line.startswith(("GET / ", "GET /v1/memories?limit=1 ")):
                        conn.sendall(plain("200 OK", PREFLIGHT_OK))
                        continue
                    if not self.behaviour(conn, headers.get("authorization", ""), cookie):
                        return
            except OSError:
                return

    def requests(self, conn: socket.socket) -> Iterator[tuple[str, dict[str, str]]]:
        buffer = b""
        while not self.stop.is_set():
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            raw_head, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = raw_head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length") or 0)
            while len(buffer) < length:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            buffer = buffer[length:]
            yield lines[0], headers

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


def run_omp(url: str, report_dir: Path, *extra: str, suite: str = "omp") -> tuple[int, str, float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli.main", "run", "--suite", suite, "--target", url, "--api-key", CANARY,
         "--report-dir", str(report_dir), "--call-deadline", "1.5", "--run-deadline", "12", *extra],
        capture_output=True, text=True, cwd=report_dir.parent, timeout=BOUND_S + 60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def assert_survived(code: int, output: str, report_dir: Path, none_passed: bool = True) -> None:
    assert "Traceback" not in output and "internal error" not in output, output[-3000:]
    assert CANARY not in output and CANARY[8:] not in output
    for path in report_dir.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert CANARY not in text and CANARY[8:] not in text, path
    if code == 2:
        errors = [line for line in output.splitlines() if line.startswith("memconform: error:")]
        assert len(errors) == 1, output[-2000:]
        return
    assert code == 1, output[-3000:]
    lines = [json.loads(line) for line in (report_dir / "report.jsonl").read_text("utf-8").splitlines()]
    assert lines[-1]["type"] == "footer", lines[-1]
    assert (report_dir / "junit.xml").is_file() and (report_dir / "summary.md").is_file()
    results = [line for line in lines if line["type"] == "result"]
    assert results
    if not none_passed:
        return
    passed = [r["check_id"] for r in results if r["outcome"] == "passed" and r["check_id"] not in JUDGE_NO_ANSWER]
    assert passed == [], passed


@dataclass
class ZooRun:
    code: int
    output: str
    took: float
    report_dir: Path
    cookies_back: list[str]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ZooRun]:
    """Every server of the zoo through `memconform run`, once per session (this module's tests may be spread
    over xdist's workers; the report folders stay where the worker that ran the zoo left them)."""
    made = made_once(shared_folder(tmp_path_factory), "http-hostile-zoo",
                     lambda: {mode: dataclasses.asdict(run) | {"report_dir": str(run.report_dir)}
                              for mode, run in run_the_zoo(tmp_path_factory).items()})
    return {mode: ZooRun(**(run | {"report_dir": Path(run["report_dir"])})) for mode, run in made.items()}


def run_the_zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ZooRun]:
    """Every server of the zoo through `memconform run`, side by side: most of a run is waiting on a
    deadline, so the whole zoo takes about as long as its slowest member."""
    def one(mode: str) -> ZooRun:
        suite, _, behaviour = mode.rpartition(":")
        server = HostileServer(ZOO[behaviour])
        report_dir = tmp_path_factory.mktemp(behaviour) / "report"
        try:
            code, output, took = run_omp(server.url, report_dir, suite=suite or "omp")
        finally:
            server.close()
        return ZooRun(code, output, took, report_dir, server.cookies_back)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(RUNS, pool.map(one, RUNS), strict=True))


# every server against the OMP suite; the key-echoing one against the MemoryAI HTTP profile as well
RUNS = [*sorted(ZOO), "memoryai:echo_key"]


@pytest.mark.parametrize("mode", RUNS)
def test_hostile_server_through_memconform_run(mode: str, zoo: dict[str, ZooRun]) -> None:
    run = zoo[mode]
    assert_survived(run.code, run.output, run.report_dir, none_passed=not mode.startswith("memoryai:"))
    assert run.took < BOUND_S
    assert run.cookies_back == []  # a cookie the target set is never sent back
    if mode in ("never_answers", "trickle"):  # the budget or the breaker ended the run, not 74 checks x the call deadline
        lines = (run.report_dir / "report.jsonl").read_text("utf-8").splitlines()
        reasons = [json.loads(line).get("reason", "") for line in lines]
        assert any("run budget" in reason or "marked hung" in reason for reason in reasons)


def test_no_memoryai_check_passes_on_a_key_echo(zoo: dict[str, ZooRun]) -> None:
    run = zoo["memoryai:echo_key"]
    assert_survived(run.code, run.output, run.report_dir)


def test_omp_preflight_timeout_is_one_error_line(tmp_path: Path) -> None:
    """`GET /` answers, `GET /v1/memories?limit=1` (the OMP preflight) never does: exit 2, one line."""
    server = HostileServer(never_answers, preflights=False, probe=json_battery(PREFLIGHT_OK))
    try:
        code, output, took = run_omp(server.url, tmp_path / "report")
    finally:
        server.close()
    assert code == 2 and took < 60, (code, took, output[-2000:])
    assert_survived(code, output, tmp_path / "report")
    assert "OMP preflight" in output


@pytest.mark.parametrize("mode", ["never_answers", "trickle"])
def test_hostile_start_up_probe_is_one_error_line(mode: str, tmp_path: Path) -> None:
    server = HostileServer(ZOO[mode], preflights=False)
    try:
        code, output, took = run_omp(server.url, tmp_path / "report")
    finally:
        server.close()
    assert code == 2 and took < 60, (code, took, output[-2000:])
    assert_survived(code, output, tmp_path / "report")


def test_endless_body_at_the_start_up_probe_is_not_read(tmp_path: Path) -> None:
    """`GET /` answering an endless chunked body: the probe reads the head only; the run goes on."""
    server = HostileServer(json_battery(PREFLIGHT_OK), probe=endless_chunked)
    try:
        code, output, took = run_omp(server.url, tmp_path / "report", "--check", "omp.health_without_key")
    finally:
        server.close()
    assert code == 1 and took < 60, (code, took, output[-2000:])
    assert_survived(code, output, tmp_path / "report")
