"""memconform builds and publishes as users expect: `python -m build` clean, `twine check --strict` clean,
and the wheel carries everything a run needs (it runs a suite from a fresh virtual environment in
tests/test_ci_recipes.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from dist_build import dist_of_the_session, missing_tools

pytestmark = [pytest.mark.slow, pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools()))]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out, returncode, log = dist_of_the_session(tmp_path_factory)
    assert returncode == 0, log[-6000:]
    return out, log


def test_build_is_clean(dist: tuple[Path, str]) -> None:
    out, log = dist
    assert sorted(p.name for p in out.iterdir()) == ["memconform-0.1.0-py3-none-any.whl", "memconform-0.1.0.tar.gz"]
    warnings = [line for line in log.splitlines() if re.search(r"\bWARNING\b|Deprecat", line)]
    assert warnings == [], warnings


def test_twine_check_is_clean(dist: tuple[Path, str]) -> None:
    out, _ = dist
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(out.iterdir()))],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2


def test_the_wheel_carries_data_and_entry_points(dist: tuple[Path, str]) -> None:
    out, _ = dist
    names = set(zipfile.ZipFile(next(out.glob("*.whl"))).namelist())
    for needed in ("memconform/py.typed", "memconform/schemas/report.schema.json", "memconform/render/sections.json",
                   "memconform/suites/memoryai/requirements.json", "memconform/suites/omp/errata.md", "memconform/suites/omp/domain.json", "memconform/suites/omp/checks/__init__.py"):
        assert needed in names, needed
    entry_points = zipfile.ZipFile(next(out.glob("*.whl"))).read("memconform-0.1.0.dist-info/entry_points.txt").decode()
    assert "memconform = memconform.cli.main:main" in entry_points and "[pytest11]" in entry_points
    assert not any(n.startswith(("tests/", "harness/")) for n in names)


def test_the_license_and_the_metadata_users_expect_are_in_both_distributions(dist: tuple[Path, str]) -> None:
    import tarfile
    from email.parser import Parser

    out, _ = dist
    wheel = zipfile.ZipFile(next(out.glob("*.whl")))
    assert "memconform-0.1.0.dist-info/licenses/LICENSE" in wheel.namelist()
    assert b"Apache License" in wheel.read("memconform-0.1.0.dist-info/licenses/LICENSE")
    with tarfile.open(next(out.glob("*.tar.gz"))) as sdist:
        assert "memconform-0.1.0/LICENSE" in sdist.getnames()
    meta = Parser().parsestr(wheel.read("memconform-0.1.0.dist-info/METADATA").decode())
    assert meta["License-Expression"] == "Apache-2.0" and meta["License-File"] == "LICENSE"
    classifiers = meta.get_all("Classifier") or []
    assert {"Framework :: Pytest", "Typing :: Typed", "Topic :: Software Development :: Testing"} <= set(classifiers)
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Repository", "Issues", "Documentation"} <= set(urls) and all(u.startswith("https://") for u in urls.values())
    assert meta["Author"] or meta["Author-email"]
    # the long description (the README) links absolutely: a package index page has no repository beside it
    assert not re.search(r"\]\((?!https?://|#)", meta.get_payload())
