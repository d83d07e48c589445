"""File-drop targets: requests go to PATH/inbox, replies come back in PATH/outbox.

The harness writes `inbox/<request-id>.<op>.json` atomically (write to a dot-file, then rename):
{"op": <op>, "params": {...}, "body": <request JSON>}. When a check sends raw bytes (a document
as a file, or a deliberately broken one), those bytes are spliced verbatim as the value of "body",
so the implementation's own JSON reader meets them. It waits, with bounded backoff, up to
`dir_wait_s` (never past the run deadline) for `outbox/<request-id>.json`: {"status": "ok"|"rejected"|"unsupported",
"body": <reply JSON>}, which the implementation should also write atomically (write, then rename).

`dir:@FILE.json` names the folder and the wait: {"path": "PATH" (relative to FILE), "wait_s": 30}.

The harness writes nothing outside PATH/inbox and removes only the reply files it has read. Both
folders are opened once, as descriptors, so a folder later swapped for a symlink leads nowhere
else; a reply is read only when it is a regular file (never a symlink, FIFO or device), with the
byte cap counted while reading.
"""

from __future__ import annotations

import json
import os
import stat
import time
import uuid

from ..core.profile import Limits
from ..core.results import HarnessError, TargetError, Unsupported
from .base import Reply, Request, Target, parse_json
from .safefile import read_regular

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class DropDirTarget(Target):
    kind = "dir"

    def __init__(self, path: str, limits: Limits) -> None:
        if path.startswith("@"):  # dir:@FILE.json  {"path": "PATH", "wait_s": 30}
            path, limits = self._config(path[1:], limits)
        self.root = path
        self.description = f"dir:{path}"
        self.limits = limits
        try:
            root_fd = os.open(path, DIR_FLAGS)
        except OSError as exc:
            raise HarnessError(f"dir target {path!r} must be a folder with inbox/ and outbox/ folders: {exc.strerror}") from None
        try:
            self.inbox_fd = self._sub(root_fd, "inbox", path)
            try:
                self.outbox_fd = self._sub(root_fd, "outbox", path)
            except HarnessError:
                os.close(self.inbox_fd)
                raise
        finally:
            os.close(root_fd)
        self.closed = False

    @staticmethod
    def _config(file: str, limits: Limits) -> tuple[str, Limits]:
        import dataclasses

        try:
            config = json.loads(open(file, encoding="utf-8").read())
            path = str(config["path"])
            if "wait_s" in config:
                limits = dataclasses.replace(limits, dir_wait_s=float(config["wait_s"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HarnessError(f"cannot read the dir target file {file}: {type(exc).__name__}: {exc}") from None
        if not os.path.isabs(path):  # relative to the file that names it
            path = os.path.join(os.path.dirname(os.path.abspath(file)), path)
        return path, limits

    @staticmethod
    def _sub(root_fd: int, name: str, path: str) -> int:
        try:
            return os.open(name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=root_fd)
        except OSError:
            raise HarnessError(f"dir target {path!r} must contain inbox/ and outbox/ folders (not symlinks)") from None

    def send(self, request: Request) -> Reply:
        op = request.op
        body = request.body
        params = dict(request.params) if request.params else None
        raw = request.raw
        wait_s = self.clock.left(op, self.limits.dir_wait_s)
        request_id = uuid.uuid4().hex
        head = json.dumps({"op": op, "params": params or {}}, ensure_ascii=False).encode("utf-8")[:-1]
        value = raw if raw is not None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        self._drop(f".{request_id}.tmp", f"{request_id}.{op}.json", head + b', "body": ' + value + b"}")
        reply_name = f"{request_id}.json"
        started = time.monotonic()
        delay = 0.005
        while not self._present(reply_name):
            if time.monotonic() - started > wait_s:
                self._unlink(self.inbox_fd, f"{request_id}.{op}.json")  # never picked up: take it back
                self.clock.timed_out(f"{op} (drop folder)")
                bound = self.clock.cut_short(started + wait_s, self.limits.dir_wait_s)
                raise TargetError(f"{op}: no reply in {self.root}/outbox within {wait_s:.3g}s (bounded by {bound})")
            time.sleep(min(delay, max(0.0, started + wait_s - time.monotonic()) + 0.001))
            delay = min(delay * 2, 0.25)
        self.clock.answered()
        try:
            text = read_regular(self.outbox_fd, reply_name, self.limits.max_response_bytes, what=f"{op}: reply file {reply_name}")
        finally:
            self._unlink(self.outbox_fd, reply_name)
        text = text or b""
        envelope, problem = parse_json(text)  # strict and bounded: no NaN, no nesting deep enough to recurse
        status = envelope.get("status") if isinstance(envelope, dict) else None
        if problem or status is None:
            raise TargetError(f"{op}: reply file is not a {{status, body}} JSON object"
                              f"{f' ({problem})' if problem else ''}: {text[:120]!r}")
        if status == "unsupported":
            raise Unsupported(op)
        if status not in ("ok", "rejected"):
            raise TargetError(f"{op}: unknown reply status {str(status)[:80]!r}")
        body_out = envelope.get("body")
        try:
            raw_out = json.dumps(body_out, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: escaped, so the bytes stay valid UTF-8
            raw_out = json.dumps(body_out).encode("ascii")
        except (ValueError, RecursionError):
            raw_out = text
        return Reply(status=status, body=body_out, raw=raw_out, elapsed_s=time.monotonic() - started)

    def _drop(self, tmp: str, final: str, payload: bytes) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=self.inbox_fd)
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.rename(tmp, final, src_dir_fd=self.inbox_fd, dst_dir_fd=self.inbox_fd)
        except OSError as exc:
            raise TargetError(f"cannot drop the request into {self.root}/inbox: {exc.strerror}") from None

    def _present(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self.outbox_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise TargetError(f"cannot look at {self.root}/outbox/{name}: {exc.strerror}") from None
        return True

    @staticmethod
    def _unlink(dir_fd: int, name: str) -> None:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(name, dir_fd=dir_fd)  # a symlink itself, never what it points at
        except OSError:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.inbox_fd)
            os.close(self.outbox_fd)
