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
left alone.

One run at a time: a run takes a lock on the folder (`.<name>.lock` beside it, flock(2)) before it
writes anything and holds it until its folder is in place; a second run waits up to LOCK_WAIT_S for it,
then refuses, naming the run that holds it. Before the run starts the folder is checked: a file, a folder
that cannot be written, or a folder holding files a run writes (examples/, badges/ ...) with no report of
memconform beside them is refused with one line, so nothing of the user's is ever lost to a swap. A
symlinked report folder is resolved once, when the run opens it; the run is swapped in where it pointed.

Nothing a target does to the run's folder while the run goes on reaches the report: every file the run
writes is recorded with its SHA-256 as it is written (`Ledger`), and before the swap the folder is compared
with that record. A file renamed in, changed or removed makes the run "tampered with": nothing is swapped
in, the folder is kept beside the report folder as `.<name>.tampered` for whoever looks into it.
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
import time
from pathlib import Path
from typing import IO

from ..core.results import HarnessError
from .folder_ledger import Ledger, shown, snapshot

RUN_FILES = ("report.jsonl", "junit.xml", "summary.md", "report.html", "badges", "examples", "sequences",
             "exchanges.har", "curl.sh")
PREVIOUS = "previous"
NOT_STARTED = "not-started"
OWN_NAMES = frozenset((*RUN_FILES, PREVIOUS, NOT_STARTED))  # anything else in the folder is the user's
RUN_MARK = ".run-"
OLD_MARK = ".old-"
KEPT_MARK = ".kept-"  # a folder found in place that no run wrote: set aside, never deleted
TAMPERED = ".tampered"
LOCK = ".lock"
LOCK_WAIT_S = float(os.environ.get("MEMCONFORM_LOCK_WAIT_S", "600"))
LOCK_POLL_S = 0.05


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
    if (old / PREVIOUS).is_dir() and not (old / PREVIOUS).is_symlink():
        (old / PREVIOUS).rename(place / PREVIOUS)
    if is_run_folder(old) or not any(old.iterdir()):
        _remove(old)  # a run that did not start (memconform's own files), or nothing at all
    else:  # what no run wrote (it appeared in place while the run went on): set aside, whole
        old.rename(_sibling(place, KEPT_MARK))


def is_run_folder(folder: Path) -> bool:
    """Whether `folder` holds a report memconform wrote (a report.jsonl that starts with a header)."""
    from ..core.report import ReportError, loads_line

    path = folder / "report.jsonl"
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as fh:
            first = fh.readline(1 << 20)
        line = loads_line(first.decode("utf-8"))
        return isinstance(line, dict) and line.get("type") == "header" and "harness_version" in line
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, ReportError):
        return False


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
        self.ledger: Ledger | None = None
        self.before: dict[str, tuple[int, ...]] = {}
        self._place: Path | None = None
        self._lock: IO[str] | None = None

    @property
    def place(self) -> Path:
        """Where the run goes: a symlinked report folder resolved once, when the run opened it."""
        if self._place is None:
            self._place = self.named.resolve() if self.named.is_symlink() else self.named
        return self._place

    def open(self) -> Path:
        place = self.place
        refuse_unusable(self.named, place)
        self._lock = take_lock(place)
        try:
            recover(place)
            place.mkdir(parents=True, exist_ok=True)  # exists from the start: a cmd: call's mount view hides it
            self.work = _sibling(place, RUN_MARK)
            self.work.mkdir()
        except OSError as exc:
            self.release()
            raise HarnessError(f"the report folder {self.named} cannot be written: {exc.strerror or exc}") from None
        self.ledger = Ledger(self.work)
        self.before = snapshot(place)
        return self.work

    def changes(self) -> list[str]:
        """What differs in the run's folder from what the run wrote, and in the report folder from what
        it held when the run began (its last run and the user's files, swapped along): empty, nothing."""
        if self.ledger is None:
            return []
        found = self.ledger.changes()
        now = snapshot(self.place)
        moved = sorted({*self.before, *now} - {k for k in self.before if self.before.get(k) == now.get(k)})
        found += [f"{shown(str(self.named))}/{shown(key)} "
                  f"{'appeared' if key not in self.before else 'went' if key not in now else 'changed'}" for key in moved[:8]]
        return found

    def set_aside(self) -> Path:
        """A tampered run's folder, beside the report folder (an earlier one replaced); nothing swapped in."""
        work, self.work = self.work, None
        assert work is not None
        kept = self.place.parent / f".{self.place.name}{TAMPERED}"
        try:
            if kept.is_dir() and not kept.is_symlink():
                shutil.rmtree(kept)  # memconform's own: the last tampered run's folder
            elif kept.exists() or kept.is_symlink():
                kept.unlink()
            work.rename(kept)
        finally:
            self.release()
        return kept

    def close(self) -> Path:
        """Put the run in place (or beside the last good run); returns where its files are now."""
        work, self.work = self.work, None
        try:
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
        finally:
            self.release()

    def release(self) -> None:
        if self._lock is not None:
            release_lock(self._lock, self.place)
            self._lock = None


def refuse_unusable(named: Path, place: Path) -> None:
    """Before anything runs: one HarnessError line for a report folder no run can be put in."""
    if named.is_symlink() and not place.exists() and place.is_symlink():
        raise HarnessError(f"the report folder {named} is a symlink that loops or points nowhere")
    if place.exists() and not place.is_dir():
        raise HarnessError(f"the report folder {named} is not a folder: name a folder (it is made if missing)")
    parent = place.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise HarnessError(f"the report folder {named} cannot be made: {parent} is not a folder")
    for where in (place, parent) if place.exists() else (parent,):
        if not os.access(where, os.W_OK | os.X_OK):
            raise HarnessError(f"the report folder {named} cannot be written: {where} is read-only for this user")
    if place.is_dir() and not is_run_folder(place):
        theirs = sorted(e.name for e in place.iterdir() if e.name in RUN_FILES)
        if theirs:
            raise HarnessError(f"the report folder {named} holds {', '.join(theirs)} that no memconform run wrote "
                               "(no report.jsonl of one beside them): a run replaces those; name another folder")


def _lock_path(place: Path) -> Path:
    return place.parent / f".{place.name}{LOCK}"


def take_lock(place: Path) -> IO[str] | None:
    """An exclusive lock on the report folder, held until the run is in place; a second run waits up to
    LOCK_WAIT_S, then refuses naming the run that holds it. The lock file is removed by the run holding
    it, so a lock taken on a file no longer at its path is taken again. None where flock(2) does not exist."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock; two runs at once end in place one after the other
        return None
    place.parent.mkdir(parents=True, exist_ok=True)
    path = _lock_path(place)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the run: the lock lives with it
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read(400).strip() or "another run"
            fh.close()
            if time.monotonic() >= deadline:
                raise HarnessError(f"the report folder {place} is in use by {holder}; waited {LOCK_WAIT_S:g} s "
                                   "(MEMCONFORM_LOCK_WAIT_S): name another --report-dir, or wait for it") from None
            time.sleep(LOCK_POLL_S)
            continue
        if _same_file(fh, path):
            break
        fh.close()  # the run that held it removed it meanwhile: take the one at the path now
    fh.seek(0)
    fh.truncate()
    fh.write(f"memconform process {os.getpid()} on host {socket.gethostname()[:64]}, since "
             f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    fh.flush()
    return fh


def _same_file(fh: IO[str], path: Path) -> bool:
    try:
        held, there = os.fstat(fh.fileno()), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def release_lock(fh: IO[str], place: Path) -> None:
    """Remove the lock file (while still holding it: whoever waits on it takes the next one), then drop it."""
    path = _lock_path(place)
    try:
        if _same_file(fh, path):
            path.unlink()
    except OSError:
        pass
    fh.close()
