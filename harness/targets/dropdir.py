"""File-drop targets: requests go to PATH/inbox, replies come back in PATH/outbox.

The harness writes `inbox/<request-id>.<op>.json` atomically (write to a dot-file, then rename) and
waits, with bounded backoff, for `outbox/<request-id>.json`: {"status": "ok"|"rejected"|"unsupported",
"body": <reply JSON>}. Request parameters travel in the request file as {"params": ..., "body": ...}.
It writes nothing outside PATH/inbox and removes only the reply files it has read.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from ..core.model import HarnessError, TargetError, Unsupported
from ..core.profile import Limits
from .base import Reply, Target


class DropDirTarget(Target):
    kind = "dir"

    def __init__(self, path: str, limits: Limits) -> None:
        self.root = Path(path)
        self.inbox = self.root / "inbox"
        self.outbox = self.root / "outbox"
        if not self.inbox.is_dir() or not self.outbox.is_dir():
            raise HarnessError(f"dir target {path!r} must contain inbox/ and outbox/ folders")
        self.limits = limits
        self.description = f"dir:{path}"

    def call(
        self,
        op: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        raw: bytes | None = None,
        filename: str | None = None,
    ) -> Reply:
        request_id = uuid.uuid4().hex
        if raw is not None:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        payload = json.dumps({"op": op, "params": params or {}, "body": body}, ensure_ascii=False).encode("utf-8")
        tmp = self.inbox / f".{request_id}.tmp"
        tmp.write_bytes(payload)
        os.replace(tmp, self.inbox / f"{request_id}.{op}.json")
        reply_path = self.outbox / f"{request_id}.json"
        started = time.monotonic()
        delay = 0.005
        while not reply_path.exists():
            if time.monotonic() - started > self.limits.dir_wait_s:
                raise TargetError(f"{op}: no reply in {self.outbox} within {self.limits.dir_wait_s}s")
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        if reply_path.stat().st_size > self.limits.max_response_bytes:
            raise TargetError(f"{op}: reply exceeds the cap of {self.limits.max_response_bytes} bytes")
        text = reply_path.read_bytes()
        reply_path.unlink()
        try:
            envelope = json.loads(text)
            status = envelope["status"]
        except (ValueError, KeyError, TypeError):
            raise TargetError(f"{op}: reply file is not a {{status, body}} JSON object: {text[:120]!r}") from None
        if status == "unsupported":
            raise Unsupported(op)
        if status not in ("ok", "rejected"):
            raise TargetError(f"{op}: unknown reply status {status!r}")
        body_out = envelope.get("body")
        return Reply(status=status, body=body_out, raw=json.dumps(body_out).encode(), elapsed_s=time.monotonic() - started)
