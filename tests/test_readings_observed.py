"""Readings are recorded from what a target was seen to do, never from the branch a check took: each
reading's answer is recorded as that reading, and an answer fitting none fails naming every accepted
reading (harness/core/readings.py, ctx.observe). Small fakes over the OMP reference give each answer."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.readings import observe
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.omp.reference.api import ApiError, OmpApi
from memconform.suites.omp.reference.serve import ServerSpec, serve_target


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def reading(self, point: str, seen: str) -> None:
        self.seen.append((point, seen))


# ---- the core helper ---------------------------------------------------------------------------

def test_each_matching_reading_is_recorded_and_nothing_fails() -> None:
    ctx = Recorder()
    seen = observe(ctx, "X1", {"a": True, "b": lambda answer: answer == 3, "c": False}, 3)
    assert ctx.seen == [("X1", "a"), ("X1", "b")] and seen and seen.failure is None and seen.fits("b")


def test_an_answer_fitting_no_reading_fails_naming_every_accepted_reading() -> None:
    ctx = Recorder()
    seen = observe(ctx, "X1", {"clamped": False, "refused": False}, "101 memories", title="limit=101 fits nothing")
    assert not seen and ctx.seen == []
    assert seen.failure.title == "limit=101 fits nothing" and seen.failure.received == "101 memories"
    assert "clamped" in seen.failure.expected and "refused" in seen.failure.expected


def test_a_reading_seen_but_not_accepted_is_recorded_and_fails_with_the_pin() -> None:
    ctx = Recorder()
    seen = observe(ctx, "X1", {"clamped": True, "refused": False}, 100, accepted=("refused",), pinned=("limit=reject",))
    assert ctx.seen == [("X1", "clamped")]
    assert seen.failure is not None and seen.failure.readings == ("limit=reject",)
    assert "refused" in seen.failure.expected and "clamped" not in seen.failure.expected


def test_a_prediction_that_cannot_read_the_answer_does_not_hold() -> None:
    ctx = Recorder()
    seen = observe(ctx, "X1", {"page": lambda answer: len(answer["memories"]) <= 100}, {"no": "memories"})
    assert not seen and ctx.seen == []


# the O9 and O30 predictions are the OMP model's: OMP's table of readings holds them, and
# tests/test_omp_one_table.py feeds each reading's answer and one fitting none


# ---- OMP checks against fakes: each reading's answer, and one fitting none ---------------------

class ClampsLimit(OmpApi):
    """O9: limit=101 is served as 100."""

    def int_param(self, params: Any, name: str, default: int, low: int, high: int | None) -> int:
        if name == "limit" and params.get(name) == "101":
            return 100
        return super().int_param(params, name, default, low, high)


class ServesLimit101(OmpApi):
    """O9, fitting no reading: limit=101 is served with 101 memories."""

    def int_param(self, params: Any, name: str, default: int, low: int, high: int | None) -> int:
        if name == "limit" and params.get(name) == "101":
            return 101
        return super().int_param(params, name, default, low, high)


class RefusesNamespaceNull(OmpApi):
    """O8: an update giving namespace null is refused with 422 and changes nothing."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        if "namespace" in body and body["namespace"] is None:
            raise self.invalid("type", "namespace", "namespace may not be null")
        return super().apply_update(doc, fields, body)


class IgnoresNamespaceNull(OmpApi):
    """O8, fitting no reading: namespace null is accepted and the old namespace stays."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        if "namespace" in body and body["namespace"] is None:
            fields = {k: v for k, v in fields.items() if k != "namespace"}
            body = {k: v for k, v in body.items() if k != "namespace"}
        return super().apply_update(doc, fields, body)


class RefusesWholeImport(OmpApi):
    """O7: one invalid memory makes the whole file refused with 422, nothing imported."""

    def op_import(self, who: Any, req: Any) -> Any:
        body = self.json_object(req)
        for item in body.get("memories") or []:
            if isinstance(item, dict):
                self.validate_memory(item, partial=False)
        return super().op_import(who, req)


class ReportsNoErrors(OmpApi):
    """O7, fitting no reading: the invalid memory is skipped silently, errors is []."""

    def import_failed(self, errors: list[dict[str, Any]], index: int, given: Any, err: ApiError) -> None:
        pass


class CountsUtf16Units(OmpApi):
    """O19: "chars" are UTF-16 code units, so an astral string at the limit is over it (422)."""

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        if max_len is not None and isinstance(value, str) and len(value.encode("utf-16-le")) // 2 > max_len:
            raise self.invalid(limit_kind, name, f"{name} is over {max_len} UTF-16 code units", max=max_len)
        return super().check_string(value, name, max_len, limit_kind)


class CrashesOnAstral(OmpApi):
    """O19, fitting no reading: an astral character at the limit answers 500."""

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        if isinstance(value, str) and "\U0001f9e0" in value and name == "content":
            raise RuntimeError("astral characters are not supported")
        return super().check_string(value, name, max_len, limit_kind)


def _factory(api_class: type[OmpApi]) -> Any:
    def make() -> Any:
        return serve_target(ServerSpec(api_class=api_class), label=f"fake:omp:{api_class.__name__}")
    return make


FAKES = {cls.__name__: _factory(cls) for cls in (ClampsLimit, ServesLimit101, RefusesNamespaceNull, IgnoresNamespaceNull,
                                                  RefusesWholeImport, ReportsNoErrors, CountsUtf16Units, CrashesOnAstral)}
globals().update(FAKES)


def run_check(fake: str | None, check: str) -> tuple[Any, set[tuple[str, str]]]:
    target = f"python:{__name__}:{fake}" if fake else "reference:omp"
    outcome = execute_run(["omp"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    result = next(r for r in outcome.results if r.check_id == f"omp.{check}")
    return result, {(r["point"], s) for r in outcome.readings for s in r["seen"]}


CASES = [
    # (fake or None for the reference, check, the reading it shows, or None: it fits none and fails)
    (None, "list_limit_max_100", ("O9", "limit=101 refused")),
    ("ClampsLimit", "list_limit_max_100", ("O9", "limit=101 clamped")),
    ("ServesLimit101", "list_limit_max_100", None),
    (None, "update_clears_nullable", ("O8", "namespace null clears it")),
    ("RefusesNamespaceNull", "update_clears_nullable", ("O8", "namespace null refused, nothing changed")),
    ("IgnoresNamespaceNull", "update_clears_nullable", None),
    (None, "import_bad_memory_reported", ("O7", "invalid memory reported, the rest imported")),
    ("RefusesWholeImport", "import_bad_memory_reported", ("O7", "whole file refused")),
    ("ReportsNoErrors", "import_bad_memory_reported", None),
    (None, "accepts_values_at_limits", ("O19", "chars are code points")),
    ("CountsUtf16Units", "accepts_values_at_limits", ("O19", "chars are UTF-16 code units")),
    ("CrashesOnAstral", "accepts_values_at_limits", None),
]


@pytest.mark.parametrize(("fake", "check", "reading"), CASES, ids=[f"{c}-{f or 'reference'}" for f, c, _ in CASES])
def test_omp_reading_recorded_only_from_the_answer(fake: str | None, check: str, reading: tuple[str, str] | None) -> None:
    result, seen = run_check(fake, check)
    point = {"list_limit_max_100": "O9", "update_clears_nullable": "O8", "import_bad_memory_reported": "O7",
             "accepts_values_at_limits": "O19"}[check]
    if reading is None:
        assert result.outcome is Outcome.FAILED, result.reason
        named = [f for f in result.failures if point in str(f.expected)]
        assert named, [f.to_json() for f in result.failures]
        assert not {s for s in seen if s[0] == point}, seen  # nothing recorded for an answer fitting no reading
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert reading in seen and {s for s in seen if s[0] == point} == {reading}


# ---- EMP: each reading's answer, and one fitting none ---------------------------------------------

class RefusesNewerMajor:
    """E8: a reader that refuses a file holding a line of a newer major version (a rejected reply)."""

    def __new__(cls) -> Any:
        from memconform.suites.emp import format as emp
        from memconform.suites.emp.reference import ReferenceEmpApp
        from memconform.targets.base import Rejected

        class Reader(ReferenceEmpApp):
            def resolve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
                with open(body["path"], "rb") as f:
                    lines = [e for _, _, e in emp.iter_text(f.read()) if isinstance(e, dict)]
                if any(str(e.get("v", "")).split(".")[0] not in ("", "1") for e in lines):
                    raise Rejected({"errors": ["a line of a newer major version"]}, "newer major version")
                return super().resolve(body)

        return Reader()


MUTANTS = "memconform.suites.emp.mutants"
EMP_CASES = [
    ("reader_equal_ts_tie", "reference:emp", ("E3", "the later line wins")),
    ("reader_equal_ts_tie", f"python:{MUTANTS}:TieKeepsFirstLine", ("E3", "the earlier line wins")),
    ("reader_equal_ts_tie", f"python:{MUTANTS}:TieKeepsBoth", None),
    ("reader_newer_major_refused", "reference:emp", ("E8", "leaves the line out")),
    ("reader_newer_major_refused", f"python:{__name__}:RefusesNewerMajor", ("E8", "refuses the file")),
    ("reader_newer_major_refused", f"python:{MUTANTS}:NewerMajorAccepted", None),
]


@pytest.mark.parametrize(("check", "target", "reading"), EMP_CASES, ids=[f"{c}-{t.rsplit(':', 1)[-1]}" for c, t, _ in EMP_CASES])
def test_emp_reading_recorded_only_from_the_answer(check: str, target: str, reading: tuple[str, str] | None) -> None:
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    point = {"reader_equal_ts_tie": "E3", "reader_newer_major_refused": "E8"}[check]
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"] if r["point"] == point}
    if reading is None:
        assert result.outcome is Outcome.FAILED and seen == set(), (result.reason, seen)
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert seen == {reading}


# ---- documents: each reading the document shows, and one fitting none ------------------------------

def judge_document(suite: str, doc: Any, check: str, options: dict[str, str] | None = None) -> tuple[Any, set[tuple[str, str]]]:
    """One document check on one document (as `memconform validate` runs it), with the readings it recorded."""
    from memconform.core.check_context import NoTarget
    from memconform.core.registry import select_checks
    from memconform.core.runner import Context, run_checks
    from memconform.core.suite import get_suite

    profile = Profile.named("ci", options={f"{suite}.{k}": v for k, v in (options or {}).items()})
    ctx = Context(suite=get_suite(suite), target=NoTarget(), profile=profile, document=doc)
    (result,) = run_checks(select_checks(suite, [check]), ctx)
    return result, {(point, seen) for point, entry in ctx.readings.items() for seen in entry["seen"]}


def fixture_document(suite: str, name: str) -> Any:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / suite / "valid" / f"{name}.json"
    return json.loads(path.read_text("utf-8"))["document"]


def memoryai_bundle(content: str, **chunk: Any) -> dict[str, Any]:
    from memconform.suites.memoryai import format as mai

    record = {"id": 1, "content": content, "content_hash": mai.content_hash(content), "memory_type": "fact",
              "embedding": None, "tags": [], "zone": "standard", "importance": 0.5, "created_at": "2026-01-01T00:00:00Z"}
    record.update(chunk)
    return {"format": mai.FORMAT, "version": 1, "generator": "test", "exported_at": "2026-01-02T00:00:00Z",
            "manifest": {"tenant_id": None, "tenant_name": None, "scope": "full", "since": None,
                         "embedding_model": None, "embedding_dim": None,
                         "counts": {s: 1 if s == "chunks" else 0 for s in mai.RECORD_SECTIONS}},
            "chunks": [record], "memory_edges": [], "entities": [], "l2_sessions": [], "mood_states": [], "agents": []}


@pytest.mark.parametrize(("unicode", "numbers", "reading"), [
    ("literal", "python", "utf8-literal"), ("ascii", "python", "ascii-escapes"),
    ("literal", "ecmascript", "utf8-literal+ecmascript-numbers"), ("ascii", "ecmascript", "ascii-escapes+ecmascript-numbers")])
def test_memoryai_e1_the_serialisation_the_checksum_followed_is_recorded(unicode: str, numbers: str, reading: str) -> None:
    from memconform.suites.memoryai import format as mai

    doc = mai.seal(memoryai_bundle("Grüße 🧠", importance=1e-7), unicode, numbers)
    result, seen = judge_document("memoryai", doc, "checksum_present_and_valid")
    assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures]
    assert {s for s in seen if s[0] == "E1"} == {("E1", reading)}


def test_memoryai_e1_a_checksum_fitting_no_serialisation_fails_naming_them_all() -> None:
    from memconform.suites.memoryai import format as mai

    doc = mai.seal(memoryai_bundle("Grüße 🧠"))
    doc["exported_at"] = "2026-01-03T00:00:00Z"  # stamped after the checksum was taken
    result, seen = judge_document("memoryai", doc, "checksum_present_and_valid")
    assert result.outcome is Outcome.FAILED and not {s for s in seen if s[0] == "E1"}
    assert all(name in result.failures[0].detail for name in mai.CHECKSUM_READINGS)


@pytest.mark.parametrize(("hashed", "reading"), [("as written", "as written"), ("nfc", "nfc-normalised"), ("other", None)])
def test_memoryai_e2_content_hash_reading_recorded_only_from_the_hash(hashed: str, reading: str | None) -> None:
    import unicodedata

    from memconform.suites.memoryai import format as mai

    decomposed = unicodedata.normalize("NFD", "café résumé")
    digest = {"as written": mai.content_hash(decomposed), "nfc": mai.content_hash(unicodedata.normalize("NFC", decomposed)),
              "other": mai.content_hash("something else")}[hashed]
    doc = mai.seal(memoryai_bundle(decomposed, content_hash=digest))
    result, seen = judge_document("memoryai", doc, "content_hash_matches")
    if reading is None:
        assert result.outcome is Outcome.FAILED and not {s for s in seen if s[0] == "E2"}
        assert "as written" in str(result.failures[0].expected) and "nfc-normalised" in str(result.failures[0].expected)
    else:
        assert result.outcome is Outcome.PASSED and {s for s in seen if s[0] == "E2"} == {("E2", reading)}


@pytest.mark.parametrize(("line", "reading"), [
    ({"section": "chunks", "record": {"id": 1}}, "section lines, record under record"),
    ({"_kind": "chunk", "id": 1}, "_kind lines, record inline"),
    ({"kind": "chunks", "data": {"id": 1}}, "kind lines, record under data"),
    ({"what": "chunk", "id": 1}, None)])
def test_memoryai_e3_stream_line_shape_recorded_only_from_the_line(line: dict[str, Any], reading: str | None) -> None:
    import json

    from memconform.core.runner import Context
    from memconform.core.suite import get_suite
    from memconform.suites.memoryai import format as mai
    from memconform.suites.memoryai.stream import parse_stream

    ctx = Context(suite=get_suite("memoryai"), target=None, profile=Profile.named("ci"))  # type: ignore[arg-type]
    envelope = {k: v for k, v in memoryai_bundle("x").items() if k not in mai.RECORD_SECTIONS}
    raw = b"\n".join(json.dumps(item).encode() for item in (envelope, line)) + b"\n"
    doc, failures = parse_stream(ctx, raw)
    seen = {(p, s) for p, entry in ctx.readings.items() for s in entry["seen"]}
    if reading is None:
        assert failures and "neither" in failures[0].title and seen == set()
    else:
        assert failures == [] and doc["chunks"] == [{"id": 1}] and seen == {("E3", reading)}


@pytest.mark.parametrize(("options", "reading"), [({}, ("A7", "zero-length interval")), ({"validity_order": "strictly-after"}, None)])
def test_amps_a7_a_zero_length_interval_is_recorded_from_the_document(options: dict[str, str], reading: tuple[str, str] | None) -> None:
    doc = fixture_document("amps", "valid-to-equals-valid-from")
    result, seen = judge_document("amps", doc, "valid_to_not_before_valid_from", options)
    if reading is None:
        assert result.outcome is Outcome.FAILED and result.failures[0].readings == ("A7:strictly-after",)
    else:
        assert result.outcome is Outcome.PASSED and reading in seen


def test_amps_a7_an_interval_ending_before_it_starts_fits_no_reading() -> None:
    doc = fixture_document("amps", "valid-to-equals-valid-from")
    atom = next(a for a in doc["atoms"] if a.get("valid_to"))
    atom["valid_to"] = "2000-01-01T00:00:00Z"
    result, seen = judge_document("amps", doc, "valid_to_not_before_valid_from")
    assert result.outcome is Outcome.FAILED and not {s for s in seen if s[0] == "A7"}


DOCUMENT_NOT_READINGS = [
    # (suite, fixture, check, the reading a problem shows unpinned, the option pinning the other, a breaking edit)
    ("memorizz", "tool-id-differs-named-reading", "natural_id_matches", ("M4", "not implied"), {"natural_ids": "implied"}),
    ("memorizz", "includes-own-key-names", "manifest_field_types", ("M5", "not memorizz-includes-keys"),
     {"includes_keys": "memorizz"}),
    ("emp", "uuid-v1-id", "id_uuid4", ("E10", "not v4"), {"id_version": "v4"}),
    ("emp", "fractional-ms", "ts_millis", ("E11", "not integer"), {"ts_form": "integer"}),
    ("emp", "plain-text-encrypted-prefix", "encrypted_content_form", ("E12", "not reserved"), {"encrypted_prefix": "reserved"}),
]


@pytest.mark.parametrize(("suite", "fixture", "check", "reading", "pin"), DOCUMENT_NOT_READINGS,
                         ids=[f"{s}-{c}" for s, _, c, _, _ in DOCUMENT_NOT_READINGS])
def test_a_problem_under_an_unpinned_reading_records_what_the_document_shows(
        suite: str, fixture: str, check: str, reading: tuple[str, str], pin: dict[str, str]) -> None:
    doc = fixture_document(suite, fixture)
    result, seen = judge_document(suite, doc, check)
    assert result.outcome is Outcome.PASSED and reading in seen, ([f.to_json() for f in result.failures], seen)
    pinned, seen_pinned = judge_document(suite, doc, check, pin)
    assert pinned.outcome is Outcome.FAILED and pinned.failures[0].readings, [f.to_json() for f in pinned.failures]


# ---- MemoryAI E4: the multipart field the target accepted, and a target accepting neither -----------

class BundleFieldOnly:
    """E4: a brain whose file upload reads only a multipart field named `bundle`."""

    def __new__(cls) -> Any:
        from memconform.suites.memoryai.reference.brain import ReferenceBrain
        from memconform.targets.base import Rejected

        class Brain(ReferenceBrain):
            def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
                if params.get("_field") != "bundle":
                    raise Rejected({"error": "multipart field 'bundle' is missing"}, "no bundle field")
                return super().import_file(body, **params)

        return Brain()


class NoMultipartField:
    """E4, fitting no reading: the file upload refuses both field names."""

    def __new__(cls) -> Any:
        from memconform.suites.memoryai.reference.brain import ReferenceBrain
        from memconform.targets.base import Rejected

        class Brain(ReferenceBrain):
            def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
                raise Rejected({"error": "no file"}, "no file")

        return Brain()


@pytest.mark.parametrize(("target", "reading"), [
    ("reference:memoryai", ("E4", "file")), (f"python:{__name__}:BundleFieldOnly", ("E4", "bundle")),
    (f"python:{__name__}:NoMultipartField", None)])
def test_memoryai_e4_field_recorded_only_when_the_target_accepted_it(target: str, reading: tuple[str, str] | None) -> None:
    outcome = execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None, check_ids=["import_file_multipart"])
    (result,) = outcome.results
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"] if r["point"] == "E4"}
    if reading is None:
        assert result.outcome is Outcome.FAILED and seen == set()
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert seen == {reading}


# ---- MemoryAI E6 and E10: each reading's answer, and one fitting none ---------------------------------

class CountsOnePerReimport:
    """E6, fitting no reading: a re-import adds one to an entity's frequency, neither 2 + 2 nor 2."""

    def __new__(cls) -> Any:
        from memconform.suites.memoryai.reference.brain import ReferenceBrain

        class Brain(ReferenceBrain):
            def _merge_entity(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
                return dict(super()._merge_entity(old, new), frequency=int(old.get("frequency") or 0) + 1)

        return Brain()


OTHER_BRAIN = "python:memconform.suites.memoryai.reference.readings:OtherReadingsBrain"
MAI_CASES = [
    ("reimport_inserts_nothing", "reference:memoryai", "E6", ("E6", "accumulate")),
    ("reimport_inserts_nothing", OTHER_BRAIN, "E6", ("E6", "stable")),
    ("reimport_inserts_nothing", f"python:{__name__}:CountsOnePerReimport", "E6", None),
    # E10's two readings split every answer in which the chunk at `since` is told apart: in it, or not
    ("export_scope_since", "reference:memoryai", "E10", ("E10", "inclusive")),
    ("export_scope_since", OTHER_BRAIN, "E10", ("E10", "exclusive")),
]


@pytest.mark.parametrize(("check", "target", "point", "reading"), MAI_CASES,
                         ids=[f"{c}-{t.rsplit(':', 1)[-1]}" for c, t, _, _ in MAI_CASES])
def test_memoryai_reading_recorded_only_from_the_answer(check: str, target: str, point: str,
                                                        reading: tuple[str, str] | None) -> None:
    outcome = execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"] if r["point"] == point}
    if reading is None:
        assert result.outcome is Outcome.FAILED and seen == set(), (result.reason, seen)
        assert any("accumulate" in str(f.expected) and "stable" in str(f.expected) for f in result.failures)
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert seen == {reading}


# ---- MemoRizz M2 and M8 on documents ------------------------------------------------------------------

@pytest.mark.parametrize(("order", "reading"), [("utf16", "keys sorted by UTF-16 code units"),
                                                ("codepoint", "keys sorted by code points"), ("tampered", None)])
def test_memorizz_m2_key_order_recorded_only_from_the_digest(order: str, reading: str | None) -> None:
    from memconform.suites.memorizz import format as mz

    doc = fixture_document("memorizz", "key-order-utf16")  # keys that sort differently in the two orders
    if order == "tampered":
        doc["integrity"]["digest"] = "0" * 64
    else:
        mz.reseal(doc, order)
    result, seen = judge_document("memorizz", doc, "integrity_digest")
    if reading is None:
        assert result.outcome is Outcome.FAILED and not {s for s in seen if s[0] == "M2"}
    else:
        assert result.outcome is Outcome.PASSED and {s for s in seen if s[0] == "M2"} == {("M2", reading)}


def test_memorizz_m8_a_vector_key_without_embeddings_requested_is_recorded_or_failed_when_pinned() -> None:
    from memconform.suites.memorizz import format as mz

    doc = fixture_document("memorizz", "spec-example")
    doc["manifest"]["includes"]["embeddings"] = False
    store, record = next((s, r) for s, r in mz.records_of(doc))
    record["data"]["vector"] = [0.25, 0.5]
    mz.reseal(doc)
    result, seen = judge_document("memorizz", doc, "embeddings_follow_includes")
    assert result.outcome is Outcome.PASSED and ("M8", "not with-vector") in seen, [f.to_json() for f in result.failures]
    pinned, _ = judge_document("memorizz", doc, "embeddings_follow_includes", {"embedding_fields": "with-vector"})
    assert pinned.outcome is Outcome.FAILED and pinned.failures[0].readings == ("M8:with-vector",)


# ---- the domain checks' open classes: M35 and E42 -------------------------------------------------------

class RestoresFloatVersion:
    """M35: an archive whose version is 1.0 is restored (JSON has one number type)."""

    def __new__(cls) -> Any:
        from memconform.suites.memorizz.reference import ReferenceArchiveStore

        class Store(ReferenceArchiveStore):
            def problems(self, archive: Any) -> list[str]:
                if isinstance(archive, dict) and archive.get("version") == 1 and type(archive.get("version")) is float:
                    archive = {**archive, "version": 1}
                return super().problems(archive)

        return Store()


class IngestsFloatVersion:
    """E42: a bundle whose version is 1.0 is ingested."""

    def __new__(cls) -> Any:
        from memconform.suites.memoryai.reference.brain import ReferenceBrain

        class Brain(ReferenceBrain):
            def _envelope_problems(self, bundle: Any) -> list[str]:
                if isinstance(bundle, dict) and type(bundle.get("version")) is float and bundle["version"] == 1:
                    bundle = {**bundle, "version": 1}
                return super()._envelope_problems(bundle)

        return Brain()


def _domain_run(suite: str, target: str, check: str) -> tuple[Any, set[str]]:
    outcome = execute_run([suite], target, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    point = {"memorizz": "M35", "memoryai": "E42"}[suite]
    return result, {s for r in outcome.readings if r["point"] == point for s in r["seen"]}


@pytest.mark.parametrize(("suite", "target", "check", "reading"), [
    ("memorizz", "reference:memorizz", "domain_envelope_every_class", "archive.version:one_float refused"),
    ("memorizz", f"python:{__name__}:RestoresFloatVersion", "domain_envelope_every_class", "archive.version:one_float restored"),
    ("memoryai", "reference:memoryai", "domain_import_every_class", "bundle.version:float refused"),
    ("memoryai", f"python:{__name__}:IngestsFloatVersion", "domain_import_every_class", "bundle.version:float accepted")])
def test_an_open_domain_class_records_the_answer_seen(suite: str, target: str, check: str, reading: str) -> None:
    result, seen = _domain_run(suite, target, check)
    assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
    assert reading in seen and not {s for s in seen if s.startswith(reading.rsplit(" ", 1)[0]) and s != reading}


def test_memorizz_m33_a_refusal_that_wrote_records_fits_no_reading() -> None:
    result, seen = _domain_run("memorizz", "python:memconform.suites.memorizz.mutants:WritesBeforeValidating",
                               "domain_envelope_every_class")
    assert result.outcome is Outcome.FAILED
    assert any("archive.version:one_float" in f.title and "records were written" in f.title for f in result.failures)
    assert not {s for s in seen if s.startswith("archive.version:one_float")}


def test_memoryai_e40_a_server_error_on_an_open_class_fits_no_reading() -> None:
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.brain import ReferenceBrain
    from memconform.suites.memoryai.reference.http_app import make_app

    class CrashesOnFloatVersion(ReferenceBrain):
        def _envelope_problems(self, bundle: Any) -> list[str]:
            if isinstance(bundle, dict) and type(bundle.get("version")) is float:
                raise RuntimeError("version is not an int")
            return super()._envelope_problems(bundle)

    url, stop = serve_in_thread(make_app(CrashesOnFloatVersion()))
    try:
        result, seen = _domain_run("memoryai", url, "domain_import_every_class")
    finally:
        stop()
    assert result.outcome is Outcome.FAILED
    assert any("bundle.version:float" in f.title and "server error" in f.title for f in result.failures)
    assert not {s for s in seen if s.startswith("bundle.version:float")}
