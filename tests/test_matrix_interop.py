"""Interop holes (issue 32 item 7): the committed table is what the sweep finds (harness/matrix/interop_sweep.py)
under the review of its candidates, the sweep lists a point only where the two sides disagree (positive controls
beside), every hole's two sides hold to what the suite's code does (the producer's document passes the document
checks; the consumer's refusal is what the import check's expectation and table of readings say), each has its
errata entry, and the matrix lists it in the editor's queue as needing an erratum. The consumer side through a
whole run of the import check against a consumer that refuses the hole's classes: tests/test_matrix_interop_runs.py."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from memconform.core.registry import REGISTRY
from memconform.core.results import HarnessError
from memconform.core.suite import get_suite
from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing
from memconform.matrix.errata import anchors
from memconform.matrix.interop import holes, holes_from
from memconform.matrix.interop_sweep import (
    Candidate,
    holes_document,
    judge_document,
    rendered,
    review,
    review_from,
    sweep,
    sweep_suites,
)

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "harness" / "matrix" / "interop_holes.json"


def table() -> dict[str, Any]:
    return dict(json.loads(TABLE.read_text("utf-8")))


@pytest.fixture(scope="module")
def swept() -> tuple[list[Candidate], dict[str, Any]]:
    return sweep_suites()


def test_the_first_hole_is_memoryai_upper_case_content_hash() -> None:
    first = holes()[0]
    assert (first.id, first.suite, first.erratum, first.kind) == ("IH1", "memoryai", "I1", "consumer_held_to_a_reading")
    assert first.producer["domain_classes"] == ["chunk.content_hash:upper_hex"]
    assert first.producer["verdict"] == "accepted" and "upper-case" in first.producer["behaviour"]
    assert first.consumer["verdict"] == "refused" and "skips" in first.consumer["behaviour"]


def test_the_committed_table_is_the_sweep(swept: tuple[list[Candidate], dict[str, Any]]) -> None:
    """scripts/interop_holes.py --check in one: the file is the sweep's under the review, nothing by hand."""
    candidates, suites = swept
    assert TABLE.read_text("utf-8") == rendered(holes_document(candidates, review(), suites))
    assert sum(s.get("candidates", 0) for s in suites.values()) == len(candidates) > len(holes())  # rejected ones unlisted
    assert {"memoryai", "memorizz", "amps", "emp"} <= {name for name, s in suites.items() if "candidates" in s}


def test_every_candidate_is_judged_once_and_every_judgement_has_its_candidate(
        swept: tuple[list[Candidate], dict[str, Any]]) -> None:
    candidates, suites = swept
    judged = review()
    unjudged = copy.deepcopy(judged)
    unjudged["rejected"] = [r for r in unjudged["rejected"] if r["fields"] != ["manifest.embedding_model"]]
    with pytest.raises(HarnessError, match="not judged in interop_review.json: memoryai manifest.embedding_model consumer_may_refuse"):
        holes_document(candidates, unjudged, suites)
    twice = copy.deepcopy(judged)
    twice["rejected"].append({**twice["rejected"][0], "why": "judged a second time, which the sweep refuses"})
    with pytest.raises(HarnessError, match="judged more than once"):
        holes_document(candidates, twice, suites)
    stale = copy.deepcopy(judged)
    stale["rejected"].append({"suite": "memoryai", "fields": ["chunk.content_hash"], "kind": "consumer_must_refuse",
                              "why": "a judgement the sweep has no candidate for"})
    with pytest.raises(HarnessError, match="no candidate behind it"):
        holes_document(candidates, stale, suites)
    with pytest.raises(HarnessError, match="rejected/0/why"):
        review_from({**judged, "rejected": [{**judged["rejected"][0], "why": "short"}]})


def test_a_settled_class_found_again_stops_the_sweep(swept: tuple[list[Candidate], dict[str, Any]]) -> None:
    """A class settled by a producer check (interop_review.json `settled`) that is a candidate again (the check no
    longer flags it) is named, never dropped silently."""
    candidates, suites = swept
    judged = copy.deepcopy(review())
    judged["settled"].append({"suite": "memoryai", "fields": ["chunk.content_hash"], "classes": ["upper_hex"],
                              "checks": ["memoryai.chunk_field_types"], "why": "a settlement the sweep contradicts"})
    with pytest.raises(HarnessError, match="settled in interop_review.json .* but a candidate again: memoryai chunk.content_hash "
                                           "consumer_held_to_a_reading upper_hex"):
        holes_document(candidates, judged, suites)


def test_each_settled_class_is_flagged_by_the_checks_it_names() -> None:
    """The positive side of `settled`: the producer checks it names flag every class it holds today."""
    settled = review()["settled"]
    assert settled
    for entry in settled:
        pairing = get_suite(entry["suite"]).interop()
        table = domain.required(entry["suite"])
        for field in (f for f in table.fields if f.id in entry["fields"]):
            for vc in (c for c in field.classes if "classes" not in entry or c.id in entry["classes"]):
                for doc in pairing.documents(field, vc):
                    verdict, checks = judge_document(entry["suite"], doc)
                    assert verdict != "accepted" and set(entry["checks"]) <= set(checks), (field.id, vc.id, checks)


# ---- the sweep's rule, on a table of its own: agreeing points are never listed ------------------------------

def _class(field: str, class_id: str, expect: str, why: str = "") -> domain.ValueClass:
    return domain.ValueClass(field, class_id, "literal", expect, {"value": class_id}, why)


def _toy_table(classes: list[domain.ValueClass], operations: tuple[str, ...] = ("export", "import")) -> domain.Domain:
    fields = tuple(domain.Field(f, "record", operations, "string", False, "§1", "a sentence", "prose",
                                tuple(c for c in classes if c.field == f), {})
                   for f in dict.fromkeys(c.field for c in classes))
    return domain.Domain("toy", "toy", fields, ())


def _toy_sweep(classes: list[domain.ValueClass], producer: dict[str, str], consumer: dict[str, str],
               operations: tuple[str, ...] = ("export", "import")) -> list[Candidate]:
    pairing = Pairing("toy", "export", "import", lambda f, vc: [vc.id], lambda vc: consumer[vc.id], lambda f: ("toy.imports",))
    return sweep(pairing, _toy_table(classes, operations), [], judge=lambda suite, doc: (producer[doc], ()),
                 document_checks=["toy.document"])


def test_a_point_where_producer_and_consumer_agree_is_not_listed() -> None:
    classes = [_class("x", "agreed_valid", "valid"), _class("x", "agreed_invalid", "invalid"),
               _class("x", "told_by_a_should", "open"), _class("x", "both_open_producer_refused", "open"),
               _class("x", "robust_consumer", "valid")]
    producer = {"agreed_valid": "accepted", "agreed_invalid": "refused", "told_by_a_should": "warned",
                "both_open_producer_refused": "refused", "robust_consumer": "refused"}
    consumer = {"agreed_valid": "valid", "agreed_invalid": "invalid", "told_by_a_should": "open",
                "both_open_producer_refused": "open", "robust_consumer": "valid"}
    assert _toy_sweep(classes, producer, consumer) == []


def test_each_kind_of_disagreement_is_listed_and_only_its_classes() -> None:
    classes = [_class("x", "agreed", "valid"), _class("x", "may", "open"), _class("x", "may_too", "open"),
               _class("y", "must", "invalid"), _class("y", "held", "valid", "errata Q7: either case"),
               _class("y", "text_gives_it", "valid", "the spec says so")]
    producer = dict.fromkeys((c.id for c in classes), "accepted")
    consumer = {"agreed": "valid", "may": "open", "may_too": "open", "must": "invalid", "held": "valid", "text_gives_it": "valid"}
    found = {(c.field, c.kind): (c.classes, c.readings) for c in _toy_sweep(classes, producer, consumer)}
    assert found == {("x", "consumer_may_refuse"): (("may", "may_too"), ()), ("y", "consumer_must_refuse"): (("must",), ()),
                     ("y", "consumer_held_to_a_reading"): (("held",), ("Q7",))}


def test_a_field_only_one_side_meets_is_not_swept() -> None:
    classes = [_class("x", "may", "open")]
    assert _toy_sweep(classes, {"may": "accepted"}, {"may": "open"}, operations=("import",)) == []
    assert len(_toy_sweep(classes, {"may": "accepted"}, {"may": "open"})) == 1


def test_the_real_sweep_leaves_agreeing_classes_out(swept: tuple[list[Candidate], dict[str, Any]]) -> None:
    listed = {f"{c.field}:{k}" for c in swept[0] for k in c.classes}
    assert "chunk.content_hash:upper_hex" in listed  # IH1
    # the same field's agreeing classes: a matching hash (both accept), a number (both refuse), absent (both accept)
    assert not listed & {"chunk.content_hash:matching", "chunk.content_hash:not_string", "chunk.content_hash:absent"}


# ---- each hole, both sides ---------------------------------------------------------------------------------

def _pairing(suite: str) -> Pairing:
    pairing = get_suite(suite).interop
    assert pairing is not None
    made: Pairing = pairing()
    return made


def _classes(hole: Any) -> list[tuple[domain.Field, domain.ValueClass]]:
    table_ = domain.required(hole.suite)
    out = []
    for key in hole.producer["domain_classes"]:
        field_id, _, class_id = key.partition(":")
        out.append((table_.field(field_id), table_.field(field_id).cls(class_id)))
    return out


@pytest.mark.parametrize("hole", holes(), ids=lambda h: h.id)
def test_every_hole_names_real_checks_sentences_and_an_errata_entry(hole: Any) -> None:
    get_suite(hole.suite)
    known = {c.id for c in REGISTRY.for_suite(hole.suite)}
    for side in (hole.producer, hole.consumer):
        assert set(side["checks"]) <= known, side["checks"]
    assert _classes(hole)
    statements = json.loads(Path(get_suite(hole.suite).requirements).read_text("utf-8"))["statements"]
    assert set(hole.sentences) <= {s["id"] for s in statements}
    assert hole.erratum in anchors(hole.suite)
    text = (ROOT / "suites" / hole.suite / "errata.md").read_text("utf-8")
    assert re.search(rf"^## {hole.erratum}\.? Interop hole: .*needs an erratum", text, re.M), hole.erratum


@pytest.mark.parametrize("hole", holes(), ids=lambda h: h.id)
def test_every_hole_producer_side_passes_every_document_check(hole: Any) -> None:
    """The producer's document holding each class passes. The control, per field: another class of it is flagged
    (refused, or warned by a SHOULD), so the judge can say no there; a field no document check ever flags makes
    the hole's producer verdict "not judged" (passing says nothing), and the hole says so."""
    pairing = _pairing(hole.suite)
    listed = {vc.key for _, vc in _classes(hole)}
    unjudged = []
    for field in {f.id: f for f, _ in _classes(hole)}.values():
        for vc in (c for c in field.classes if c.key in listed):
            for doc in pairing.documents(field, vc):
                assert judge_document(hole.suite, doc) == ("accepted", ()), vc.key
        flagged = [(other.key, checks) for other in field.classes if other.key not in listed
                   for verdict, checks in (judge_document(hole.suite, doc) for doc in pairing.documents(field, other))
                   if verdict != "accepted"]
        assert all(checks for _, checks in flagged)  # a flag names the checks that raised it
        if not flagged:
            unjudged.append(field.id)
    assert (hole.producer["verdict"] == "not judged") == bool(unjudged), (hole.producer["verdict"], unjudged)


def _refusal_reading(suite: str, key: str) -> Any:
    """The import check's table row recording a refusal of the class as an accepted reading (MemoryAI E42/E61,
    MemoRizz M35/M60, AMPS A57), or None."""
    import importlib

    table_ = importlib.import_module(f"memconform.suites.{suite}.table").TABLE
    pins = importlib.import_module(f"memconform.suites.{suite}.options").OPTIONS.defaults()
    rows = [row for row in table_ if row.name == f"{key} refused" and row.accepted(pins)]
    return rows[0] if rows else None


def _omp_refusal_open(vc: domain.ValueClass) -> bool:
    """OMP's import check judges an open class by its open point's option (O37, O52...), either reading by default."""
    from memconform.suites.omp import domain_data
    from memconform.suites.omp.options import OPTIONS

    point = domain_data.open_point(vc)
    return vc.expect == "open" and (point is None or OPTIONS.defaults()[point.option] == "either")


def _reader_may_drop(field: domain.Field, vc: domain.ValueClass) -> bool:
    """EMP's reader check returns every line no rule refuses under any reading; these lines some reading refuses."""
    from memconform.suites.emp import format as emp
    from memconform.suites.emp.interop import lines

    return all(list(emp.field_errors(line)) for line in lines(field, vc))


@pytest.mark.parametrize("hole", holes(), ids=lambda h: h.id)
def test_every_hole_consumer_side_is_what_the_import_check_expects(hole: Any) -> None:
    """The consumer verdict recorded is the import check's own expectation of each class (and, for a refusal it
    accepts, the row of the suite's table of readings it records the refusal under): when the suite changes
    either, this fails until the sweep and the table say so."""
    pairing = _pairing(hole.suite)
    want = {"accepted": "open", "refused": "valid", "required": "invalid"}[hole.consumer["verdict"]]
    for field, vc in _classes(hole):
        assert pairing.expectation(vc) == want, vc.key
        if hole.suite == "emp":
            assert _reader_may_drop(field, vc) == (hole.consumer["verdict"] == "accepted"), vc.key
            continue
        if hole.suite == "omp":
            assert _omp_refusal_open(vc), vc.key
            continue
        row = _refusal_reading(hole.suite, vc.key)
        assert (row is not None) == (hole.consumer["verdict"] == "accepted"), vc.key
        if row is not None:
            assert set(hole.consumer["checks"]) & {f"{hole.suite}.{c}" for c in row.checks}, (vc.key, row.checks)


# ---- the table on load, and the matrix -----------------------------------------------------------------------

@pytest.mark.parametrize("breaks, words", [
    (lambda d: d["holes"][0].pop("consumer"), "consumer"),
    (lambda d: d["holes"][0]["producer"].update(verdict="maybe"), "maybe"),
    (lambda d: d["holes"][0]["producer"].update(checks=[]), "producer/checks"),
    (lambda d: d["holes"][0]["consumer"].update(domain_classes=[]), "consumer/domain_classes"),
    (lambda d: d["holes"].append(copy.deepcopy(d["holes"][0])), "appears twice"),
    (lambda d: [d["holes"][0][s].update(verdict="refused") for s in ("producer", "consumer")], "no hole"),
])
def test_a_broken_table_is_refused_on_load(breaks: Any, words: str) -> None:
    data = table()
    breaks(data)
    with pytest.raises(HarnessError, match=words):
        holes_from(data)


def test_the_matrix_lists_each_hole_of_its_suites_as_needing_an_erratum() -> None:
    from memconform.matrix.render_html import render_html
    from memconform.matrix.render_md import render_markdown
    from test_matrix_html import matrix_doc

    doc = matrix_doc()
    doc["interop_holes"] = [h.to_json() for h in holes()]
    md = render_markdown(doc)
    queue_and_holes = md.split("## Readings", 1)[0]
    assert "## Interop holes: each needs an erratum" in queue_and_holes
    for hole in holes():
        assert f"{hole.id}: " in queue_and_holes
    assert queue_and_holes.count("**needs an erratum**") == len(holes())
    assert "(errata/memoryai/errata.md#i1-" in queue_and_holes
    page = render_html(doc)
    assert all(f'id="hole-{h.id}"' in page for h in holes()) and "needs an erratum" in page


def test_docs_matrix_lists_every_hole_and_what_was_swept() -> None:
    text = (ROOT / "docs" / "matrix.md").read_text("utf-8")
    section = text.split("## Interop holes", 1)[1].split("\n## ", 1)[0]
    assert all(f"| {h.id} {h.title} | {h.suite} ({h.erratum}) |" in section for h in holes())
    swept = table()["swept"]
    assert all(f"{name} {s['classes']} classes of {s['fields']} fields" in section for name, s in swept.items() if "classes" in s)


def test_the_script_checks_and_lists_every_candidate_judged() -> None:
    import subprocess
    import sys

    script = str(ROOT / "scripts" / "interop_holes.py")
    check = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    listed = subprocess.run([sys.executable, script, "--candidates"], capture_output=True, text=True, timeout=300)
    lines = listed.stdout.splitlines()
    assert listed.returncode == 0 and lines and not [line for line in lines if line.startswith("NOT JUDGED")]
    assert any(line.split()[:2] == ["IH1", "memoryai"] and "chunk.content_hash:upper_hex" in line for line in lines)
    assert any(line.startswith("rejected ") for line in lines)
