"""Reading a file a target wrote, without trusting it: regular files inside a folder, bounded bytes.

A hostile implementation can put a symlink (to /etc/passwd, /dev/zero), a FIFO (whose open or read
blocks forever), a device or a hard link to a file elsewhere where its reply should be. The file is
opened relative to the folder's descriptor (so a folder swapped for a symlink after it was opened
changes nothing), with O_NOFOLLOW and O_NONBLOCK, checked to be a regular file with one link, and
read with the cap counted while reading (never trusting the size it reports).
"""

from __future__ import annotations

import errno
import os
import stat

from ..core.results import TargetError

CHUNK = 1 << 20


def open_regular(dir_fd: int, name: str, what: str) -> int | None:
    """A read descriptor for `name` in the folder, None when absent; TargetError when it is not a plain file."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise TargetError(f"{what} is a symbolic link; only a regular file inside the work folder is read") from None
        raise TargetError(f"{what} cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                    else "a folder" if stat.S_ISDIR(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file")
            raise TargetError(f"{what} is {kind}; only a regular file inside the work folder is read")
        if info.st_nlink != 1:
            raise TargetError(f"{what} has {info.st_nlink} hard links (a link to a file elsewhere); it is not read")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(dir_fd: int, name: str, cap: int, what: str) -> bytes | None:
    """The bytes of a regular file `name` in the folder (None when absent), at most `cap` of them."""
    fd = open_regular(dir_fd, name, what)
    if fd is None:
        return None
    try:
        buf = bytearray()
        while True:
            chunk = os.read(fd, min(CHUNK, cap + 1 - len(buf)))
            if not chunk:
                return bytes(buf)
            buf += chunk
            if len(buf) > cap:
                raise TargetError(f"{what} exceeds the cap of {cap} bytes")
    finally:
        os.close(fd)
