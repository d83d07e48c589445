"""Producer rules the interop sweep found too lenient (issue 35, producers): each rule fails the value the spec
forbids, with the sentence that forbids it, and the same document repaired passes (its positive control).

MemoryAI `validate`: a later `version` than this protocol's, a blank `generator`; `embedding_dim` 0 accepted as the
domain table says (errata I4). OMP export documents: `embedding` (§2.1), `source.session_id` and
`source.user_id` (§2.3) judged over their whole domain."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.document_run import validate_document
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.interop import base_bundle

ROOT = Path(__file__).resolve().parents[1]
_ABSENT = object()


def _results(doc: Any, suite: str) -> dict[str, Any]:
    return {r.check_id: r for r in validate_document(doc, suite, Profile.named("ci"))}


def _bundle(**envelope: Any) -> dict[str, Any]:
    """The sweep's valid bundle with envelope (or manifest.<name>) values set, sealed again."""
    bundle = copy.deepcopy(base_bundle())
    for name, value in envelope.items():
        owner, key = (bundle["manifest"], name[len("manifest_"):]) if name.startswith("manifest_") else (bundle, name)
        if value is _ABSENT:
            owner.pop(key, None)
        else:
            owner[key] = value
    return memoryai.seal(bundle)


def test_the_base_bundle_passes_every_memoryai_document_check() -> None:
    """The positive control of every MemoryAI case below: nothing but the value under test differs."""
    results = _results(_bundle(), "memoryai")
    assert {c: r.outcome for c, r in results.items() if r.outcome is not Outcome.PASSED} == {}


# ---- MemoryAI version: an integer >= 1 (§3.1) that is this protocol's own (§7) -------------------------------

@pytest.mark.parametrize("version", [2, 999, 2**63])
def test_a_later_version_fails_with_the_sentences_that_forbid_it(version: int) -> None:
    result = _results(_bundle(version=version), "memoryai")["memoryai.envelope_version_integer"]
    assert result.outcome is Outcome.FAILED and result.blocking
    failure = result.failures[0]
    assert failure.path == "$.version" and failure.received == version and failure.expected == memoryai.MAX_VERSION
    assert "This document is **MemoryAI Protocol v1**" in failure.detail
    assert "A consumer MUST reject a Bundle whose `version` is greater than the maximum it supports." in failure.detail


@pytest.mark.parametrize("version", [0, -1, 1.0, 1.5, True, "1", None, _ABSENT])
def test_a_version_that_is_no_integer_at_least_one_fails_as_before(version: Any) -> None:
    result = _results(_bundle(version=version), "memoryai")["memoryai.envelope_version_integer"]
    assert result.outcome is Outcome.FAILED
    assert result.failures[0].title.startswith("version is not an integer >= 1")


def test_version_one_passes() -> None:
    assert _results(_bundle(version=1), "memoryai")["memoryai.envelope_version_integer"].outcome is Outcome.PASSED


# ---- MemoryAI generator: "<implementation-name>/<version>" (§3), optional -------------------------------------

@pytest.mark.parametrize("generator", ["", " ", "\t\n", "\u3000"])
def test_a_blank_generator_is_warned_with_the_shape_quoted(generator: str) -> None:
    result = _results(_bundle(generator=generator), "memoryai")["memoryai.envelope_optional_fields"]
    assert result.outcome is Outcome.FAILED and not result.blocking  # SHOULD: the optional envelope fields (errata E20)
    assert [f.path for f in result.failures] == ["$.generator"]
    assert '"generator": "<implementation-name>/<version>",' in result.failures[0].detail


@pytest.mark.parametrize("generator", [_ABSENT, "someone/1.2.3", "memconform", "x", "名前/1 🧠", "bell\u0007/1"])
def test_a_generator_that_names_something_passes(generator: Any) -> None:
    """Absent (optional), the shape, and any other non-blank string, taken as a name (errata E20)."""
    result = _results(_bundle(generator=generator), "memoryai")["memoryai.envelope_optional_fields"]
    assert result.outcome is Outcome.PASSED, result.failures


# ---- MemoryAI embedding_dim: "<integer>", tied only to the length of embeddings (§3.5) ------------------------

@pytest.mark.parametrize("dim", [0, 1, 4, 384, 9007199254740993])
def test_a_non_negative_integer_dimension_passes_zero_included(dim: int) -> None:
    """0 with no embeddings: the spec gives no minimum (interop hole I4), and the domain table says open."""
    results = _results(_bundle(manifest_embedding_dim=dim), "memoryai")
    assert results["memoryai.manifest_required_fields"].outcome is Outcome.PASSED


@pytest.mark.parametrize("dim", [-1, 4.0, "4", None, True, _ABSENT])
def test_a_dimension_that_is_no_length_fails(dim: Any) -> None:
    results = _results(_bundle(manifest_embedding_dim=dim), "memoryai")
    assert results["memoryai.manifest_required_fields"].outcome is Outcome.FAILED


def test_an_embedding_against_dimension_zero_fails_its_length_rule() -> None:
    """0 is accepted only as "no embeddings": an embedding of 4 floats under it breaks §3.5's length rule."""
    bundle = copy.deepcopy(base_bundle())
    bundle["manifest"]["embedding_dim"] = 0
    bundle["chunks"][0]["embedding"] = memoryai.encode_embedding([0.25, 0.5, 0.75, 1.0])
    results = _results(memoryai.seal(bundle), "memoryai")
    assert results["memoryai.embedding_length_matches_dim"].outcome is Outcome.FAILED
    assert results["memoryai.manifest_required_fields"].outcome is Outcome.PASSED


@pytest.mark.parametrize("field_id", ["bundle.format", "bundle.version", "manifest.embedding_dim", "bundle.generator"])
def test_the_domain_table_and_the_validator_agree(field_id: str) -> None:
    """One source of truth for the envelope fields of issue 35: every class the MemoryAI domain table calls invalid is
    refused by `validate` (a MUST check), every valid one passes every check; open ones may go either way. (Not every
    field: the table is written from the consumer's side, and counts, say, are a producer's duty alone.)"""
    from memconform.kit import domain
    from memconform.matrix.interop_sweep import judge_document
    from memconform.suites.memoryai.interop import pairing

    field = next(f for f in domain.required("memoryai").fields if f.id == field_id)
    wrong = []
    for vc in field.classes:
        verdicts = {judge_document("memoryai", doc)[0] for doc in pairing().documents(field, vc)}
        if vc.expect == "invalid" and verdicts != {"refused"} or vc.expect == "valid" and verdicts != {"accepted"}:
            wrong.append((vc.id, vc.expect, verdicts))
    assert wrong == []


def test_the_table_calls_embedding_dim_zero_open_under_erratum_i4() -> None:
    from memconform.kit import domain

    field = next(f for f in domain.required("memoryai").fields if f.id == "manifest.embedding_dim")
    zero = next(vc for vc in field.classes if vc.id == "beyond_minimum")
    assert (zero.expect, json.loads(zero.args["text"])) == ("open", 0) and "I4" in zero.why


# ---- OMP export documents: embedding?: number[] (§2.1), source.session_id? / user_id?: string (§2.3) ---------

OMP_SAMPLE = ROOT / "suites" / "omp" / "portability" / "omp-export.json"


def _export(**changes: Any) -> dict[str, Any]:
    """The sample export with its second memory (embedding, session_id and user_id all set) changed."""
    doc = json.loads(OMP_SAMPLE.read_text(encoding="utf-8"))
    mem = next(m for m in doc["memories"] if "embedding" in m and "session_id" in m["source"])
    for name, value in changes.items():
        owner, key = (mem["source"], name[len("source_"):]) if name.startswith("source_") else (mem, name)
        if value is _ABSENT:
            owner.pop(key, None)
        else:
            owner[key] = value
    return doc


def test_the_sample_export_sets_every_field_under_test_and_passes_every_document_check() -> None:
    doc = _export()
    mem = next(m for m in doc["memories"] if "embedding" in m)
    assert isinstance(mem["embedding"], list) and {"session_id", "user_id"} <= set(mem["source"])
    results = _results(doc, "omp")
    assert "omp.export_document_embedding" in results
    assert {c: r.outcome for c, r in results.items() if r.outcome is not Outcome.PASSED} == {}


@pytest.mark.parametrize("embedding", [
    _ABSENT, None,  # optional; null read as absent (errata O37)
    [], [0.5], [0.25, -0.5, 0.125], [1, 2, 3], [-0.0, 0], [1e308, 1e-308, 5e-324], [9007199254740993], [0.1] * 4096,
], ids=lambda v: "absent" if v is _ABSENT else repr(v)[:30])
def test_an_embedding_of_numbers_or_none_passes(embedding: Any) -> None:
    """Any length (the dimensions are the implementation's: [] and 1e308 are interop hole I6, open to a consumer)."""
    result = _results(_export(embedding=embedding), "omp")["omp.export_document_embedding"]
    assert result.outcome is Outcome.PASSED, result.failures


@pytest.mark.parametrize(("embedding", "path"), [
    ("0.25,-0.5", ""), ({"0": 0.25}, ""), (0.25, ""), (True, ""), ("", ""),
    (["a", "b"], "[0]"), (["0.25"], "[0]"), ([True, False], "[0]"), ([0.5, None], "[1]"), ([[0.5]], "[0]"),
    ([0.5, "x", 0.5], "[1]"), ([{"v": 1}], "[0]"), ([float("nan")], "[0]"), ([0.5, float("inf")], "[1]"),
], ids=repr)
def test_an_embedding_that_is_no_number_array_fails_with_the_sentence(embedding: Any, path: str) -> None:
    result = _results(_export(embedding=embedding), "omp")["omp.export_document_embedding"]
    assert result.outcome is Outcome.FAILED and result.blocking
    [failure] = result.failures
    assert failure.path.endswith(".embedding" + path), failure.path
    assert "embedding?: number[] // Vector embedding of content (implementation-defined dimensions)" in failure.detail


@pytest.mark.parametrize("field", ["session_id", "user_id"])
@pytest.mark.parametrize("value", [_ABSENT, None, "", "s-42", "Session 🚀 #1", "x" * 10_000],
                         ids=lambda v: "absent" if v is _ABSENT else repr(v)[:20])
def test_an_optional_source_string_passes_absent_null_or_any_string(field: str, value: Any) -> None:
    """Absent; null read as absent (errata O37, interop hole I3); "" (no minimum); any string (no maximum)."""
    result = _results(_export(**{f"source_{field}": value}), "omp")["omp.export_document_source_object"]
    assert result.outcome is Outcome.PASSED, result.failures


@pytest.mark.parametrize("field", ["session_id", "user_id"])
@pytest.mark.parametrize("value", [42, 0, 1.5, True, False, ["s-42"], {"id": "s-42"}, []], ids=repr)
def test_a_source_id_of_another_type_fails_with_its_sentence(field: str, value: Any) -> None:
    result = _results(_export(**{f"source_{field}": value}), "omp")["omp.export_document_source_object"]
    assert result.outcome is Outcome.FAILED and result.blocking
    [failure] = result.failures
    assert failure.path.endswith(f".source.{field}") and failure.received == value
    sentence = {"session_id": "session_id?: string // Optional session/conversation ID from the source tool",
                "user_id": "user_id?: string // Optional user identifier within the source tool"}[field]
    assert sentence in failure.detail


def test_both_source_ids_wrong_are_both_named() -> None:
    result = _results(_export(source_session_id=1, source_user_id=2), "omp")["omp.export_document_source_object"]
    assert sorted(f.path.rsplit(".", 1)[1] for f in result.failures) == ["session_id", "user_id"]


def test_the_omp_checks_now_name_the_sentences_of_the_fields_they_read() -> None:
    """The requirement map ties each sentence to the document check that reads it (the interop sweep's producer side)."""
    statements = {s["quote"]: s for s in json.loads((ROOT / "suites" / "omp" / "requirements.json").read_text("utf-8"))["statements"]}
    assert "omp.export_document_embedding" in statements[
        "embedding?: number[] // Vector embedding of content (implementation-defined dimensions)"]["checks"]
    for quote in ("session_id?: string // Optional session/conversation ID from the source tool",
                  "user_id?: string // Optional user identifier within the source tool"):
        assert "omp.export_document_source_object" in statements[quote]["checks"]


@pytest.mark.parametrize("server", ["", "  "])
def test_a_blank_source_producer_is_not_written_as_the_bundle_generator(server: str) -> None:
    """translate to MemoryAI writes memconform-port/1 where the source names its producer with a blank string (which
    the generator rule warns), and the ledger says the blank producer was lost; a named one is kept as it was."""
    from memconform.portability.translate import translate

    for producer, written, status in ((server, "memconform-port/1", "lost"), ("omp-reference-server", "omp-reference-server", "kept")):
        doc = json.loads(OMP_SAMPLE.read_text(encoding="utf-8"))
        doc["server"] = producer
        tr = translate(doc, "omp", "memoryai")
        assert tr.output is not None and tr.output["generator"] == written, tr.ledger.refused
        assert ("producer", status) in tr.ledger.document
        assert not [w for w in tr.ledger.warnings if "envelope_optional_fields" in w], tr.ledger.warnings


@pytest.mark.parametrize("field_id", ["memory.embedding", "memory.source.session_id", "memory.source.user_id"])
def test_the_omp_domain_table_and_the_export_document_checks_agree(field_id: str) -> None:
    """Each class the OMP domain table calls invalid (a wrong type among them) is refused in an export document, each
    valid one passes; open ones (null, [], 1e308, "") may go either way."""
    from memconform.kit import domain
    from memconform.matrix.interop_sweep import judge_document
    from memconform.suites.omp.interop import pairing

    field = next(f for f in domain.required("omp").fields if f.id == field_id)
    assert any(vc.expect == "invalid" for vc in field.classes) and any(vc.expect == "valid" for vc in field.classes)
    wrong = []
    for vc in field.classes:
        verdicts = {judge_document("omp", doc)[0] for doc in pairing().documents(field, vc)}
        if vc.expect == "invalid" and verdicts != {"refused"} or vc.expect == "valid" and verdicts != {"accepted"}:
            wrong.append((vc.id, vc.expect, verdicts))
    assert wrong == []
