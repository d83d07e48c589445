"""harness/portability knows no format by name (issue 30 item 3): every format is what a suite declares
(SuiteSpec.portability -> Portable, harness/portability/formats.py), so a sixth spec joins translate, the loss
matrix and port from its own package. tests/test_example_suite.py drives a sixth spec through them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from memconform.core.results import HarnessError
from memconform.core.suite import all_suites, suite_names
from memconform.portability.formats import Portable, formats, portable

ROOT = Path(__file__).resolve().parents[1]
PORTABILITY = ROOT / "harness" / "portability"
BUILT_IN = ("memoryai", "omp", "memorizz", "amps", "emp")


def format_names_in(text: str, names: tuple[str, ...]) -> list[str]:
    """Every line naming a format as a word (code, strings, comments and docstrings alike)."""
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b", re.I)
    return [line.strip() for line in text.splitlines() if word.search(line)]


def test_the_scan_finds_a_switch_on_a_format_name():
    """The rule can fail: a branch on a name, a table keyed by one, a suite imported by one, a word in prose."""
    planted = ('if fmt == "emp":\n    pass\nSEEDS = {"memoryai": "x.json"}\nfrom memconform.suites.omp import client\n'
               '# the MemoRizz store\nclean = "compared with the amplitude"\n')
    assert format_names_in(planted, BUILT_IN) == ['if fmt == "emp":', 'SEEDS = {"memoryai": "x.json"}',
                                                   "from memconform.suites.omp import client", "# the MemoRizz store"]


def test_harness_portability_names_no_format():
    names = tuple(sorted(set(BUILT_IN) | set(suite_names())))
    found = {str(p.relative_to(ROOT)): hits for p in sorted(PORTABILITY.rglob("*.py"))
             if (hits := format_names_in(p.read_text("utf-8"), names))}
    assert found == {}, "harness/portability names a format; ask its Portable (formats.portable(name)) instead"


def test_harness_portability_holds_no_format_data():
    """Mapping tables and sample documents live in the suites' packages (suites/<spec>/portability/)."""
    assert sorted(str(p.relative_to(PORTABILITY)) for p in PORTABILITY.rglob("*.json")) == []


def test_every_installed_suite_declares_its_format():
    declared = {s.name for s in all_suites() if s.portability is not None}
    assert set(BUILT_IN) <= declared
    assert set(formats()) == declared
    for name in formats():
        p = portable(name)
        assert isinstance(p, Portable) and p.name == name
        assert p.mapping.is_file() and p.mapping.parent.name == "portability", p.mapping
        assert p.seed in {s.name for s in p.samples()}, f"{name}: the seed {p.seed} is not among its samples"


def test_the_matrix_order_is_the_declared_order():
    assert formats()[:5] == BUILT_IN


def test_an_unknown_format_is_a_harness_error_naming_the_known_ones():
    with pytest.raises(HarnessError, match="unknown format 'nope'; formats: memoryai, omp"):
        portable("nope")


def test_a_declaration_that_is_not_the_suites_portable_is_refused():
    from memconform.portability.formats import _checked

    assert _checked("omp", portable("omp")) is portable("omp")  # the control: the suite's own declaration
    with pytest.raises(HarnessError, match="suite amps: SuiteSpec.portability must return a Portable named 'amps'"):
        _checked("amps", portable("omp"))
    with pytest.raises(HarnessError, match="must return a Portable"):
        _checked("amps", {"mapping": "x.json"})
