"""Interop holes (issue 32 item 7): the table is data checked on load, every entry holds to what the suite's
checks do (producer side judged by `memconform validate`, consumer side by the domain table the import
check reads), each has its errata entry, and the matrix lists it in the editor's queue as needing an erratum."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.core.registry import REGISTRY
from memconform.core.results import HarnessError
from memconform.core.suite import get_suite
from memconform.matrix.errata import anchors
from memconform.matrix.interop import holes, holes_from

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "harness" / "matrix" / "interop_holes.json"


def table() -> dict[str, Any]:
    return dict(json.loads(TABLE.read_text("utf-8")))


def test_the_first_hole_is_memoryai_upper_case_content_hash() -> None:
    first = holes()[0]
    assert (first.id, first.suite, first.erratum) == ("IH1", "memoryai", "I1")
    assert first.producer["verdict"] == "accepted" and "upper-case" in first.producer["behaviour"]
    assert "skips" in first.consumer["behaviour"]


@pytest.mark.parametrize("breaks, words", [
    (lambda d: d["holes"][0].pop("consumer"), "consumer"),
    (lambda d: d["holes"][0]["producer"].update(verdict="maybe"), "maybe"),
    (lambda d: d["holes"][0]["producer"].update(checks=[]), "producer/checks"),
    (lambda d: d["holes"].append(copy.deepcopy(d["holes"][0])), "appears twice"),
    (lambda d: [d["holes"][0][s].update(verdict="refused") for s in ("producer", "consumer")], "no hole"),
])
def test_a_broken_table_is_refused_on_load(breaks: Any, words: str) -> None:
    data = table()
    breaks(data)
    with pytest.raises(HarnessError, match=words):
        holes_from(data)


@pytest.mark.parametrize("hole", holes(), ids=lambda h: h.id)
def test_every_hole_names_real_checks_sentences_and_an_errata_entry(hole: Any) -> None:
    get_suite(hole.suite)
    known = {c.id for c in REGISTRY.for_suite(hole.suite)}
    for side in (hole.producer, hole.consumer):
        assert set(side["checks"]) <= known, side["checks"]
    statements = json.loads(Path(get_suite(hole.suite).requirements).read_text("utf-8"))["statements"]
    assert set(hole.sentences) <= {s["id"] for s in statements}
    assert hole.erratum in anchors(hole.suite)
    text = (ROOT / "suites" / hole.suite / "errata.md").read_text("utf-8")
    assert hole.id in text and "needs an erratum" in text


def validate(doc: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc), "utf-8")
    done = subprocess.run([sys.executable, "-m", "memconform.cli.main", "validate", str(path), "--format", "memoryai",
                           "--json"], capture_output=True, text=True, timeout=300)
    return dict(json.loads(done.stdout))


def test_ih1_producer_side_is_what_validate_does(tmp_path: Path) -> None:
    fixture = json.loads((ROOT / "fixtures" / "memoryai" / "valid" / "content_hash_upper_case.json").read_text("utf-8"))
    doc = fixture["document"]
    assert any(ch["content_hash"] != ch["content_hash"].lower() for ch in doc["chunks"])
    [hole] = [h for h in holes() if h.id == "IH1"]
    verdict = validate(doc, tmp_path)
    flagged = {*verdict["failed"], *verdict["warnings"], *verdict["errored"]}
    assert verdict["verdict"] == "valid" and not flagged & set(hole.producer["checks"]), verdict
    broken = copy.deepcopy(doc)
    broken["chunks"][0]["content_hash"] = "Z" * 64  # the control: a hash that is no hex at all fails
    assert "memoryai.chunk_field_types" in validate(broken, tmp_path)["failed"]


def test_ih1_consumer_side_is_what_the_import_check_expects() -> None:
    """The consumer verdict recorded is the import check's own expectation of the class (domain table and
    the suite's consumer-open classes): when the suite changes it, this fails until the table says so."""
    get_suite("memoryai")
    from memconform.suites.memoryai.checks.domain_imports import expectation
    from memconform.suites.memoryai.domain_support import table as domain_table

    [hole] = [h for h in holes() if h.id == "IH1"]
    field, _, class_id = hole.consumer["domain_class"].partition(":")
    [vc] = [k for k in domain_table().field(field).classes if k.id == class_id]
    recorded = hole.consumer["verdict"]
    assert recorded == ("accepted" if expectation(vc) == "open" else "refused")


def test_the_matrix_lists_each_hole_of_its_suites_as_needing_an_erratum() -> None:
    from memconform.matrix.render_html import render_html
    from memconform.matrix.render_md import render_markdown
    from test_matrix_html import matrix_doc

    doc = matrix_doc()
    doc["interop_holes"] = [h.to_json() for h in holes()]
    md = render_markdown(doc)
    queue_and_holes = md.split("## Readings", 1)[0]
    assert "## Interop holes: each needs an erratum" in queue_and_holes
    assert "IH1" in queue_and_holes and "**needs an erratum**" in queue_and_holes
    assert "(errata/memoryai/errata.md#i1-" in queue_and_holes
    page = render_html(doc)
    assert 'id="hole-IH1"' in page and "needs an erratum" in page
