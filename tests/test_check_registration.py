"""Registration refuses a wrong check when its suite loads, naming the check and what is wrong: an unknown
level or keyword, a signature that does not fit the kind, an id registered twice, a sentence that is not
verbatim in the spec text. A toy suite with a one-paragraph spec stands for any suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memconform.core.results import Failure, HarnessError, Keyword
from memconform.core.suite import Level, SuiteSpec

SENTENCE = "A counter MUST never go below zero."


@pytest.fixture
def suite(tmp_path: Path) -> SuiteSpec:
    spec = tmp_path / "SPEC.md"
    spec.write_text(f"# Counter\n\n{SENTENCE}\nIt SHOULD\n  say why when it refuses.\n", "utf-8")
    return SuiteSpec(name="toy", spec_title="Toy", version="1", levels=[Level("core", "Core")], spec_text=spec)


def declare(suite: SuiteSpec, fn: Any, **overrides: str) -> None:
    fields = {"section": "1", "keyword": "MUST", "level": "core", "sentence": SENTENCE} | overrides
    suite.check(**fields)(fn)


def never_below_zero(ctx: Any) -> Iterator[Failure]:
    yield from ()


def test_a_right_check_registers_with_its_sentence_whitespace_folded(suite: SuiteSpec) -> None:
    declare(suite, never_below_zero)

    def says_why(ctx: Any) -> Iterator[Failure]:
        yield from ()

    declare(suite, says_why, keyword="SHOULD", sentence="It SHOULD say why when it refuses.")
    assert [(c.id, c.keyword) for c in suite.registered().values()] == [
        ("toy.never_below_zero", Keyword.MUST), ("toy.says_why", Keyword.SHOULD)]


@pytest.mark.parametrize("overrides, words", [
    ({"level": "prodcuer"}, "level 'prodcuer' is not one of the suite's levels (core)"),
    ({"sentence": "A counter MUST never go below one."}, "the sentence is not verbatim in the spec text"),
    ({"sentence": " "}, "the sentence is empty"),
    ({"kind": "documnet"}, "kind 'documnet' is not one of document, target"),
])
def test_a_wrong_declaration_is_refused_naming_the_check(suite: SuiteSpec, overrides: dict[str, str], words: str) -> None:
    with pytest.raises(HarnessError) as refused:
        declare(suite, never_below_zero, **overrides)
    assert "check toy.never_below_zero" in str(refused.value) and words in str(refused.value)
    assert suite.registered() == {}


def test_an_unknown_keyword_is_refused(suite: SuiteSpec) -> None:
    with pytest.raises(HarnessError, match=r"check toy.never_below_zero: keyword 'MUSt' is not one of MUST, MUST NOT"):
        declare(suite, never_below_zero, keyword="MUSt")


def test_a_signature_that_does_not_fit_the_kind_is_refused(suite: SuiteSpec) -> None:
    def takes_nothing() -> Iterator[Failure]:
        yield from ()

    def document_check(doc: Any, ctx: Any) -> Iterator[Failure]:
        yield from ()

    with pytest.raises(HarnessError, match=r"a target check is called as fn\(ctx\); takes_nothing\(\)"):
        declare(suite, takes_nothing)
    with pytest.raises(HarnessError, match=r"a target check is called as fn\(ctx\)"):
        declare(suite, document_check)
    declare(suite, document_check, kind="document")  # the same function fits a document check


def test_a_check_that_is_no_generator_is_refused(suite: SuiteSpec) -> None:
    def returns(ctx: Any) -> list[Failure]:
        return []

    with pytest.raises(HarnessError, match="a check is a generator of Failures"):
        declare(suite, returns)  # type: ignore[arg-type]


def test_two_functions_under_one_id_are_refused(suite: SuiteSpec) -> None:
    declare(suite, never_below_zero)
    declare(suite, never_below_zero)  # the same function again: its module re-imported, kept

    def other() -> Any:
        def never_below_zero(ctx: Any) -> Iterator[Failure]:
            yield from ()
        return never_below_zero

    with pytest.raises(HarnessError, match="the id is registered already, by test_check_registration.never_below_zero"):
        declare(suite, other())


def test_the_five_suites_loaded_every_check_through_this_gate() -> None:
    from memconform.core.suite import all_suites

    suites = all_suites()
    assert {s.name for s in suites} >= {"memoryai", "omp", "amps", "emp", "memorizz"}
    for s in suites:
        assert s.spec_text is not None and s.spec_text.is_file(), s.name
        assert s.registered(), s.name


def expected_run_order(folder: Path, prefix: str) -> list[str]:
    """The check modules of a checks package in the order they load: its __init__.py's `__all__` as written,
    each module after the sibling check modules it imports at its top."""
    import ast

    listed = next((list(ast.literal_eval(node.value)) for node in ast.parse((folder / "__init__.py").read_text("utf-8")).body
                   if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]), [])
    order: list[str] = []

    def load(module: str) -> None:
        if module in order or not (folder / f"{module}.py").is_file():
            return
        for node in ast.parse((folder / f"{module}.py").read_text("utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(prefix + "."):
                load(node.module.rsplit(".", 1)[-1])
            elif isinstance(node, ast.ImportFrom) and node.module == prefix:
                for alias in node.names:
                    load(alias.name)
        order.append(module)

    for module in listed:
        load(module)
    return order


def test_checks_run_in_the_order_their_package_imports_them() -> None:
    """Run order is registration order. A sorter that reorders the imports of suites/<spec>/checks/__init__.py
    reorders the run, and verdicts that depend on what ran before change."""
    from memconform.core.suite import all_suites

    for s in all_suites():
        folder = Path(__file__).resolve().parents[1] / "suites" / s.name / "checks"
        if not (folder / "__init__.py").is_file():
            continue
        seen: list[str] = []
        for check in s.registered().values():
            module = check.fn.__module__.rsplit(".", 1)[-1]
            if module not in seen:
                seen.append(module)
        expected = expected_run_order(folder, f"memconform.suites.{s.name}.checks")
        assert seen == [m for m in expected if m in seen], s.name
