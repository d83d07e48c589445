"""A report folder holds one run, whole: a run is written beside it and swapped into its place when it ends.

A run writes into a fresh sibling folder (`.<name>.run-<pid>-<random>-<host>`, in the same parent, so
on the same filesystem) and, when it ends, takes the report folder's place by renames:

1. the files a user keeps in the folder (any name a run does not write) move into the new run's folder;
2. the two folders trade places: one rename(2) with RENAME_EXCHANGE on Linux, two renames elsewhere;
3. the run that was in place becomes `previous/` inside the new one (its own `previous/` dropped: one level).

Before step 2 nothing of the folder in place is touched except step 1's moves, so a process killed
mid-run leaves the last good run whole. The report names its files (saved examples, sequences, the
replay lines) by the report folder's name, where they are once the run is in place.

A run that could not start, or ended without a single result, writes nothing over the last good run:
its folder goes inside it as `not-started/` (replacing an earlier one), the last good run, its badges
and its `previous/` untouched. Where no run with results is in place (a fresh checkout in CI), it is
swapped in like any run, so the folder's junit.xml says what happened.

The next run clears what a killed process left beside the folder: a sibling of a process of this host
that no longer runs is removed after the files of the user it held are moved back (and, if the kill fell
between the two renames of step 2, the last good run it held is put back in place first). Siblings of
running processes, and of other hosts (a container sharing the folder has its own process ids), are
left alone: two runs into one folder at once both end in place, the last to end in front.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import hashlib
import os
import secrets
import shutil
import socket
import sys
from pathlib import Path

RUN_FILES = ("report.jsonl", "junit.xml", "summary.md", "report.html", "badges", "examples", "sequences",
             "exchanges.har", "curl.sh")
PREVIOUS = "previous"
NOT_STARTED = "not-started"
OWN_NAMES = frozenset((*RUN_FILES, PREVIOUS, NOT_STARTED))  # anything else in the folder is the user's
RUN_MARK = ".run-"
OLD_MARK = ".old-"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _host() -> str:
    """This host, short: process ids are only comparable between processes of one host (one PID namespace)."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _sibling(place: Path, mark: str) -> Path:
    return place.parent / f".{place.name}{mark}{os.getpid()}-{secrets.token_hex(4)}-{_host()}"


def workers_folder(folder: Path) -> Path:
    """Where pytest-xdist workers write their parts of one run (beside the folder, never in it)."""
    return folder.parent / f".{folder.name}.workers"


def started(folder: Path) -> bool:
    """Whether the run in `folder` produced results (a report we cannot read counts as one: kept, not lost)."""
    from ..core.report import Report, ReportError

    path = folder / "report.jsonl"
    if not path.is_file():
        return False
    try:
        return bool(Report.from_path(path, allow_truncated=True, allow_empty=True).results)
    except (ReportError, OSError, ValueError):
        return True


# --- the swap ---------------------------------------------------------------------------------------

_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange_in_one_step(a: Path, b: Path) -> bool:
    """renameat2(RENAME_EXCHANGE): both names always exist; False where the system or filesystem lacks it."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd = -100
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def _trade_places(work: Path, place: Path) -> Path:
    """The new run at `place`; returns where the folder that was there is now."""
    if _exchange_in_one_step(work, place):
        return work
    old = _sibling(place, OLD_MARK)
    place.rename(old)
    work.rename(place)
    return old


def _user_entries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name not in OWN_NAMES]


def _move_user_files(source: Path, dest: Path) -> None:
    for entry in _user_entries(source):
        if not (dest / entry.name).exists() and not (dest / entry.name).is_symlink():
            entry.rename(dest / entry.name)


def _keep_as_previous(old: Path, place: Path) -> None:
    """The folder that was in place: `previous/` if it held a run with results, else only its own previous/."""
    if started(old):
        old.rename(place / PREVIOUS)
        for name in (PREVIOUS, NOT_STARTED):
            _remove(place / PREVIOUS / name)
        return
    if (old / PREVIOUS).is_dir():
        (old / PREVIOUS).rename(place / PREVIOUS)
    _remove(old)


def swap_in(work: Path, place: Path) -> None:
    """The run in `work` takes `place`; the user's files and the last run (as previous/) come with it."""
    if not place.exists() and not place.is_symlink():
        work.rename(place)
        return
    _move_user_files(place, work)
    old = _trade_places(work, place)
    _keep_as_previous(old, place)


# --- what a killed process left ---------------------------------------------------------------------

def _pid_of(sibling: Path, mark: str) -> int | None:
    """The process that made a sibling, if it was one of this host's."""
    parts = sibling.name.rpartition(mark)[2].split("-")
    if len(parts) != 3 or parts[2] != _host() or not parts[0].isdigit():
        return None
    return int(parts[0])


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":  # no harmless way to ask: never clear what might be another run's
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _left_behind(place: Path, mark: str) -> list[Path]:
    pattern = f".{glob.escape(place.name)}{mark}*"
    found = [p for p in place.parent.glob(pattern) if p.is_dir() and not p.is_symlink()]
    return [p for p in found if (pid := _pid_of(p, mark)) is not None and not _running(pid)]


def recover(place: Path) -> None:
    """Clear what killed runs left beside `place`, the last good run and the user's files kept."""
    if not place.parent.is_dir():
        return
    olds = _left_behind(place, OLD_MARK)
    if olds and not place.exists():  # killed between the two renames: the run that was in place goes back
        olds[0].rename(place)
        olds = olds[1:]
    for stale in (*olds, *_left_behind(place, RUN_MARK)):
        if place.is_dir():
            _move_user_files(stale, place)
        _remove(stale)


class RunFolder:
    """One run's folder: `open` gives the fresh folder to write into, `close` puts it where it belongs."""

    def __init__(self, folder: Path) -> None:
        self.named = folder  # what the report and the terminal call it
        self.work: Path | None = None

    @property
    def place(self) -> Path:
        # a symlinked report folder stays a symlink: the run is swapped in where it points
        return self.named.resolve() if self.named.is_symlink() else self.named

    def open(self) -> Path:
        place = self.place
        recover(place)
        place.parent.mkdir(parents=True, exist_ok=True)
        self.work = _sibling(place, RUN_MARK)
        self.work.mkdir()
        return self.work

    def close(self) -> Path:
        """Put the run in place (or beside the last good run); returns where its files are now."""
        work, self.work = self.work, None
        if work is None or not work.is_dir():
            return self.named
        place = self.place
        if started(work) or not started(place):
            swap_in(work, place)
            return self.named
        beside = place / NOT_STARTED
        _remove(beside)
        work.rename(beside)
        return self.named / NOT_STARTED
