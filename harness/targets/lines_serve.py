"""Serve an in-process implementation over the `cmd-lines:` protocol (lines.py): an adapter for
tests and benchmarks, and a worked example of the protocol for a product's own adapter.

    python -m memconform.targets.lines_serve reference:emp [--sleep-at-start 0.3]
    python -m memconform.targets.lines_serve python:mypkg.store:Store

Each call line is handed to the implementation as `python:`/`reference:` targets hand it (one method
per operation, memconform.targets.Rejected to refuse); what it prints goes to stderr, so stdout
carries the protocol only. `--sleep-at-start` stands for a product whose start is slow.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from typing import Any

from ..core.profile import Limits
from ..core.results import TargetError, Unsupported
from . import open_target
from .base import Request


def serve(spec: str, lines_in: Any, out_fd: int) -> int:
    target = open_target(spec, limits=Limits(call_deadline_s=3600.0))

    def write(answer: dict[str, Any]) -> None:
        data = (json.dumps(answer, ensure_ascii=False) + "\n").encode("utf-8")
        while data:
            data = data[os.write(out_fd, data):]

    for line in lines_in:
        message = json.loads(line)
        command = message.get("cmd")
        if command == "start":
            write({"ready": message.get("version") == 1, "version": 1})
        elif command == "stop":
            break
        elif command == "call":
            raw = base64.b64decode(message["raw"]) if "raw" in message else None
            request = Request(message["op"], message.get("body"), params=message.get("params") or None, raw=raw,
                              filename=message.get("filename"))
            try:
                reply = target.call(request)
            except Unsupported:
                write({"seq": message["seq"], "status": "unsupported"})
                continue
            except TargetError as exc:  # the implementation failed: an error reply, the run goes on
                write({"seq": message["seq"], "status": "error", "message": str(exc)[:2000]})
                continue
            answer: dict[str, Any] = {"seq": message["seq"], "status": "ok" if reply.ok else "rejected"}
            if reply.body is not None:
                answer["body"] = reply.body
            elif reply.raw:  # not JSON (text, JSON Lines): the bytes as they are
                answer["raw"] = base64.b64encode(reply.raw).decode("ascii")
            if reply.content_type:
                answer["content_type"] = reply.content_type
            write(answer)
    target.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memconform.targets.lines_serve")
    parser.add_argument("target", help="reference:NAME or python:module:attr")
    parser.add_argument("--sleep-at-start", type=float, default=0.0, help="seconds to wait before answering start")
    args = parser.parse_args(argv)
    time.sleep(args.sleep_at_start)
    protocol = os.dup(1)
    os.dup2(2, 1)  # whatever the implementation prints goes to stderr
    sys.stdout = sys.stderr
    return serve(args.target, sys.stdin, protocol)


if __name__ == "__main__":
    sys.exit(main())
