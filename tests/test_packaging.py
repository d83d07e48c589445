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
    from memconform.kit.fixtures_loader import fixture_root

    assert any(fixture_root().rglob("*.json"))


def test_every_suite_folder_has_an_entry_point():
    """A suite is known only through its entry point: one per suites/<spec>/, installed as declared."""
    from importlib.metadata import entry_points

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["memconform.suites"]
    folders = {p.parent.parent.name for p in (ROOT / "suites").glob("*/checks/__init__.py")}
    assert set(declared) == folders
    assert all(value == f"memconform.suites.{name}.suite:SUITE" for name, value in declared.items())
    installed = {ep.name: ep.value for ep in entry_points(group="memconform.suites")}
    assert {k: installed.get(k) for k in declared} == declared, "reinstall: pip install -e '.[dev]'"


def test_every_entry_point_loads_a_suite_of_its_name():
    from memconform.core.suite import get_suite, suite_names

    for name in suite_names():
        suite = get_suite(name)
        assert suite.name == name and suite.levels and suite.reference is not None and suite.mutants is not None


def test_no_module_is_excused_from_mypy():
    """Every module type-checks (the last of the suite rewrites' typing debt was paid off): a new one must too."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])
    excused = [m for o in overrides if o.get("ignore_errors") or o.get("disable_error_code") for m in o["module"]]
    assert excused == [], "fix the module's types instead of excusing it"
