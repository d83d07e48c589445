"""`memconform translate`: every reference fixture into every other format is valid under its suite, with a
ledger valid under its schema; limits split, truncate or refuse as the tables say; MemoRizz declares losses."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from memconform.cli.main import main
from memconform.portability.formats import formats
from memconform.portability.matrix import sample_files
from memconform.portability.translate import dump, load, read, translate
from memconform.portability.validation import problems
from memconform.suites.memoryai import format as mai

ROOT = Path(__file__).resolve().parents[1]
LEDGER_SCHEMA = json.loads((ROOT / "harness" / "schemas" / "ledger.schema.json").read_text(encoding="utf-8"))
CASES = [(fmt, path) for fmt in formats() for path in sample_files(fmt)]


@pytest.mark.parametrize(("fmt", "path"), CASES, ids=[f"{f}/{p.name}" for f, p in CASES])
def test_every_fixture_translates_into_every_other_format(fmt, path):
    source, doc = load(path)
    assert source == fmt
    for target in formats():
        if target == fmt:
            continue
        tr = translate(doc, source, target)
        assert tr.refused is None, f"{fmt} -> {target}: {tr.refused}"
        assert problems(target, tr.output) == [], "the output passed once and must pass again"
        ledger = tr.ledger.to_json()
        jsonschema.validate(ledger, LEDGER_SCHEMA)
        live = [r for r in tr.canonical.records if not r.get("deleted")]
        assert len(read(target, tr.output).records) >= len(live)
        assert ledger["records"]["in"] == len(tr.canonical.records)


def _bundle(**chunk_fields):
    chunk = {"id": 7, "content": "c", "content_hash": mai.content_hash("c"), "memory_type": "fact", "metadata": {}}
    chunk.update(chunk_fields)
    if "content" in chunk_fields:
        chunk["content_hash"] = mai.content_hash(chunk["content"])
    return mai.seal({"format": "memoryai-bundle", "version": 1, "generator": "t/1", "exported_at": "2026-01-01T00:00:00Z",
                     "manifest": {"scope": "full", "embedding_model": "m", "embedding_dim": 2}, "chunks": [chunk]})


def test_amps_text_over_500_is_cut_and_declared_lost():
    tr = translate(_bundle(content="x" * 501), "memoryai", "amps")
    assert tr.output["atoms"][0]["text"] == "x" * 500
    assert tr.ledger.status("7", "text") == "lost"
    assert {"field": "text", "status": "lost", "count": 1, "details": {"cut to 500 characters": 1}} in tr.ledger.to_json()["fields"]


def test_omp_text_over_10000_is_split_and_joined_on_reading():
    text = "ab" * 7_500
    tr = translate(_bundle(content=text), "memoryai", "omp")
    contents = [m["content"] for m in tr.output["memories"]]
    assert len(contents) == 2 and all(len(c) <= 10_000 for c in contents) and "".join(contents) == text
    back = read("omp", tr.output)
    assert len(back.records) == 1 and back.records[0].get("text") == text
    assert tr.ledger.status("7", "text") == "kept"


def test_omp_metadata_over_nine_keys_moves_into_the_hatch():
    metadata = {f"k{i}": i for i in range(12)}
    tr = translate(_bundle(metadata=metadata), "memoryai", "omp")
    mem = tr.output["memories"][0]
    assert list(mem["metadata"]) == ["memconform_port"]
    assert tr.ledger.status("7", "extensions") == "carried"
    assert read("omp", tr.output).records[0].get("extensions")["value"] == metadata


def test_embedding_is_lost_into_amps_and_memorizz_and_declared_there():
    bundle = _bundle(embedding=mai.encode_embedding([0.5, -1.0]))
    amps = translate(bundle, "memoryai", "amps")
    assert amps.ledger.status("7", "embedding") == "lost"
    assert "embedding" not in amps.output["atoms"][0]["x-provider"]["memconform_port"]["fields"]
    mz = translate(bundle, "memoryai", "memorizz")
    assert mz.ledger.status("7", "embedding") == "lost"
    assert "embedding" in mz.output["manifest"]["omitted_fields"]
    assert any("embedding lost for 1 record" in w for w in mz.output["manifest"]["warnings"])
    assert mz.ledger.declared_in_target == ["manifest.omitted_fields", "manifest.warnings"]


def test_dna_by_zone_travels_through_omp_and_comes_back_native():
    bundle = _bundle(zone="critical")
    omp = translate(bundle, "memoryai", "omp")
    assert omp.ledger.status("7", "dna") == "carried"
    assert read("omp", omp.output).records[0].get("dna") is True
    back = translate(omp.output, "omp", "memoryai")
    chunk = back.output["chunks"][0]
    assert chunk["zone"] == "critical" and mai.is_dna(chunk)


def test_a_dna_record_without_its_protection_fields_is_pinned_in_memoryai():
    emp_line = {"v": "1.0", "id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c92", "ts": 1000, "src": "com.example.a", "content": "x",
                "meta": {"memconform_port": {"v": 1, "fields": {"dna": True}}}}
    tr = translate(json.dumps(emp_line) + "\n", "emp", "memoryai")
    chunk = tr.output["chunks"][0]
    assert chunk["is_pinned"] is True and mai.is_dna(chunk)


def test_an_emp_tombstone_stays_deleted():
    path = ROOT / "fixtures" / "emp" / "valid" / "tombstone-and-update.json"
    _, doc = load(path)
    for target in ("memoryai", "omp", "memorizz", "amps"):
        tr = translate(doc, "emp", target)
        assert read(target, tr.output).records == []
        assert tr.ledger.status("6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c92", "deleted") == "lost"


def test_a_live_record_typed_tombstone_is_not_written_as_a_tombstone():
    bundle = _bundle(memory_type="x_tombstone", metadata={"deleted": True})
    tr = translate(bundle, "memoryai", "emp")
    rec = read("emp", tr.output).records[0]
    assert not rec.get("deleted") and rec.get("type") == "tombstone"
    assert rec.get("extensions")["value"] == {"deleted": True}


def test_an_output_that_fails_a_must_check_is_refused_not_written(tmp_path):
    """A token-shaped secret in an atom's text: AMPS holds it, a MemoryAI bundle MUST NOT (§6); text is never cut."""
    _, doc = load(ROOT / "fixtures" / "amps" / "valid" / "linked-complete.json")
    doc["atoms"][0]["text"] = "the deploy key is sk-abcdefgh12345678"
    tr = translate(doc, "amps", "memoryai")
    assert tr.output is None and "no_credentials_in_bundle" in (tr.refused or "")
    assert translate(doc, "amps", "emp").output is not None, "the control: EMP has no such rule"
    src = tmp_path / "a.json"
    src.write_text(json.dumps(doc))
    assert main(["translate", str(src), "--to", "memoryai", "--out", str(tmp_path / "o.json")]) == 1
    assert not (tmp_path / "o.json").exists()


def test_cli_translate_writes_output_and_ledger(tmp_path, capsys):
    src = ROOT / "fixtures" / "amps" / "valid" / "linked-complete.json"
    out, ledger = tmp_path / "out.jsonl", tmp_path / "ledger.json"
    assert main(["translate", str(src), "--to", "emp", "--out", str(out), "--ledger", str(ledger)]) == 0
    assert "amps -> emp: 3 records in, 3 out" in capsys.readouterr().out
    jsonschema.validate(json.loads(ledger.read_text()), LEDGER_SCHEMA)
    assert main(["validate", str(out)]) == 0
    assert dump("emp", load(out)[1]).count("\n") == 3


def test_cli_portability_writes_markdown_and_html(tmp_path):
    md, page = tmp_path / "m.md", tmp_path / "m.html"
    assert main(["portability", "--md", str(md), "--html", str(page)]) == 0
    text = md.read_text()
    assert "| from \\ to | memoryai | omp | memorizz | amps | emp |" in text
    assert text.count("\n| **") == 5
    assert "<table>" in page.read_text()


def test_a_credential_named_field_is_left_out_of_a_bundle_and_declared():
    from memconform.suites.memorizz import format as mz

    archive = mz.empty_archive(created_at="2026-05-01T12:00:00+00:00")
    archive["stores"]["knowledge_base"].append({"id": "r1", "data": {"content": "c", "extra": {"CREDENTIAL": 1, "ok": 2}}})
    tr = translate(mz.seal(archive), "memorizz", "memoryai")
    assert tr.refused is None
    assert "CREDENTIAL" not in json.dumps(tr.output)
    assert tr.ledger.status("knowledge_base/r1", "extensions") == "lost"
    assert read("memoryai", tr.output).records[0].get("extensions")["value"] == {"extra": {"ok": 2}}


def test_over_the_archive_record_limit_the_translation_is_refused(monkeypatch):
    """The memorizz table refuses an archive over its record limit (100,000 by default; 1 here, to keep it fast)."""
    from memconform.portability.tables import Table

    original = Table.limit
    monkeypatch.setattr(Table, "limit", lambda self, name, key: 1 if (self.format, name, key) == ("memorizz", "id", "max_items")
                        else original(self, name, key))
    _, doc = load(ROOT / "fixtures" / "amps" / "valid" / "linked-complete.json")
    tr = translate(doc, "amps", "memorizz")
    assert tr.output is None and "over the archive limit of 1" in (tr.refused or "")
    assert translate(doc, "amps", "omp").output is not None
