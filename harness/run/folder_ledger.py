"""What a run wrote into its folder, and what the report folder held when the run began: compared
before the swap, so a file renamed in, changed or removed by anyone but the run is found
(run/report_folder.py; docs/bounds.md, "The evidence").

`Ledger` records each file the run writes with its size and SHA-256, as written (never read back, but
for a file another module wrote a moment ago); `snapshot` records the report folder's entries by
type, size, inode, change and modification time. Names from a folder are shown with their control
characters visible: a target may have chosen them.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path


class Ledger:
    """Every file the run wrote into its folder, by path under it, with its size and SHA-256 as written.
    `changes` compares the folder with it: what appeared, what changed, what went."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, tuple[int, str]] = {}

    def _key(self, path: Path) -> str:
        return Path(os.path.relpath(path, self.root)).as_posix()

    def record(self, path: Path, data: bytes) -> None:
        self.files[self._key(path)] = (len(data), hashlib.sha256(data).hexdigest())

    def record_digest(self, path: Path, size: int, digest: str) -> None:
        self.files[self._key(path)] = (size, digest)

    def record_as_is(self, path: Path) -> None:
        """A file memconform has just written and has no bytes of (read back at once)."""
        found = _digest_of(path, None)
        if found is not None:
            self.files[self._key(path)] = found

    def forget(self, path: Path) -> None:
        self.files.pop(self._key(path), None)

    def changes(self, limit: int = 8) -> list[str]:
        folders = {p for key in self.files for p in Path(key).parents if str(p) != "."}
        problems: list[str] = []
        seen: set[str] = set()
        for key, mode in _walk(self.root):
            seen.add(key)
            if stat.S_ISDIR(mode):
                if Path(key) not in folders:
                    problems.append(f"{shown(key)}/ appeared (no file of the run is in it)")
            elif not stat.S_ISREG(mode):
                problems.append(f"{shown(key)} appeared ({'a symlink' if stat.S_ISLNK(mode) else 'not a regular file'})")
            elif key not in self.files:
                problems.append(f"{shown(key)} appeared (the run did not write it)")
            elif _digest_of(self.root / key, self.files[key][0]) != self.files[key]:
                problems.append(f"{shown(key)} was changed after the run wrote it")
        problems += [f"{shown(key)} was removed or replaced" for key in self.files if key not in seen]
        if len(problems) > limit:
            problems = [*problems[:limit], f"and {len(problems) - limit} more"]
        return problems


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown(name: str) -> str:
    """A file name from the folder (a target may have chosen it) with its control characters visible."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        name)


HYPOTHESIS_CACHE = ".hypothesis"  # Hypothesis's own cache, which memconform keeps in the report folder


def snapshot(folder: Path) -> dict[str, tuple[int, ...]]:
    """Everything in `folder` (Hypothesis's cache aside) by path: its type, size, inode, change and
    modification times. On POSIX the change time (ctime) moves on every write, rename and chmod, and no
    user call can set it back; elsewhere (ctime is the creation time) the modification time stands in."""
    found: dict[str, tuple[int, ...]] = {}
    if not folder.is_dir():
        return found
    for key, _mode in _walk(folder, skip=HYPOTHESIS_CACHE):
        try:
            st = os.lstat(folder / key)
        except OSError:
            continue
        found[key] = (st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns) \
            if not stat.S_ISDIR(st.st_mode) else (st.st_mode, st.st_ino)
    return found


def _walk(root: Path, skip: str | None = None) -> Iterator[tuple[str, int]]:
    """(path under root, lstat mode) of everything in the folder, symlinks not followed."""
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for entry in entries:
            key = f"{rel}/{entry.name}" if rel else entry.name
            if key == skip:
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            yield key, mode
            if stat.S_ISDIR(mode):
                stack.append(key)


def _digest_of(path: Path, expected_size: int | None) -> tuple[int, str] | None:
    """(size, SHA-256) of a regular file, read no further than one byte past `expected_size`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        size = 0
        cap = None if expected_size is None else expected_size + 1
        while cap is None or size < cap:
            chunk = fh.read(1 << 20 if cap is None else min(1 << 20, cap - size))
            if not chunk:
                break
            h.update(chunk)
            size += len(chunk)
        return size, h.hexdigest()
