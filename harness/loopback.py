"""Serve any ASGI app on loopback: in a thread for tests and `reference:` targets, or in the foreground."""

from __future__ import annotations

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


def serve_forever(app: Any, host: str, port: int) -> None:
    uvicorn.run(app, host=host, port=port, log_level="info")
