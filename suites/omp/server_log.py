"""The server's own log, when the user names it (option omp.server_log): the one way §7's "Memory content
MUST NOT be logged in plain text" shows. Read as any target output is: a regular file only (never a FIFO,
device or symlink), bytes bounded, only what was appended while the check ran."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memconform.core.results import HarnessError
from memconform.targets.safefile import open_regular

SCAN_CAP = 16 << 20  # bytes of log growth scanned; a check's few writes log far less


@dataclass(frozen=True)
class LogGrowth:
    """What the log gained between two looks: the bytes (at most SCAN_CAP of them) and how many there were."""

    data: bytes
    grew: int
    truncated: bool  # the log was cut or replaced meanwhile: read from its start


class ServerLog:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.what = f"the server log {path!r} (omp.server_log)"

    def _open(self) -> int:
        try:
            folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise HarnessError(f"{self.what}: its folder cannot be opened: {exc.strerror}") from None
        try:
            fd = open_regular(folder, self.path.name, self.what)
        finally:
            os.close(folder)
        if fd is None:
            raise HarnessError(f"{self.what} does not exist")
        return fd

    def size(self) -> int:
        fd = self._open()
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def since(self, offset: int) -> LogGrowth:
        """The bytes appended after `offset` (from the start if the log is now shorter: rotated or cut)."""
        fd = self._open()
        try:
            size = os.fstat(fd).st_size
            truncated = size < offset
            start = 0 if truncated else offset
            os.lseek(fd, start, os.SEEK_SET)
            buf = bytearray()
            while len(buf) < SCAN_CAP:
                chunk = os.read(fd, min(1 << 20, SCAN_CAP - len(buf)))
                if not chunk:
                    break
                buf += chunk
            return LogGrowth(bytes(buf), max(size - start, len(buf)), truncated)
        finally:
            os.close(fd)
