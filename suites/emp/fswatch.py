"""The order of file events in one folder, from the kernel (Linux inotify, through ctypes).

The kernel queues an event inside the system call that causes it, so the order read back is the
order in which the lock was created, the file written and the lock removed, whichever process did
it and however fast. Elsewhere `FolderEvents.open` raises `Unavailable`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import sys

IN_MODIFY, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_Q_OVERFLOW = 0x2, 0x40, 0x80, 0x100, 0x200, 0x4000
IN_CLOSE_NOWRITE = 0x10  # a file opened only to read was closed: the moment an app has read memory.jsonl
WATCHED = IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_HEADER = struct.Struct("iIII")

# what an event means for a name: written, appeared, or gone
KINDS = {IN_MODIFY: "written", IN_MOVED_TO: "appeared", IN_CREATE: "appeared", IN_MOVED_FROM: "gone", IN_DELETE: "gone"}


class Unavailable(Exception):
    pass


class FolderEvents:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls, folder: str, also: int = 0) -> FolderEvents:
        """Watch `folder` for WATCHED events and `also` (IN_CLOSE_NOWRITE: read_masks() shows it, read() does not)."""
        if not sys.platform.startswith("linux"):
            raise Unavailable(f"file events are read with inotify, which {sys.platform} does not have")
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise Unavailable(f"inotify_init1 failed: {os.strerror(ctypes.get_errno())}")
        if libc.inotify_add_watch(fd, os.fsencode(folder), WATCHED | also) < 0:
            os.close(fd)
            raise Unavailable(f"inotify_add_watch failed: {os.strerror(ctypes.get_errno())}")
        return cls(fd)

    def read(self) -> list[tuple[str, str]]:
        """(name, kind) of every event queued so far, in order; kind is written, appeared or gone."""
        return [(name, kind) for name, mask in self.read_masks() for bit, kind in KINDS.items() if mask & bit]

    def read_masks(self) -> list[tuple[str, int]]:
        """(name, inotify mask) of every event queued so far, in order (IN_CREATE and IN_MOVED_TO told apart)."""
        events: list[tuple[str, int]] = []
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return events
            offset = 0
            while offset < len(buf):
                _, mask, _, length = _HEADER.unpack_from(buf, offset)
                name = buf[offset + _HEADER.size: offset + _HEADER.size + length].rstrip(b"\0")
                offset += _HEADER.size + length
                if mask & IN_Q_OVERFLOW:
                    raise Unavailable("the kernel dropped file events (queue overflow)")
                events.append((os.fsdecode(name), mask))

    def wait(self, seconds: float) -> bool:
        """Block until an event is queued or `seconds` pass; True if one is queued."""
        ready, _, _ = select.select([self.fd], [], [], seconds)
        return bool(ready)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> FolderEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
