"""Build memconform's sdist and wheel from a copy of the checkout (the checkout itself is never written),
offline: `python -m build --no-isolation` with the build backend of the dev extra."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from made_once import made_once, shared_folder

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "reports", "__pycache__",
                                 ".mypy_cache", ".ruff_cache", ".hypothesis", ".pytest_cache")


def missing_tools() -> str | None:
    """Why the build cannot run here (None: it can)."""
    for module in ("build", "twine", "setuptools"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[dev]')"
    return None


def build_dist(workdir: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """(the folder holding the sdist and the wheel, the build's process)."""
    source = workdir / "src"
    shutil.copytree(ROOT, source, ignore=IGNORED, symlinks=True)
    out = workdir / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=600, check=False)
    return out, proc


def dist_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """(the folder holding the sdist and the wheel, the build's exit code, its output), built once per test
    session (made_once) and shared by every test that needs it: the checkout does not change during a session,
    so three builds of it (packaging, the CI recipe, the installed-wheel replay) made the same files."""
    folder = shared_folder(tmp_path_factory) or tmp_path_factory.getbasetemp()

    def build() -> dict[str, object]:
        work = folder / "memconform-dist"
        work.mkdir()
        out, proc = build_dist(work)
        return {"out": str(out), "returncode": proc.returncode, "log": proc.stdout + proc.stderr}

    made = made_once(folder, "memconform-dist", build)
    return Path(made["out"]), int(made["returncode"]), str(made["log"])
