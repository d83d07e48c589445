"""Every junit.xml memconform writes must be valid under the Jenkins xunit schema (tests/data/junit-10.xsd).

conftest.py calls `invalid_junit_files` on each test's tmp_path after the test and on the whole
temporary tree at the end of the session, so a rendering that CI tools would reject fails the suite
wherever a test happened to write it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

XSD = Path(__file__).parent / "data" / "junit-10.xsd"
JUNIT_ROOTS = ("<testsuites", "<testsuite ")


@functools.cache
def schema() -> Any:
    """The compiled schema, or None without xmlschema (the dev extra installs it)."""
    try:
        import xmlschema
    except ImportError:
        return None
    return xmlschema.XMLSchema10(str(XSD))


def junit_problems(text: str) -> list[str]:
    """The schema's complaints about one JUnit document (empty: valid)."""
    compiled = schema()
    assert compiled is not None, "xmlschema is not installed: pip install -e '.[dev]'"
    return [f"{e.path}: {e.reason}" for e in compiled.iter_errors(text)]


def _junit_like(path: Path) -> bool:
    try:
        head = path.read_text("utf-8", errors="replace")[:400]
    except OSError:
        return False
    return any(root in head for root in JUNIT_ROOTS)


def junit_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.xml")):
        if path.is_file() and not path.is_symlink() and _junit_like(path):
            yield path


def invalid_junit_files(root: Path) -> dict[Path, list[str]]:
    """Each JUnit XML file under root that the schema rejects, with its complaints (nothing without xmlschema)."""
    if schema() is None or not root.is_dir():
        return {}
    found = {p: junit_problems(p.read_text("utf-8")) for p in junit_files(root)}
    return {p: problems for p, problems in found.items() if problems}


def describe(invalid: dict[Path, list[str]]) -> str:
    return "\n".join(f"{p}: " + "; ".join(problems[:3]) for p, problems in invalid.items())
