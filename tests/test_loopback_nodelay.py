"""`memconform serve` answers kept-alive requests without the ~40 ms delayed-ACK stall: its listening
socket (loopback.bind) says TCP, so asyncio sets TCP_NODELAY on every connection it accepts."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any

import uvicorn
from memconform.kit.loopback import bind, url_of


def test_connections_accepted_on_the_bound_socket_have_nodelay() -> None:
    sock = bind("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    server: uvicorn.Server

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        flags = [p.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                 for p in server.server_state.connections]
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(flags).encode()})

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        started = threading.Event()
        for _ in range(500):  # bounded: the server starts in well under a second
            if server.started:
                started.set()
                break
            started.wait(0.01)
        assert started.is_set()
        host, port = url_of(sock).removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/")
        flags = json.loads(conn.getresponse().read())
        conn.close()
        assert flags and all(flags), flags
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
