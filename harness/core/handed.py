"""Reading a file someone handed to memconform (a report, a sequence, a saved example, a document, a
shard's report): data, never trusted to be what its name says.

One reader for all of them. Regular files only: a FIFO would block the read forever and a device
(/dev/zero) never ends, so both are refused by stat before the open and by fstat of what was opened
(the open is non-blocking, so a FIFO swapped in between cannot hang it). With `within`, a path whose
real location is outside that folder (a symlink leading out of a report folder) is refused. At most
`max_bytes`, measured on the opened file and again while reading (a file that grows), so a sparse file
of 2 GiB costs one fstat, not 2 GiB. Every refusal is a HandedFileError: one `memconform: error:` line
and exit 2 at the command line. The bounds are in docs/bounds.md ("What a handed file cannot do").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .results import HarnessError

# the most any handed file may weigh (a document to validate or translate, a report)
MAX_HANDED_BYTES = 256 * 1024 * 1024
CHUNK = 1 << 20


class HandedFileError(HarnessError):
    """A handed file refused before (or while) it was read: not a regular file, outside its folder, too big."""


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "not a file")


def refuse_unless_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise HandedFileError(f"cannot read {path}: it is {_kind(mode)}, not a regular file")


def _inside(path: Path, within: Path) -> None:
    try:
        real, folder = Path(os.path.realpath(path)), Path(os.path.realpath(within))
    except (OSError, ValueError) as exc:
        raise HandedFileError(f"cannot read {path}: {exc}") from None
    if real != folder and folder not in real.parents:
        raise HandedFileError(f"cannot read {path}: it leads outside {within} (to {real}); only the folder's own "
                              "files are read")


def open_handed(path: Path, within: Path | None = None) -> int:
    """A descriptor of `path`, opened only if it is a regular file (and, with `within`, inside that folder)."""
    if within is not None:
        _inside(path, within)
    try:
        refuse_unless_regular(path, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise HandedFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        refuse_unless_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_big(path: Path, size: int, max_bytes: int, how: str) -> HandedFileError:
    return HandedFileError(f"{path} is {size} bytes, over the limit of {max_bytes} for {how}")


def read_handed(path: Path, max_bytes: int = MAX_HANDED_BYTES, within: Path | None = None, what: str = "a handed file") -> bytes:
    """The whole file: regular, within `max_bytes` (by fstat before reading and while reading)."""
    fd = open_handed(path, within)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise _too_big(path, size, max_bytes, what)
        try:
            data = fh.read(size + 1) if size else b""
            if len(data) > size or not size:  # it grew, or reports no size (procfs): read on, bounded
                buffer = bytearray(data)
                while len(buffer) <= max_bytes:
                    more = fh.read(CHUNK)
                    if not more:
                        break
                    buffer += more
                data = bytes(buffer)
        except OSError as exc:
            raise HandedFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise HandedFileError(f"{path} grew past the limit of {max_bytes} bytes for {what} while it was read")
    return data


def handed_lines(path: Path, max_bytes: int = MAX_HANDED_BYTES, within: Path | None = None,
                 what: str = "a handed file") -> Iterator[bytes]:
    """The file's lines (split on b"\\n" only, each without it), read as they come: the whole file is never
    held at once. Refused as read_handed refuses; a file that grows past `max_bytes` meanwhile is refused
    when the reading reaches the limit."""
    fd = open_handed(path, within)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise _too_big(path, size, max_bytes, what)
        seen = 0
        try:
            for line in fh:
                seen += len(line)
                if seen > max_bytes:
                    raise HandedFileError(f"{path} grew past the limit of {max_bytes} bytes for {what} while it was read")
                yield line[:-1] if line.endswith(b"\n") else line
        except OSError as exc:
            raise HandedFileError(f"cannot read {path}: {exc.strerror or exc}") from None
