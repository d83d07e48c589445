"""A report folder holds one run: the files of the run before it are kept as `previous/`, never mixed in.

`begin` moves the previous run's files (only the names a run writes; anything else a user keeps in
the folder stays where it is) into a hidden staging folder, so the new run writes into a fresh
folder and its paths (saved examples, sequences) stay true after the run. `end` puts the last run
that started under `previous/`: a run that could not start (or ended without a result) never
pushes the last good run out; the one before it is dropped, so the folder never grows deeper
than one `previous/`.

A process killed mid-run leaves the staging folder; the next `begin` finds it, drops the killed
run's partial files and keeps the staging folder as the previous run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

RUN_FILES = ("report.jsonl", "junit.xml", "summary.md", "report.html", "badges", "examples", "sequences",
             "exchanges.har", "curl.sh")
PREVIOUS = "previous"
STAGING = ".previous.partial"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _run_files(folder: Path) -> list[Path]:
    return [folder / n for n in (*RUN_FILES, PREVIOUS) if (folder / n).exists() or (folder / n).is_symlink()]


def begin(folder: Path) -> None:
    """Make `folder` fresh for a run: the previous run's files go to the staging folder."""
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / STAGING
    if staging.is_dir():  # a run was killed: its partial files are not a run; the staging folder is the previous
        for path in _run_files(folder):
            if path.name != PREVIOUS:
                _remove(path)
        return
    files = _run_files(folder)
    if not files:
        return
    staging.mkdir()
    for path in files:
        path.rename(staging / path.name)


def started(folder: Path) -> bool:
    """Whether the run in `folder` produced results (a folder we cannot read counts as one: kept, not lost)."""
    from .core.report import Report, ReportError

    path = folder / "report.jsonl"
    if not path.is_file():
        return False
    try:
        return bool(Report.from_path(path, allow_truncated=True, allow_empty=True).results)
    except (ReportError, OSError, ValueError):
        return True


def end(folder: Path) -> None:
    """The last run that started becomes `previous/`; the staging folder is gone afterwards."""
    staging = folder / STAGING
    if not staging.is_dir():
        return
    _remove(folder / PREVIOUS)  # a killed run may have left one
    if started(staging):
        _remove(staging / PREVIOUS)
        staging.rename(folder / PREVIOUS)
        return
    if (staging / PREVIOUS).is_dir():  # the run before could not start: the last good one stays previous
        (staging / PREVIOUS).rename(folder / PREVIOUS)
    _remove(staging)
