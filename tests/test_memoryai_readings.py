"""Every open point a MemoryAI check observes (ctx.observe, or a batch judge naming its point): each
reading's answer is recorded as that reading, and an answer fitting none fails without recording one.
Small fakes over the reference brain give each answer. The last test scans suites/memoryai for the points
observed and fails when one has no test here or in the files named in OTHER_TESTS."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.targets.base import Rejected
from readings_kit import ReadingRecorder

pytestmark = pytest.mark.slow  # each case runs a check against a fake (a second or so each)

OTHER_BRAIN = "python:memconform.suites.memoryai.reference.readings:OtherReadingsBrain"
MUTANTS = "python:memconform.suites.memoryai.mutants"


def _chunks(body: Any) -> list[Any]:
    chunks = body.get("chunks") if isinstance(body, dict) else None
    return chunks if isinstance(chunks, list) else []


def _edges(body: Any) -> list[Any]:
    edges = body.get("memory_edges") if isinstance(body, dict) else None
    return edges if isinstance(edges, list) else []


class RefusesInvalidChunks(ReferenceBrain):
    """E9 `refuse`: a bundle holding an invalid chunk is refused whole."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        dim = body.get("manifest", {}).get("embedding_dim") if isinstance(body, dict) and isinstance(body.get("manifest"), dict) else None
        if any(self._validate_chunk(ch, dim) is not None for ch in _chunks(body)):
            raise Rejected({"success": False, "error": "an invalid chunk"}, "invalid chunk")
        return super().import_bundle(body, **params)


class RefusesEmptyEdgeType(ReferenceBrain):
    """E61 `edge.edge_type:empty refused`."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(isinstance(e, dict) and e.get("edge_type") == "" for e in _edges(body)):
            raise Rejected({"success": False, "error": "empty edge_type"}, "empty edge_type")
        return super().import_bundle(body, **params)


class RefusesTagsNotArray(ReferenceBrain):
    """E42 `chunk.tags:not_array refused`."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(isinstance(ch, dict) and "tags" in ch and not isinstance(ch["tags"], list) for ch in _chunks(body)):
            raise Rejected({"success": False, "error": "tags is not an array"}, "bad tags")
        return super().import_bundle(body, **params)


class CrashesOnOpenClasses(ReferenceBrain):
    """Fits no reading: a server error on an empty edge_type and on tags that are no array."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(isinstance(e, dict) and e.get("edge_type") == "" for e in _edges(body)) or \
                any(isinstance(ch, dict) and "tags" in ch and not isinstance(ch["tags"], list) for ch in _chunks(body)):
            raise RuntimeError("simulated crash on a value the spec leaves open")
        return super().import_bundle(body, **params)


def run(target: str, check: str, point: str) -> tuple[Any, set[str]]:
    outcome = execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    return result, {s for r in outcome.readings if r["point"] == point for s in r["seen"]}


def served_run(brain: ReferenceBrain, check: str, point: str) -> tuple[Any, set[str]]:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.http_app import make_app

    url, stop = serve_in_thread(make_app(brain))
    try:
        return run(url, check, point)
    finally:
        stop()


def passed_with(result: Any, seen: set[str], reading: str) -> None:
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason
    assert reading in seen, seen


def failed_without(result: Any, seen: set[str], prefix: str) -> None:
    assert result.outcome.value in ("failed", "warning"), result.outcome.value
    assert result.failures
    assert not {s for s in seen if s.startswith(prefix)}, seen


# ---- E9: an invalid chunk in the middle of an import (domain_import_requests_pairwise) -------------------

@pytest.mark.parametrize(("target", "reading"), [("reference:memoryai", "skip"), (f"python:{__name__}:RefusesInvalidChunks", "refuse")])
def test_e9_each_reading_is_recorded_from_the_import(target: str, reading: str) -> None:
    result, seen = run(target, "domain_import_requests_pairwise", "E9")
    passed_with(result, seen, reading)
    assert seen == {reading}


def test_e9_an_import_that_stops_at_the_invalid_chunk_fits_no_reading() -> None:
    result, seen = run(f"{MUTANTS}:ImportStopsAtInvalid", "domain_import_requests_pairwise", "E9")
    failed_without(result, seen, "")
    assert any("fits no accepted reading" in f.title for f in result.failures)


# ---- E10 and E62: scope x since (domain_export_parameters_pairwise) ------------------------------------

@pytest.mark.parametrize(("target", "point", "reading"), [
    ("reference:memoryai", "E10", "inclusive"), (OTHER_BRAIN, "E10", "exclusive"),
    ("reference:memoryai", "E62", "ignored"), (OTHER_BRAIN, "E62", "applied")])
def test_e10_e62_each_reading_is_recorded_from_the_export(target: str, point: str, reading: str) -> None:
    result, seen = run(target, "domain_export_parameters_pairwise", point)
    passed_with(result, seen, reading)
    assert seen == {reading}


def test_e10_an_export_fitting_no_reading_fails() -> None:
    result, seen = run(f"{MUTANTS}:SinceIgnored", "domain_export_parameters_pairwise", "E10")
    failed_without(result, seen, "")


class Recorder(ReadingRecorder):
    """The part of a check's context judged_export uses: readings recorded, the options at their defaults."""

    def option(self, name: str) -> str:
        from memconform.suites.memoryai.readings import DEFAULT_PINS

        return DEFAULT_PINS[name]


@pytest.mark.parametrize(("scope", "since", "point"), [("dna_only", "2026-06-29T12:00:00Z", "E62"),
                                                       ("full", "2026-06-29T12:00:00Z", "E62"),
                                                       ("since", "2026-06-29T12:00:00Z", "E10")])
def test_e10_e62_each_answer_set_is_its_reading_and_another_set_fits_none(scope: str, since: str, point: str) -> None:
    """judged_export at unit level over the oracle's answers: each answer's set records its reading (and
    only readings predicting that very set), a set of none fails and records nothing."""
    from memconform.suites.memoryai import model as oracle
    from memconform.suites.memoryai.checks.domain_pairs import judged_export

    chunks = {f"h{i}": {"content_hash": f"h{i}", "memory_type": kind, "created_at": at}
              for i, (kind, at) in enumerate([("fact", "1990-01-01T00:00:00Z"), ("decision", "1990-01-01T00:00:00Z"),
                                              ("fact", since), ("decision", since),
                                              ("fact", "2026-11-01T00:00:00Z"), ("identity", "2026-11-01T00:00:00Z")])}
    allowed = oracle.export_answers(oracle.State(chunks=chunks), scope, since)
    assert len({a.hashes for a in allowed}) > 1  # the readings tell the answers apart
    for answer in allowed:
        ctx = Recorder()
        assert list(judged_export(ctx, "an export", scope, since, oracle.State(chunks=chunks), answer.hashes)) == []  # type: ignore[arg-type]
        assert (point, answer.reading) in ctx.seen
        assert {r for _, r in ctx.seen} == {a.reading for a in allowed if a.hashes == answer.hashes}
    ctx = Recorder()
    failures = list(judged_export(ctx, "an export", scope, since, oracle.State(chunks=chunks), frozenset(chunks) | {"stranger"}))  # type: ignore[arg-type]
    assert ctx.seen == [] and len(failures) == 1
    assert all(a.reading in failures[0].expected for a in allowed)


# ---- E63: scope since without a since -------------------------------------------------------------------

class RefusesSinceWithoutInstant(ReferenceBrain):
    """E63 `refused`: an export of scope since names no instant: 4xx."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and body.get("scope") == "since" and body.get("since") is None:
            raise Rejected({"success": False, "error": "scope since needs since"}, "no since")
        return super().export(body, **params)


@pytest.mark.parametrize(("target", "reading"), [("reference:memoryai", "served"),
                                                 (f"python:{__name__}:RefusesSinceWithoutInstant", "refused")])
def test_e63_each_reading_is_recorded_from_the_export(target: str, reading: str) -> None:
    result, seen = run(target, "domain_export_every_class", "E63")
    passed_with(result, seen, reading)
    assert seen == {reading}


@pytest.mark.parametrize(("status", "body", "reading"), [
    (200, {"format": "memoryai-bundle"}, "served"), (400, {"error": "no since"}, "refused"),
    (404, {"error": "no such route"}, None), (400, None, None)])
def test_e63_an_answer_neither_a_bundle_nor_a_bundle_rejection_fits_none(status: int, body: Any, reading: str | None) -> None:
    import json

    from memconform.suites.memoryai.domain_support import no_instant_observed
    from memconform.targets.base import Reply

    reply = Reply(status=status, body=body, raw=json.dumps(body).encode() if body is not None else b"<html>")
    ctx = Recorder()
    doc = body if reply.ok else None
    judged = no_instant_observed(ctx, {"scope": "since"}, reply, doc)  # type: ignore[arg-type]
    assert ctx.seen == ([] if reading is None else [("E63", reading)])
    assert judged is (reading is not None)
    assert no_instant_observed(Recorder(), {"scope": "since", "since": "2026-01-01T00:00:00Z"}, reply, doc) is False  # type: ignore[arg-type]


# ---- E42 and E61: open classes of the domain table -------------------------------------------------------

@pytest.mark.parametrize(("target", "check", "point", "reading"), [
    ("reference:memoryai", "domain_import_every_record_class", "E61", "edge.edge_type:empty accepted"),
    (f"python:{__name__}:RefusesEmptyEdgeType", "domain_import_every_record_class", "E61", "edge.edge_type:empty refused"),
    ("reference:memoryai", "domain_import_every_class", "E42", "chunk.tags:not_array accepted"),
    (f"python:{__name__}:RefusesTagsNotArray", "domain_import_every_class", "E42", "chunk.tags:not_array refused")])
def test_open_domain_classes_record_the_answer_seen(target: str, check: str, point: str, reading: str) -> None:
    result, seen = run(target, check, point)
    passed_with(result, seen, reading)
    stem = reading.rsplit(" ", 1)[0]
    assert {s for s in seen if s.startswith(stem + " ")} == {reading}


@pytest.mark.parametrize(("check", "point", "stem"), [
    ("domain_import_every_record_class", "E61", "edge.edge_type:empty"),
    ("domain_import_every_class", "E42", "chunk.tags:not_array")])
def test_a_server_error_on_an_open_domain_class_fits_no_reading(check: str, point: str, stem: str) -> None:
    result, seen = served_run(CrashesOnOpenClasses(), check, point)
    failed_without(result, seen, stem + " ")
    assert any(stem in f.title and "server error" in f.title for f in result.failures)


# ---- every observed point has its test -------------------------------------------------------------------

TESTS = Path(__file__).parent
HERE = {
    "E9": ["test_e9_each_reading_is_recorded_from_the_import", "test_e9_an_import_that_stops_at_the_invalid_chunk_fits_no_reading"],
    "E10": ["test_e10_e62_each_reading_is_recorded_from_the_export", "test_e10_an_export_fitting_no_reading_fails",
            "test_e10_e62_each_answer_set_is_its_reading_and_another_set_fits_none"],
    "E62": ["test_e10_e62_each_reading_is_recorded_from_the_export",
            "test_e10_e62_each_answer_set_is_its_reading_and_another_set_fits_none"],
    "E63": ["test_e63_each_reading_is_recorded_from_the_export", "test_e63_an_answer_neither_a_bundle_nor_a_bundle_rejection_fits_none"],
    "E42": ["test_open_domain_classes_record_the_answer_seen", "test_a_server_error_on_an_open_domain_class_fits_no_reading"],
    "E61": ["test_open_domain_classes_record_the_answer_seen", "test_a_server_error_on_an_open_domain_class_fits_no_reading"],
}
# points whose readings (each, and an answer fitting none) other test files already feed
OTHER_TESTS = {
    "E1": ("test_readings_observed.py", ["test_memoryai_e1_the_serialisation_the_checksum_followed_is_recorded",
                                         "test_memoryai_e1_a_checksum_fitting_no_serialisation_fails_naming_them_all"]),
    "E2": ("test_readings_observed.py", ["test_memoryai_e2_content_hash_reading_recorded_only_from_the_hash"]),
    "E3": ("test_readings_observed.py", ["test_memoryai_e3_stream_line_shape_recorded_only_from_the_line"]),
    "E4": ("test_readings_observed.py", ["test_memoryai_e4_field_recorded_only_when_the_target_accepted_it"]),
    "E6": ("test_readings_observed.py", ["test_memoryai_reading_recorded_only_from_the_answer"]),
    "E41": ("test_batch_failures.py", []),
}
OBSERVED = re.compile(r"""(?:\.observe\(|\bobserve\(ctx,\s*|\bjudge\(ctx,\s*)\s*["'](E\d+)["']""")


def observed_points() -> set[str]:
    root = Path(__file__).resolve().parents[1] / "suites" / "memoryai"
    return {m for path in root.rglob("*.py") for m in OBSERVED.findall(path.read_text("utf-8"))}


def test_every_observed_point_has_a_readings_test() -> None:
    """The points are the table's (suites/memoryai/readings.py, which the checks ask); the scan of the source finds
    no point observed outside it."""
    from memconform.suites.memoryai.table import TABLE

    scanned, points = observed_points(), set(TABLE.points())
    assert {"E9", "E10", "E42", "E61", "E63"} <= scanned  # the scan finds what the checks observe
    assert scanned <= points, sorted(scanned - points)
    missing = sorted(points - set(HERE) - set(OTHER_TESTS))
    assert missing == [], f"open points a check observes with no readings test: {missing}"
    here = Path(__file__).read_text("utf-8")
    for names in HERE.values():
        assert all(f"def {name}(" in here for name in names)
    for point, (file, names) in OTHER_TESTS.items():
        text = (TESTS / file).read_text("utf-8")
        assert point in text or all(f"def {name}(" in text for name in names), point
        assert all(f"def {name}(" in text for name in names), (point, names)


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                    max_leaves=12))
def test_the_floats_read_from_the_literal_bytes_are_the_documents(value: Any) -> None:
    """E1 with the literal bytes at hand (a bundle read in windows withholds its records): whether the bundle
    holds a float is read from its canonical text, and says what the document walk says."""
    from memconform.suites.memoryai import format as memoryai
    from memconform.suites.memoryai.reading_kinds import holds_a_float

    doc = {"manifest": {"checksum": "0" * 64}, "chunks": [value]}
    text = memoryai.canonical_bytes(doc, "literal")
    assert holds_a_float(text) is memoryai.has_float(doc)
