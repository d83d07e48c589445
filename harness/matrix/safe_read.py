"""Reading a handed file (a shard report, shard.json, a saved sequence, a matrix.json) as data: a regular
file only (a FIFO would hang the reader, a device never ends), never through a symlink leading outside the
folder being read, never more than a size cap. Anything else is refused with one error naming the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.results import HarnessError

MAX_REPORT_BYTES = 256 << 20


class UnsafeFile(HarnessError):
    """A handed file that is not a regular file inside its folder, or is larger than the cap."""


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve(strict=True).is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError):  # a dangling or looping link
        return False


def read_bounded(path: Path, root: Path, limit: int, cut: bool = False) -> bytes:
    """The bytes of `path`; `cut`: the first `limit` bytes of a larger file instead of refusing it."""
    if not _inside(path, root):
        raise UnsafeFile(f"{path}: refused: it leads outside {root} (a symlink) or does not exist")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UnsafeFile(f"{path}: cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(fd)  # of what was opened, so a file swapped after the check above is judged too
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path}: refused: not a regular file (a FIFO, device, socket or folder)")
        if info.st_size > limit and not cut:
            raise UnsafeFile(f"{path}: refused: {info.st_size} bytes, larger than the {limit} bytes a matrix reads")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        if not cut:
            raise UnsafeFile(f"{path}: refused: it grew past the {limit} bytes a matrix reads while being read")
        data = data[:limit]
    return data
