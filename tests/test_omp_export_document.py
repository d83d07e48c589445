"""`memconform validate` judges an OMP export document (the GET /v1/export body): the envelope and the
§2.1 / §2.3 memory rules over every memory, ids unique across the export (issue 32 item 4). Every OMP
document `translate` writes from a fixture passes it; each rule fails the document planted to break it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.profile import Profile
from memconform.portability.formats import formats
from memconform.portability.matrix import sample_files
from memconform.portability.translate import dump, load, translate
from memconform.run.document_run import validate_document

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "suites" / "omp" / "portability" / "omp-export.json"


def _verdicts(doc) -> dict[str, str]:
    return {r.check_id: r.outcome.value for r in validate_document(doc, "omp", Profile.named("ci"))}


def test_the_sample_export_passes_every_document_check():
    verdicts = _verdicts(json.loads(SAMPLE.read_text(encoding="utf-8")))
    assert len(verdicts) >= 6 and set(verdicts.values()) == {"passed"}, verdicts


def _sample() -> dict:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def _plant(change) -> dict:
    doc = _sample()
    change(doc)
    return doc


PLANTED = {
    "omp.export_document_envelope": [lambda d: d.pop("omp_version"), lambda d: d.update(exported_at="yesterday"),
                                     lambda d: d.update(server=3), lambda d: d.update(memories={})],
    "omp.export_document_memory_ids": [lambda d: d["memories"][0].update(id="mem_short"),
                                       lambda d: d["memories"][1].update(id=d["memories"][0]["id"])],
    "omp.export_document_content_and_type": [lambda d: d["memories"][0].update(content="x" * 10_001),
                                             lambda d: d["memories"][0].update(type="fact"),
                                             lambda d: d["memories"].append(7)],
    "omp.export_document_tags_namespace_metadata": [lambda d: d["memories"][0].update(tags=["t"] * 21),
                                                    lambda d: d["memories"][0].update(namespace="n" * 101),
                                                    lambda d: d["memories"][0].update(metadata={str(i): i for i in range(11)})],
    "omp.export_document_timestamps_utc": [lambda d: d["memories"][0].update(created_at="2026-13-01"),
                                           lambda d: d["memories"][0].pop("expires_at")],
    "omp.export_document_source_object": [lambda d: d["memories"][0].update(source="claude"),
                                          lambda d: d["memories"][0]["source"].pop("timestamp"),
                                          lambda d: d["memories"][1]["source"].update(session_id=42),
                                          lambda d: d["memories"][1]["source"].update(user_id={"id": "u-7"})],
    "omp.export_document_embedding": [lambda d: d["memories"][1].update(embedding=["a", "b"]),
                                      lambda d: d["memories"][1].update(embedding="0.25,-0.5")],
}


@pytest.mark.parametrize(("check", "n"), [(c, i) for c, changes in PLANTED.items() for i in range(len(changes))])
def test_each_rule_fails_the_document_planted_to_break_it(check, n):
    verdicts = _verdicts(_plant(PLANTED[check][n]))
    assert verdicts[check] == "failed", verdicts


def test_a_document_that_is_not_an_export_passes_no_memory_rule(tmp_path):
    """No vacuous pass: with --format omp, an array or an object without memories fails every check."""
    for doc in ([], {"omp_version": "0.1"}):
        verdicts = _verdicts(doc)
        assert set(verdicts.values()) == {"failed"}, (doc, verdicts)


def test_validate_names_an_omp_export_without_being_told(tmp_path, capsys):
    assert main(["validate", str(SAMPLE)]) == 0
    assert "omp valid" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_plant(PLANTED["omp.export_document_memory_ids"][1])), encoding="utf-8")
    assert main(["validate", str(bad)]) == 1


@pytest.mark.parametrize("source", [f for f in formats() if f != "omp"])
def test_memconform_validate_passes_every_omp_output_of_the_fixtures(source, tmp_path, capsys):
    written = 0
    for path in sample_files(source):
        fmt, doc = load(path, source)
        tr = translate(doc, fmt, "omp")
        assert tr.output is not None, f"{path.name}: {tr.refused}"
        out = tmp_path / f"{path.stem}.omp.json"
        out.write_text(dump("omp", tr.output), encoding="utf-8")
        assert main(["validate", str(out)]) == 0, f"{path.name}: {capsys.readouterr().out[-600:]}"
        written += 1
    assert written == len(sample_files(source)) > 0
    print(f"{source}: {written} OMP outputs validated")


def test_every_document_check_has_a_planted_failure():
    from memconform.core.registry import REGISTRY

    assert {c.id for c in REGISTRY.for_suite("omp") if c.kind == "document"} == set(PLANTED)
