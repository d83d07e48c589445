"""The domain tables (suites/<spec>/domain.json) and their loader (harness/kit/domain.py)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from memconform.core.check import squash
from memconform.kit import domain

ROOT = Path(__file__).resolve().parents[1]
SPECS = ("omp", "emp", "amps", "memorizz", "memoryai")


def table(spec: str) -> dict:
    return json.loads((ROOT / "suites" / spec / "domain.json").read_text("utf-8"))


@pytest.mark.parametrize("spec", SPECS)
def test_table_matches_schema_and_loads(spec: str) -> None:
    doc = table(spec)
    assert domain.schema_errors(doc) == []
    assert domain.table_problems(doc) == []
    loaded = domain.load_path(ROOT / "suites" / spec / "domain.json")
    assert loaded.spec == spec and loaded.classes()


@pytest.mark.parametrize("spec", SPECS)
def test_every_sentence_is_verbatim_in_the_spec(spec: str) -> None:
    doc = table(spec)
    text = squash((ROOT / doc["spec_text"]).read_text("utf-8"))
    missing = [f["id"] for f in doc["fields"] if squash(f["sentence"]) not in text]
    assert missing == []


def test_tables_are_what_the_script_writes() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_domain_tables.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_sentence_not_in_the_spec_is_caught() -> None:
    doc = table("omp")
    text = squash((ROOT / doc["spec_text"]).read_text("utf-8"))
    assert squash("content: string // The memory text. Max 20,000 chars.") not in text


def test_schema_refuses_a_class_without_expectation() -> None:
    doc = table("omp")
    del doc["fields"][0]["classes"][0]["expect"]
    assert domain.schema_errors(doc)


def test_unknown_generator_is_a_problem() -> None:
    doc = table("omp")
    doc["fields"][0]["classes"][0]["gen"] = "no_such_generator"
    assert any("unknown generator" in p for p in domain.table_problems(doc))


def test_string_classes_have_the_lengths_they_claim() -> None:
    assert len(domain.generate("string_len", length=10_000, alphabet="astral")[0]) == 10_000
    assert len(domain.generate("string_len", length=51)[0]) == 51
    first, second = domain.generate("string", kind="nfc_nfd")
    assert first != second and len(first) < len(second)
    assert domain.generate("string", kind="prefix_pair") == ["ab", "abc"]


def test_number_edges_keep_their_json_form() -> None:
    assert json.dumps(domain.generate("number", text="-0.0")[0]) == "-0.0"
    assert json.dumps(domain.generate("number", text="5.0")[0]) == "5.0"
    assert domain.generate("number", text="9007199254740993")[0] == 2**53 + 1


def test_array_of_makes_items_at_their_length() -> None:
    items = domain.generate("array_of", count=20, item_len=50)[0]
    assert len(items) == 20 and {len(t) for t in items} == {50} and len(set(items)) == 20


def _all_pairs(factors: list[tuple[str, list[int]]]) -> set:
    return {((a, x), (b, y)) for (a, xs), (b, ys) in itertools.combinations(factors, 2) for x in xs for y in ys}


@pytest.mark.parametrize("shape", [[2, 2], [3, 3, 3], [4, 3, 5, 2, 6, 3, 4], [1, 7, 2], [6, 6, 6, 6, 6]])
def test_pairwise_covers_every_pair(shape: list[int]) -> None:
    factors = [(f"f{i}", list(range(n))) for i, n in enumerate(shape)]
    rows = domain.pairwise(factors)
    covered = {((a, r[a]), (b, r[b])) for r in rows for a, b in itertools.combinations([n for n, _ in factors], 2)}
    assert covered >= _all_pairs(factors)
    assert len(rows) <= _product(shape)
    if len(shape) > 3:
        assert len(rows) < _product(shape) // 10  # far fewer rows than every combination


def _product(shape: list[int]) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


def test_each_choice_reaches_every_level() -> None:
    factors = [("a", [1, 2, 3]), ("b", ["x"]), ("c", [True, False])]
    rows = domain.each_choice(factors)
    for name, levels in factors:
        assert {r[name] for r in rows} == set(levels)


def test_omp_plans_reach_every_pair_outside_ci() -> None:
    omp = domain.load_path(ROOT / "suites" / "omp" / "domain.json")
    for combo in omp.combinations:
        universe = omp.pair_universe(combo["id"])
        assert domain.rows_pairs(domain.plan(omp, combo["id"], "default")) >= universe
        ci = domain.rows_pairs(domain.plan(omp, combo["id"], "ci")) & universe
        assert 0 < len(ci) < len(universe)  # ci: every class once, a fixed subset of the pairs


def test_figures_count_only_judged_classes() -> None:
    omp = domain.load_path(ROOT / "suites" / "omp" / "domain.json")
    ledger = domain.DomainLedger()
    first = omp.classes()[0]
    ledger.sent([omp.classes()[1].key])
    ledger.judge([first.key])
    found = domain.figures(omp, ledger)
    assert (found.classes_judged, found.classes_reached) == (1, 2)
    assert found.classes_total == len(omp.classes())
    assert "1/" in found.text()


def test_fill_replaces_placeholders() -> None:
    assert domain.fill(["{tag}", {"q": "{word} x"}, 5], {"tag": "t1", "word": "w"}) == ["t1", {"q": "w x"}, 5]


def test_coverage_domain_command_prints_each_suite(capsys: pytest.CaptureFixture[str]) -> None:
    from memconform.cli.main import main

    assert main(["coverage", "--domain"]) == 0
    out = capsys.readouterr().out
    for spec in SPECS:
        assert f"{spec} (" in out
    omp = domain.load("omp")
    pairs = len(set().union(*(omp.pair_universe(c["id"]) for c in omp.combinations)))
    assert "parameter pairs (pairs planned: ci " in out and f"default {pairs}/{pairs}" in out


def test_coverage_domain_reads_a_reports_figures(tmp_path: Path) -> None:
    from memconform.core.suite import get_suite
    from memconform.run import coverage

    figures = {"classes_total": 10, "classes_judged": 7, "classes_reached": 9, "pairs_total": 4, "pairs_judged": 2,
               "unreached": ["a:b", "c:d", "e:f"]}
    lines = [{"type": "header"}, {"type": "footer", "notes": [{"suite": "omp", "note": "x", "domain": figures}]}]
    (tmp_path / "report.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    shown = coverage.domain_coverage(get_suite("omp"), tmp_path)
    assert shown.run == figures
    text = "\n".join(coverage.render_domain(shown))
    assert "7/10 classes judged (9 reached), 50% of pairs (2/4)" in text and "not judged: a:b, c:d, e:f" in text


def test_the_pair_note_says_why_pairs_are_missing_under_each_profile() -> None:
    from memconform.kit.domain import DomainFigures

    partial = DomainFigures("x", 4, 4, 4, 10, 3, ())
    assert "--profile default reaches every pair" in partial.text("ci")
    assert "did not take" in partial.text("default") and "reaches every pair" not in partial.text("default")
    assert "subset" not in DomainFigures("x", 4, 4, 4, 10, 10, ()).text("ci")
