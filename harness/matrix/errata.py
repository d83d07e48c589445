"""Links from an open point (an errata id such as O2 or E1) to its entry in the suite's errata.md.

The matrix copies each suite's errata file next to what it writes (`errata/<suite>/errata.md`) and links
there, so the links hold wherever `--out` is and whatever is installed where the page is opened."""

from __future__ import annotations

import re
import shutil
from functools import lru_cache
from pathlib import Path

from ..kit.fixtures_loader import fixture_root

_HEADING = re.compile(r"^##\s+([A-Z][A-Z0-9]*\d+)\b(.*)$")


def _errata_file(suite: str) -> Path:
    from memconform.core.suite import get_suite

    requirements = get_suite(suite).requirements  # the suite's package folder holds its errata beside its map
    folder = requirements.parent if requirements is not None else fixture_root().parent / "suites" / suite
    return folder / "errata.md"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@lru_cache(maxsize=16)
def anchors(suite: str) -> dict[str, tuple[str, str]]:
    """point id -> (anchor, heading title) for every entry of the suite's errata file (empty when absent)."""
    try:
        lines = _errata_file(suite).read_text("utf-8").splitlines()
    except OSError:
        return {}
    found: dict[str, tuple[str, str]] = {}
    for line in lines:
        m = _HEADING.match(line)
        if m and m.group(1) not in found:
            heading = line[3:]
            found[m.group(1)] = (_slug(heading), heading.strip())
    return found


def entry(suite: str, point: str) -> dict[str, str]:
    """{"href": "errata/<suite>/errata.md#anchor", "title": ...}; the file alone when the point has no heading."""
    anchor = anchors(suite).get(point)
    return {"href": copied_name(suite) + (f"#{anchor[0]}" if anchor else ""), "title": anchor[1] if anchor else point}


def copied_name(suite: str) -> str:
    return f"errata/{suite}/errata.md"


def copy_errata(suites: list[str], out: Path) -> list[Path]:
    """Each suite's errata file copied under `out` (where entry() links); the copies made."""
    made = []
    for suite in suites:
        source = _errata_file(suite)
        if not source.is_file():
            continue
        target = out / copied_name(suite)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        made.append(target)
    return made
