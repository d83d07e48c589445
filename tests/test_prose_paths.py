"""Prose that names a file names one that exists: every path-like name (`x.py`, or a name with a folder in
it) in the docstrings, comments and docs of harness/, suites/, docs/, README.md and ARCHITECTURE.md is a
file or folder of the repository (named whole, or by its trailing part). A move that leaves a docstring
pointing at a file that is gone fails here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"(?<![\w./<>{}*$-])((?:[\w-]+/)*[\w-]+\.(?:py|md|json|toml|yaml|yml|sh|ini))\b")
# names of files a user makes, written as examples (not files of this repository)
EXAMPLES = {"impl.py", "old/matrix.json", "new/matrix.json", "reports/certification/bundle.json"}


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if (ROOT / f).exists()]


def known(files: list[str]) -> set[str]:
    """Every file and folder, whole and by each trailing part (`run/session.py`, `session.py`)."""
    found: set[str] = set()
    for f in files:
        parts = Path(f).parts
        for i in range(len(parts)):
            found.add("/".join(parts[i:]))
            found.add("/".join(parts[i:-1]))
    return found


def stale_names() -> list[str]:
    files = tracked()
    names = known(files)
    prose = [f for f in files if f.endswith((".py", ".md"))
             and (f.startswith(("harness/", "suites/", "docs/")) or f in ("README.md", "ARCHITECTURE.md"))]
    stale = []
    for f in prose:
        for n, line in enumerate((ROOT / f).read_text("utf-8").splitlines(), 1):
            for name in NAME.findall(line):
                if (name.endswith(".py") or "/" in name) and name not in names and name not in EXAMPLES:
                    stale.append(f"{f}:{n}: {name}")
    return stale


def test_prose_names_only_files_that_exist():
    assert stale_names() == []


def test_the_scan_finds_a_stale_name(tmp_path):
    """The scan can fail: a name of a file that is gone is not in the repository's names."""
    names = known(tracked())
    assert "run/session.py" in names and "session.py" in names
    assert "harness/session.py" not in names and "mutants/omp.py" not in names
