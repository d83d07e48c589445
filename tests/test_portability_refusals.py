"""What used to refuse a whole translation, or end in an internal error, is now translated record by record
with a ledger line (issue 32 item 3, issue 31 items 8 and 10): a leap second, a date before 1970, duplicate
ids, lone surrogates, numbers beyond the double range, an EMP ts no date-time holds; an output over its
format's own size limit is refused with the limit named; a hatch block cannot rewrite what a record shows."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.portability.formats import formats
from memconform.portability.ledger_truth import judge_ledger, records
from memconform.portability.translate import load, read, translate
from memconform.portability.validation import problems
from memconform.suites.memoryai import format as mai

ROOT = Path(__file__).resolve().parents[1]


def _fixture(fmt: str, name: str):
    return copy.deepcopy(load(ROOT / "fixtures" / fmt / "valid" / name, fmt)[1])


def _all_targets(source: str, doc):
    """Every other format: written, valid, and every ledger line true."""
    out = {}
    for target in formats():
        if target == source:
            continue
        tr = translate(doc, source, target)
        assert tr.output is not None, f"{source} -> {target} refused: {tr.refused}"
        assert problems(target, tr.output) == []
        assert judge_ledger(source, doc, target, tr.output, tr.ledger.to_json()).false == []
        out[target] = tr
    return out


def test_a_leap_second_is_translated_kept_where_the_target_holds_it_and_carried_elsewhere():
    doc = _fixture("amps", "linked-complete.json")
    doc["atoms"][0]["created_at"] = doc["atoms"][0]["valid_from"] = "2016-12-31T23:59:60Z"
    for target, tr in _all_targets("amps", doc).items():
        rid = doc["atoms"][0]["atom_id"]
        if target == "omp":  # OMP's checks accept RFC 3339's leap second: written as it is
            assert tr.ledger.status(rid, "created_at") == "kept"
            assert tr.output["memories"][0]["created_at"] == "2016-12-31T23:59:60Z"
        elif target == "memoryai":
            assert tr.ledger.status(rid, "created_at") == "carried", target
            details = {d for (name, _), c in tr.ledger.details.items() if name == "created_at" for d in c}
            assert any("leap second" in d for d in details), target
        back = translate(tr.output, target, "amps")
        assert back.output is not None, back.refused
        came = {a["atom_id"]: a for a in back.output["atoms"]}
        assert came[rid]["created_at"].startswith("2016-12-31T23:59:60"), f"{target}: the leap second came back as " \
                                                                           f"{came[rid]['created_at']}"


def test_a_date_before_1970_does_not_refuse_a_memoryai_to_emp_translation():
    doc = _fixture("memoryai", "full_bundle_all_sections.json")
    doc["chunks"][0]["created_at"] = "1969-07-20T20:17:40Z"
    doc = mai.seal(doc)
    trs = _all_targets("memoryai", doc)
    emp = trs["emp"]
    rid = str(doc["chunks"][0]["id"])
    line = next(json.loads(x) for x in emp.output.splitlines() if json.loads(x)["id"] == emp.ledger.id_map[rid][0])
    assert line["ts"] >= 0
    back = translate(emp.output, "emp", "memoryai")
    assert back.output is not None, back.refused
    got = [c for c in back.output["chunks"] if c["content"] == doc["chunks"][0]["content"]]
    assert got and got[0]["created_at"] == "1969-07-20T20:17:40Z"


def test_an_amps_date_before_1970_reaches_emp_with_ts_0_and_the_exact_time_carried():
    doc = _fixture("amps", "linked-complete.json")
    doc["atoms"][0]["created_at"] = doc["atoms"][0]["valid_from"] = "1969-07-20T20:17:40Z"
    tr = _all_targets("amps", doc)["emp"]
    rid = doc["atoms"][0]["atom_id"]
    assert tr.ledger.status(rid, "updated_at") in (None, "invented")  # AMPS has no updated_at: ts made from created_at
    assert tr.ledger.status(rid, "created_at") == "carried"


@pytest.mark.parametrize("source", ["amps", "memoryai"])
def test_duplicate_ids_are_translated_each_under_a_name_of_its_own(source):
    if source == "amps":
        doc = _fixture("amps", "linked-complete.json")
        twin = copy.deepcopy(doc["atoms"][0])
        twin["text"] = "a second atom with the first one's id"
        doc["atoms"].append(twin)
        own = twin["atom_id"]
    else:
        doc = _fixture("memoryai", "full_bundle_all_sections.json")
        twin = copy.deepcopy(doc["chunks"][0])
        twin["content"] = "a second chunk with the first one's id"
        twin["content_hash"] = mai.content_hash(twin["content"])
        doc["chunks"].append(twin)
        doc = mai.seal(doc)
        own = str(twin["id"])
    trs = _all_targets(source, doc)
    for target, tr in trs.items():
        second = f"{own} (#2 of that id)"
        assert second in tr.ledger.id_map and own in tr.ledger.id_map, target
        assert tr.ledger.id_map[second] != tr.ledger.id_map[own]
        assert tr.ledger.status(second, "id") == "carried"
        assert any("appears 2 times" in w for w in tr.ledger.warnings)
        texts = [s.fields.get("text") for s in records(target, tr.output).values()]
        assert twin.get("text", twin.get("content")) in texts, f"{target}: the second record was merged away"


def test_lone_surrogates_through_the_cli_are_a_ledger_line_not_an_internal_error(tmp_path, capsys):
    doc = _fixture("amps", "linked-complete.json")
    text = json.dumps(doc).replace('"text": "', '"text": "\\ud800 ', 1)
    src = tmp_path / "a.json"
    src.write_text(text, encoding="ascii")
    for target in ("memoryai", "omp", "memorizz", "emp"):
        out = tmp_path / f"o.{target}"
        assert main(["translate", str(src), "--to", target, "--out", str(out), "--ledger", str(tmp_path / "l.json")]) == 0
        written = out.read_bytes().decode("utf-8")  # strict: no surrogate reached the file
        assert "\ufffd" in written
        ledger = json.loads((tmp_path / "l.json").read_text(encoding="utf-8"))
        assert any(r["field"] == "text" and r["status"] == "lost" and "U+FFFD" in " ".join(r["details"])
                   for r in ledger["fields"])
    assert "internal error" not in capsys.readouterr().err


@pytest.mark.parametrize("number", ["1e999999", "-1e999999"])
def test_a_number_beyond_the_double_range_is_lost_with_a_line_not_written_as_infinity(tmp_path, number):
    doc = _fixture("amps", "linked-complete.json")
    doc["atoms"][0]["x-provider"] = {"weight": 12345}
    src = tmp_path / "a.json"
    src.write_text(json.dumps(doc).replace("12345", number), encoding="utf-8")
    for target in ("memoryai", "omp", "memorizz", "emp"):
        out = tmp_path / f"o.{target}"
        assert main(["translate", str(src), "--to", target, "--out", str(out), "--ledger", str(tmp_path / "l.json")]) == 0
        text = out.read_text(encoding="utf-8")
        assert "Infinity" not in text and "NaN" not in text
        ledger = json.loads((tmp_path / "l.json").read_text(encoding="utf-8"))
        assert any(r["field"] == "extensions" and r["status"] == "lost" for r in ledger["fields"]), target


def test_an_emp_ts_no_date_time_can_hold_is_carried_not_dropped():
    line = {"v": "1.0", "id": "00000000-0000-4000-8000-000000000001", "ts": 1e21, "src": "com.example.app",
            "content": "far future"}
    doc = json.dumps(line) + "\n"
    for target in ("memoryai", "omp", "memorizz", "amps"):
        tr = translate(doc, "emp", target)
        if tr.output is None:  # refused only when the source itself is not valid EMP
            assert "does not pass" in (tr.refused or "") and target == "memoryai" or pytest.fail(tr.refused)
            continue
        assert tr.ledger.status(line["id"], "updated_at") == "carried", target
        back = translate(tr.output, target, "emp")
        assert back.output is not None
        written = json.loads(back.output.splitlines()[0])
        # the line's ts is the writer's own, an integer of milliseconds (1e21 reads back as a float); the value
        # itself travels in the port hatch and the record read back holds it exactly, which the ledger says
        assert isinstance(written["ts"], int) and written["ts"] != 1e21, (target, written["ts"])
        assert written["meta"]["memconform_port"]["fields"]["updated_at"] == 1e21, target
        assert read("emp", back.output).records[0].get("updated_at") == 1e21, target
        (source_id,) = [k for k, ids in back.ledger.id_map.items() if line["id"] in ids]
        assert back.ledger.status(source_id, "updated_at") == "carried", target


def test_an_archive_over_the_memorizz_size_limit_is_refused_with_the_limit_named(monkeypatch):
    from memconform.core.options import Options
    from memconform.suites.memorizz import options

    smaller = [dataclasses.replace(o, default="256KiB") if o.name == "max_bytes" else o for o in options.OPTIONS]
    monkeypatch.setattr(options, "OPTIONS", Options(*smaller))
    doc = _fixture("amps", "linked-complete.json")
    small = translate(doc, "amps", "memorizz")
    assert small.output is not None, "the control: a small archive is written"
    doc["atoms"] += [dict(copy.deepcopy(doc["atoms"][0]), atom_id=f"a{i}", text="x" * 400) for i in range(700)]
    tr = translate(doc, "amps", "memorizz")
    assert tr.output is None and "256KiB" in (tr.refused or "") and "bytes" in tr.refused


def test_a_hatch_block_cannot_rewrite_what_a_record_shows_and_what_it_restores_is_named():
    doc = json.loads((ROOT / "suites" / "omp" / "portability" / "omp-export.json").read_text(encoding="utf-8"))
    mem = doc["memories"][0]
    shown = mem["content"]
    mem["metadata"] = {"memconform_port": {"v": 1, "fields": {"text": "forged content", "tags": ["forged"],
                                                              "confidence": 0.25},
                                           "invented": ["text"]}}
    for target in ("amps", "memoryai", "emp", "memorizz"):
        tr = translate(doc, "omp", target)
        assert tr.output is not None, tr.refused
        texts = [s.fields.get("text") for s in records(target, tr.output).values()]
        assert shown in texts and "forged content" not in texts, target
        assert any("contradicts" in w and "text" in w for w in tr.ledger.warnings), target
        assert tr.ledger.restored.get(mem["id"]) == ["confidence"], "the one restored field is named"
        assert "restored from the source's memconform_port block: confidence" in tr.ledger.summary()


def test_cli_errors_are_one_line_exit_2(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="ascii")
    for args in (["translate", str(deep), "--to", "omp"], ["translate", str(deep), "--from", "amps", "--to", "omp"],
                 ["portability", "--md", str(tmp_path)]):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("memconform: error:") and err.count("\n") == 1 and "internal error" not in err, err
