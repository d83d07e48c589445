"""What a user of the command line relies on: `memconform --version`, what every exit code means in every
--help, the README's links absolute (a package index page shows the README with no repository beside it)
and naming files that exist, the LICENSE the metadata names."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

import pytest
from memconform import __version__
from memconform.cli.main import EXIT_CODES, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _parsers(parser: argparse.ArgumentParser, name: str = "memconform") -> dict[str, argparse.ArgumentParser]:
    found = {name: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, sub_parser in action.choices.items():
                found.update(_parsers(sub_parser, sub if name == "memconform" else f"{name} {sub}"))
    return found


def test_version_prints_the_installed_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"memconform {__version__}"
    assert __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]


def test_every_help_says_what_its_exit_codes_mean(capsys: pytest.CaptureFixture[str]) -> None:
    parsers = _parsers(build_parser())
    assert {"run", "validate", "list", "coverage", "diff", "certify", "verify", "matrix diff", "translate"} <= set(parsers)
    for name, parser in parsers.items():
        text = " ".join(parser.format_help().split())
        assert "exit codes: 0 " in text and " 2 " in text.split("exit codes:")[1], name
    assert set(EXIT_CODES) <= set(parsers), set(EXIT_CODES) - set(parsers)  # no entry for a command that is gone
    assert main(["run", "--help"]) == 0
    assert "1 one is not conformant" in " ".join(capsys.readouterr().out.split())


def test_the_readme_links_absolutely_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    links = re.findall(r"\]\(([^)]+)\)", readme)
    relative = [u for u in links if not u.startswith(("https://", "http://", "#"))]
    assert relative == []
    base = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["urls"]["Repository"] + "/blob/main/"
    ours = [u[len(base):] for u in links if u.startswith(base)]
    assert ours and all((ROOT / path).exists() for path in ours), ours


def test_the_license_is_the_apache_2_text_the_metadata_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert {"Framework :: Pytest", "Typing :: Typed"} <= set(project["classifiers"])
    assert (ROOT / "harness" / "py.typed").exists()  # "Typing :: Typed" holds


def test_matrix_diff_help_names_every_reason_it_exits_1() -> None:
    """The gate (matrix/diff.py gate_fails) fails on three kinds of change alone; its --help names all three
    under exit code 1, and nothing the gate lets pass (a fix, a sentence reclassified otherwise)."""
    from memconform.matrix.diff import gate_fails

    text = " ".join(_parsers(build_parser())["matrix diff"].format_help().split())
    one = text.split("exit codes:")[1].split("; 1 ")[1].split("; 2 ")[0]
    for reason in ("a new split", "a new cell not assessed", "a regression"):
        assert reason in one, (reason, one)
    assert "fixed" not in one and "reclassified" not in one
    nothing = {k: [] for k in ("new_splits", "new_not_assessed", "regressions", "fixed", "reclassified")}
    assert not gate_fails(nothing)
    for kind in ("new_splits", "new_not_assessed", "regressions"):
        assert gate_fails({**nothing, kind: [{}]}), kind
    for kind in ("fixed", "reclassified"):
        assert not gate_fails({**nothing, kind: [{}]}), kind
