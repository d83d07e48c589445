"""Serve any ASGI app on loopback: in a thread for tests and `reference:` targets, or in the foreground."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn


def serve_in_thread(app: Any, host: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Start uvicorn on an ephemeral port; return its base URL and a function that stops it."""
    config = uvicorn.Config(app, host=host, port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the reference server did not start within 10 s")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)

    return f"http://{host}:{port}", stop


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before anything is printed: with port 0 the banner names the port the
    system chose, not 0."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when the listening
    # socket says TCP, and without it every kept-alive request waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve_forever(app: Any, host: str, port: int, sock: socket.socket | None = None) -> None:
    """In the foreground until interrupted; on `sock` when given (see bind)."""
    if sock is None:
        uvicorn.run(app, host=host, port=port, log_level="info")
        return
    uvicorn.Server(uvicorn.Config(app, log_level="info")).run(sockets=[sock])
