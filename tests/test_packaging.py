"""A plain `pip install .` must carry every package and the fixture corpus."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    namespace = {"harness": ("memconform",), "suites": ("memconform", "suites")}
    on_disk = {
        ".".join(namespace[top] + p.parent.relative_to(ROOT / top).parts)
        for top in namespace
        for p in (ROOT / top).rglob("__init__.py")
    } | {"memconform.fixtures"}
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - on_disk == set(), "listed packages with no folder"


def test_installed_fixtures_are_found():
    from memconform.fixtures_loader import fixture_root

    assert any(fixture_root().rglob("*.json"))
