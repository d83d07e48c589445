"""The suites' entry points, read from the `entry_points.txt` of each distribution folder on sys.path
(core/suite.py asks; importing importlib.metadata to read them costs about a seventh of `validate`'s start-up).
What was read is kept while sys.path and the modification times of its folders stay as they were."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ENTRY_POINT_GROUP = "memconform.suites"


# what _declared_on_sys_path last read, keyed by sys.path and each folder's modification time
_DECLARED: dict[tuple[tuple[str, int], ...], list[tuple[str, str]] | None] = {}


def _declared_on_sys_path() -> list[tuple[str, str]] | None:
    """(name, value) of every entry point of the group, in sys.path order, one distribution once (the
    first found of its name, as importlib.metadata keeps); None when some entry is not a folder. Read once
    while sys.path and its folders stay as they were (a distribution installed or removed changes its
    folder's modification time): `validate` asks three times, ~2 ms a reading with a venv's 60 distributions."""
    key = tuple((entry, _modified(entry or ".")) for entry in sys.path)
    if key not in _DECLARED:
        _DECLARED.clear()
        _DECLARED[key] = _read_declared()
    found = _DECLARED[key]
    return None if found is None else list(found)


def _modified(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1


def _read_declared() -> list[tuple[str, str]] | None:
    declared: list[tuple[str, str]] = []
    seen: set[str] = set()
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return None
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for dist in sorted(names, key=lambda n: n.endswith(".egg-info")):  # dist-info first, as importlib does
            if not dist.endswith((".dist-info", ".egg-info")):
                continue
            project = re.sub(r"[-_.]+", "_", dist.rpartition(".")[0].partition("-")[0]).lower()
            if project in seen:
                continue
            seen.add(project)
            try:
                text = Path(folder, dist, "entry_points.txt").read_text("utf-8")
            except OSError:
                continue
            declared += _group_in(text)
    return declared


def _group_in(text: str) -> list[tuple[str, str]]:
    """The (name, value) lines of the group's section of an entry_points.txt (an INI file)."""
    section, out = "", []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == ENTRY_POINT_GROUP and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out
