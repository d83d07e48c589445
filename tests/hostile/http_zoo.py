"""Hostile HTTP servers on loopback: one misbehaviour per mode, on every request but `GET /` (which
answers at once, so the run starts and the misbehaviour meets the checks, not the start-up probe).

    with serve("head-trickle") as url: ...
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.parse
from collections.abc import Iterator

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"


def key_forms(key: str) -> list[str]:
    """The key as a careless server echoes it: url-encoded (both hex cases, + for a space), JSON-escaped, \\u00XX."""
    quoted = urllib.parse.quote(key, safe="")
    return [quoted, quoted.replace("%2F", "%2f").replace("%2B", "%2b"), urllib.parse.quote_plus(key),
            json.dumps(key)[1:-1].replace("/", "\\/"), "".join(f"\\u{ord(c):04X}" for c in key)]


class Zoo:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                head = self.read_head(conn)
                if head.startswith(b"GET / "):
                    conn.sendall(OK)
                    return
                getattr(self, "mode_" + self.mode.replace("-", "_"))(conn, head)
            except OSError:
                return  # the client gave up: that is what a bounded client does

    @staticmethod
    def read_head(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        return data

    def trickle(self, conn: socket.socket, data: bytes, pause: float) -> None:
        for byte in data:
            if self.stop.wait(pause):
                return
            conn.sendall(bytes([byte]))

    def mode_silent(self, conn: socket.socket, head: bytes) -> None:
        self.stop.wait(120)

    def mode_head_trickle(self, conn: socket.socket, head: bytes) -> None:
        self.trickle(conn, b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"s" * 10000, 0.2)

    def mode_body_trickle(self, conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[")
        self.trickle(conn, b"1," * 50000, 0.2)

    def mode_informational_forever(self, conn: socket.socket, head: bytes) -> None:
        while not self.stop.wait(0.02):
            conn.sendall(b"HTTP/1.1 102 Processing\r\n\r\n")

    def mode_echo_key(self, conn: socket.socket, head: bytes) -> None:
        """500 and 200 answers that carry the bearer key in every encoded form, and cut inside it."""
        key = ""
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"authorization: bearer "):
                key = line[len(b"authorization: bearer "):].decode("latin-1")
        forms = key_forms(key)
        body = json.dumps({"error": " ".join(forms), "hint": key[len(key) // 3:], "echo": key[: len(key) // 2 + 9],
                           "raw": "y" * 190 + key}).encode()  # a cut at 200 bytes lands inside the key
        status = b"500 Internal Server Error" if b"POST" in head[:8] else b"200 OK"
        conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


@contextlib.contextmanager
def serve(mode: str) -> Iterator[str]:
    zoo = Zoo(mode)
    thread = threading.Thread(target=zoo.serve, daemon=True)
    thread.start()
    try:
        yield zoo.url
    finally:
        zoo.stop.set()
        thread.join(5)
        zoo.sock.close()
