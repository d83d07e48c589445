"""Every ledger line of every translation of every valid fixture, checked against the output by the
independent readers of harness/portability/ledger_truth.py (issue 32 item 1): the false-line count is 0."""

from __future__ import annotations

import copy

import pytest
from memconform.portability.formats import formats
from memconform.portability.ledger_truth import judge_ledger, records
from memconform.portability.matrix import sample_files
from memconform.portability.translate import load, translate


def _translations(a: str):
    for path in sample_files(a):
        fmt, doc = load(path, a)
        for b in formats():
            if b != a:
                yield path.name, doc, b, translate(doc, fmt, b)


@pytest.mark.parametrize("a", formats())
def test_every_ledger_line_of_every_fixture_is_true(a):
    checked, false, written = 0, [], 0
    for name, doc, b, tr in _translations(a):
        assert tr.output is not None, f"{name} -> {b} refused: {tr.refused}"
        written += 1
        verdict = judge_ledger(a, doc, b, tr.output, tr.ledger.to_json())
        checked += verdict.checked
        false += [f"{name}: {line}" for line in verdict.false]
    print(f"{a}: {written} translations, {checked} ledger lines checked, {len(false)} false")
    assert written >= 4 and checked > 50
    assert false == []


def _first(a: str, b: str, fixture: str):
    path = next(p for p in sample_files(a) if p.name == fixture)
    fmt, doc = load(path, a)
    return doc, translate(doc, fmt, b)


@pytest.mark.parametrize(("status", "into"), [("kept", "respelled"), ("respelled", "kept"), ("carried", "lost"),
                                              ("kept", "lost"), ("invented", "kept")])
def test_a_line_changed_to_another_status_is_found_false(status, into):
    """Positive controls: a ledger told a lie about one line, of each kind, is caught by the readers."""
    cases = [("memorizz", "amps", "every-store.json"), ("memoryai", "omp", "full_bundle_all_sections.json"),
             ("amps", "memoryai", "spec-worked-example.json"), ("amps", "emp", "linked-complete.json"),
             ("memorizz", "omp", "every-store.json"), ("emp", "amps", "spec-examples.json"), ("memorizz", "emp", None)]
    for a, b, fixture in cases:
        if fixture is None:
            doc = _textless()
            tr = translate(doc, a, b)
        else:
            doc, tr = _first(a, b, fixture)
        ledger = tr.ledger.to_json()
        for rid, lines in ledger["per_record"].items():
            if rid == "(document)":
                continue
            name = next((n for n, s in lines.items() if s == status and not n.startswith("+") and n != "dna"), None)
            if name is None:
                continue
            assert judge_ledger(a, doc, b, tr.output, ledger).false == []
            lied = copy.deepcopy(ledger)
            lied["per_record"][rid][name] = into
            found = judge_ledger(a, doc, b, tr.output, lied).false
            assert found and name in found[0], f"{a}->{b} {rid} {name}: {status} told as {into} went unseen"
            return
    pytest.fail(f"no fixture translation has a {status} line to tamper with")


def _textless():
    """every-store.json with its agent's text taken away and structured content in shared memory."""
    doc, _ = _first("memorizz", "omp", "every-store.json")
    doc = copy.deepcopy(doc)
    doc["stores"]["agents"][0]["data"].pop("content")
    doc["stores"]["shared_memory"][0]["data"]["content"] = {"blackboard": [1, 2]}
    from memconform.suites.memorizz import format as mz

    return mz.reseal(doc)


def test_memorizz_ids_in_amps_are_respelled_with_the_rule():
    doc, tr = _first("memorizz", "amps", "every-store.json")
    ledger = tr.ledger.to_json()
    row = next(r for r in ledger["fields"] if r["field"] == "id" and r["status"] == "respelled")
    assert any("<store>/<id>" in d for d in row["details"])
    assert all(lines["id"] == "respelled" for rid, lines in ledger["per_record"].items() if rid != "(document)")


def test_a_type_given_memoryais_prefix_is_respelled():
    doc, tr = _first("amps", "memoryai", "spec-worked-example.json")
    out = records("memoryai", tr.output)
    prefixed = [rid for rid, targets in tr.ledger.id_map.items() if out[targets[0]].fields["type"].startswith("x_")]
    assert prefixed and all(tr.ledger.status(rid, "type") == "respelled" for rid in prefixed)


def test_a_memorizz_record_without_text_gets_an_invented_text_and_keeps_its_structured_content():
    doc = _textless()
    for b in ("omp", "amps", "emp", "memoryai"):
        tr = translate(doc, "memorizz", b)
        assert tr.output is not None, tr.refused
        agent_key = "agents/" + doc["stores"]["agents"][0]["id"]
        assert tr.ledger.status(agent_key, "text") == "invented"
        assert judge_ledger("memorizz", doc, b, tr.output, tr.ledger.to_json()).false == []
        back = translate(tr.output, b, "memorizz")
        assert back.output is not None, back.refused
        stores = back.output["stores"]
        assert "content" not in stores["agents"][0]["data"], f"{b}: an empty content came back to a record that had none"
        assert stores["shared_memory"][0]["data"]["content"] == {"blackboard": [1, 2]}, b


def test_the_export_time_and_envelope_are_accounted_for():
    doc, tr = _first("memorizz", "emp", "every-store.json")
    document = {(r["field"], r["status"]) for r in tr.ledger.to_json()["document"]}
    assert ("exported_at", "lost") in document and ("producer", "lost") in document
    assert ("envelope.manifest.includes", "lost") in document
    doc, tr = _first("emp", "memoryai", "spec-examples.json")
    assert ("exported_at", "invented") in {(r["field"], r["status"]) for r in tr.ledger.to_json()["document"]}
    assert not tr.output["exported_at"].startswith("1970"), "a bundle from EMP is dated when it was made, not 1970"


def test_an_envelope_member_without_its_line_is_found():
    """Positive control for the envelope: drop the ledger's line for MemoRizz manifest.includes and it is missed."""
    doc, tr = _first("memorizz", "emp", "every-store.json")
    ledger = tr.ledger.to_json()
    assert judge_ledger("memorizz", doc, "emp", tr.output, ledger).false == []
    ledger["document"] = [r for r in ledger["document"] if r["field"] != "envelope.manifest.includes"]
    found = judge_ledger("memorizz", doc, "emp", tr.output, ledger).false
    assert found and "manifest.includes" in found[0]
    doc, _ = _first("omp", "amps", "omp-export.json")
    unknown = dict(copy.deepcopy(doc), **{"x-vendor-note": "kept nowhere"})  # OMP names no rule against it
    tr = translate(unknown, "omp", "amps")
    assert tr.output is not None, tr.refused
    assert ("envelope.x-vendor-note", "lost") in {(r["field"], r["status"]) for r in tr.ledger.to_json()["document"]}
    assert judge_ledger("omp", unknown, "amps", tr.output, tr.ledger.to_json()).false == []
