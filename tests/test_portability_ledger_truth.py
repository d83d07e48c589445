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


@pytest.mark.parametrize("a", formats())
def test_every_ledger_line_of_every_second_hop_is_true(a):
    """A -> B -> C for every fixture of A (C may be A): the second ledger judged against B's output, whose
    escape-hatch blocks are part of its records (a value B carried is the record's value on the next hop)."""
    checked, false, written = 0, [], 0
    for name, _, b, first in _translations(a):
        for c in formats():
            if c == b:
                continue
            second = translate(first.output, b, c)
            assert second.output is not None, f"{name}: {a} -> {b} -> {c} refused: {second.refused}"
            written += 1
            verdict = judge_ledger(b, first.output, c, second.output, second.ledger.to_json())
            checked += verdict.checked
            false += [f"{name} via {a}: {line}" for line in verdict.false]
    print(f"{a} -> B -> C: {written} second hops, {checked} ledger lines checked, {len(false)} false")
    assert written >= 16 and checked > 200
    assert false == []


def _second_hop(a: str, b: str, c: str, fixture: str):
    _, first = _first(a, b, fixture)
    return first.output, translate(first.output, b, c)


def test_a_second_hop_line_about_a_carried_value_told_otherwise_is_found_false():
    """Positive controls for reading the block: a value that crossed B in the block and came out in C's own
    field is `kept`; told as lost, or with the ledger's `restored` claim taken away (the record's own field
    then speaks, and it shows another value), the line is false."""
    middle, second = _second_hop("memoryai", "memorizz", "omp", "full_bundle_all_sections.json")
    ledger = second.ledger.to_json()
    assert judge_ledger("memorizz", middle, "omp", second.output, ledger).false == []
    rid = next(r for r, names in ledger["restored"].items() if "type" in names and ledger["per_record"][r]["type"] == "kept")
    lied = copy.deepcopy(ledger)
    lied["per_record"][rid]["type"] = "lost"
    found = judge_ledger("memorizz", middle, "omp", second.output, lied).false
    assert len(found) == 1 and "type lost" in found[0]
    unclaimed = copy.deepcopy(ledger)
    unclaimed["restored"][rid].remove("type")
    found = judge_ledger("memorizz", middle, "omp", second.output, unclaimed).false
    assert len(found) == 1 and "type kept" in found[0] and f"source '{rid.split('/')[0]}'" in found[0]


def test_a_value_the_block_names_invented_is_no_value_of_the_source():
    """AMPS has no tags: AMPS -> OMP invents an empty tag list and says so in the block; OMP -> EMP must not
    call the list kept (the source record has no tags), and a ledger saying so is found false."""
    middle, second = _second_hop("amps", "omp", "emp", "linked-complete.json")
    ledger = second.ledger.to_json()
    assert judge_ledger("omp", middle, "emp", second.output, ledger).false == []
    rid, lines = next((r, lines) for r, lines in ledger["per_record"].items() if r != "(document)")
    assert "tags" not in lines or lines["tags"] != "kept"
    lied = copy.deepcopy(ledger)
    lied["per_record"][rid]["tags"] = "kept"
    found = judge_ledger("omp", middle, "emp", second.output, lied).false
    assert found and "tags kept" in found[0] and "the source has no tags" in found[0]


def test_a_leap_second_is_the_same_only_as_a_leap_second():
    from memconform.portability.ledger_truth import same

    assert same("valid_from", "2016-12-31T23:59:60.000Z", "2016-12-31T23:59:60Z")
    assert not same("valid_from", "2016-12-31T23:59:60Z", "2016-12-31T23:59:59Z")
    assert not same("valid_from", "2016-12-31T23:59:59Z", "2016-12-31T23:59:60Z")
    assert not same("valid_from", "2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z")
