"""The hostile-JSON battery: its inputs, the strict reader, and the per-suite checks that send it.

References must pass every battery check (a fixed sample under `ci`); targets that store a
duplicate-key document anyway, crash on deep nesting or hang are caught (never passed).
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from memconform.core.profile import Limits, Profile
from memconform.core.registry import REGISTRY
from memconform.core.results import Outcome
from memconform.core.runner import Context, run_one
from memconform.core.suite import get_suite
from memconform.kit.hostile import (
    MIN_PER_SURFACE,
    StrictJsonError,
    battery,
    kind,
    one_of_each,
    parse_or_reject,
    sample,
    strict_loads,
)
from memconform.kit.hostile_check import CI_SAMPLE
from memconform.run.session import Session
from memconform.targets.base import Rejected
from memconform.targets.pyobj import PythonTarget


def _object_doc(marker):
    return {"format": "x", "version": 1, "subject": {"subject_id": "s1", "name": "n"},
            "atoms": [{"atom_id": marker + "-a", "text": f"{marker} — ✓ 記憶", "confidence": 0.5, "ok": True, "v": None}]}


def _array_doc(marker):
    return [{"t": marker}]


@pytest.mark.parametrize("make", [_object_doc, _array_doc])
@pytest.mark.parametrize("http", [False, True])
def test_battery_has_enough_distinct_bad_inputs(make, http):
    inputs = battery(make, "run1", http=http)
    assert len(inputs) >= MIN_PER_SURFACE
    categories = {i.category for i in inputs}
    assert {"duplicate-key", "lone-surrogate", "bom", "invalid-utf8", "deep-nesting", "not-a-json-number", "huge-number",
            "trailing-comma", "empty", "truncation", "wrong-top-level", "syntax", "byte-mutation"} <= categories
    assert ("content-type" in categories) is http
    markers = [i.marker for i in inputs if i.category != "empty"]
    assert len(set(markers)) == len(markers)
    assert all(i.marker.encode() in i.data or i.category in ("empty", "encoding", "wrong-top-level", "truncation", "byte-mutation")
               for i in inputs)
    assert [i.data for i in battery(make, "run1", http=http)] == [i.data for i in inputs]  # deterministic


@pytest.mark.parametrize("make", [_object_doc, _array_doc])
def test_every_must_reject_input_fails_the_strict_reader(make):
    for item in battery(make, "run1"):
        if item.must_reject and item.category != "wrong-top-level":
            with pytest.raises(StrictJsonError):
                strict_loads(item.data)
    assert strict_loads(json.dumps(make("ok")).encode()) == make("ok")


def test_nesting_10000_deep_has_its_inputs_and_the_reader_stays_bounded():
    deep = [i for i in battery(_object_doc, "r") if i.category == "deep-nesting"]
    assert any(i.data.count(b"[") >= 10_000 for i in deep) and any(i.data.count(b"[") >= 100_000 for i in deep)
    started = time.monotonic()
    for item in deep:
        with pytest.raises(StrictJsonError, match="nested deeper"):
            strict_loads(item.data)
    assert time.monotonic() - started < 30  # a parser recursing or going quadratic on 100,000 levels would not end


def test_parse_or_reject_refuses_with_rejected():
    assert parse_or_reject({"a": 1}) == {"a": 1}
    with pytest.raises(Rejected):
        parse_or_reject(b'{"a": 1, "a": 2}')


def test_sample_keeps_every_category_and_is_deterministic():
    inputs = battery(_object_doc, "r", http=True)
    picked = sample(inputs, 48)
    assert len(picked) == 48 and {i.category for i in picked} == {i.category for i in inputs}
    assert picked == sample(inputs, 48)


def test_one_of_each_sends_every_kind_once_in_order():
    inputs = battery(_object_doc, "r", http=True)
    picked = one_of_each(inputs)
    kinds = [kind(i) for i in picked]
    assert len(kinds) == len(set(kinds)) and set(kinds) == {kind(i) for i in inputs}
    assert {(c, m, j) for c, m, j, _ in kinds} >= {("lone-surrogate", True, False), ("lone-surrogate", False, True),
                                                  ("deep-nesting", True, False), ("deep-nesting", False, False)}
    assert [i for i in inputs if i in picked] == picked and len(picked) < 48


EACH_KIND_ONCE = {"amps", "emp", "memorizz", "memoryai"}  # their ci sends one input of every kind (hostile.one_of_each)
BATTERY_CHECKS = {
    "amps": ["amps.hostile_json_refused"],
    "memoryai": ["memoryai.hostile_json_refused", "memoryai.hostile_json_file_refused"],
    "memorizz": ["memorizz.hostile_json_refused"],
    "emp": ["emp.hostile_json_refused"],
    "omp": ["omp.hostile_json_create_refused", "omp.hostile_json_import_refused", "omp.hostile_json_search_refused"],
}


@pytest.mark.parametrize("suite", sorted(BATTERY_CHECKS))
def test_references_pass_the_battery_quickly_under_ci(suite):
    checks = {c.id: c for c in REGISTRY.for_suite(suite)}
    with Session([suite], None, Profile.named("ci"), report_dir=None) as session:
        for check_id in BATTERY_CHECKS[suite]:
            result = session.run_check(checks[check_id])
            assert result.outcome is Outcome.PASSED, (check_id, result.reason, [f.title for f in result.failures])
            # bounded by construction under ci: a fixed sample, not the whole battery (timing decides no test)
            tally = [line for line in result.transcript if line.startswith("hostile battery on")]
            sent = len(one_of_each(battery(_object_doc, "r"))) if suite in EACH_KIND_ONCE else CI_SAMPLE
            assert tally and f": {sent} bad inputs (a sample of the " in tally[-1], result.transcript


# ---- known-broken targets: caught, never passed -------------------------------------------------

def _lenient_amps():
    from memconform.suites.amps.reference import ReferenceAmpsStore

    class Lenient(ReferenceAmpsStore):
        """Reads request bytes with plain json.loads: the last duplicate wins, NaN passes, deep nesting raises."""

        def import_export(self, doc, **params):
            if isinstance(doc, (bytes, bytearray)):
                try:
                    doc = json.loads(bytes(doc).decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    raise Rejected({"error": str(exc)}) from None
            return super().import_export(doc, **params)

    return Lenient()


def _run_amps_battery(impl, profile="default", limits=None):
    suite = get_suite("amps")
    ctx = Context(suite=suite, target=PythonTarget(impl, "broken", limits), profile=Profile.named(profile))
    return run_one(REGISTRY.get("amps.hostile_json_refused"), ctx)


def test_a_lenient_reader_is_caught_on_what_no_reading_allows_and_noted_on_what_rfc_8259_allows():
    result = _run_amps_battery(_lenient_amps())
    titles = [f.title for f in result.failures]
    assert result.outcome is Outcome.FAILED, (result.reason, titles)
    assert any(t.startswith("import_export: crashed on") and "deep-nesting" in t for t in titles), titles  # RecursionError
    # duplicate names, the last one winning: RFC 8259 allows it, and no AMPS sentence asks to refuse it
    assert not any("duplicate-key" in t for t in titles), titles
    assert any("duplicate-key" in line and "RFC 8259 allows it" in line for line in result.transcript)


def test_a_target_that_hangs_is_caught_and_the_battery_stays_bounded():
    from memconform.suites.amps.reference import ReferenceAmpsStore

    release = threading.Event()

    class HangsOnDeepNesting(ReferenceAmpsStore):
        def import_export(self, doc, **params):
            if isinstance(doc, (bytes, bytearray)) and b"[[[[[[[[" in doc:
                release.wait(30)
            return super().import_export(parse_or_reject(doc), **params)

    started = time.monotonic()
    try:
        result = _run_amps_battery(HangsOnDeepNesting(), limits=Limits(call_deadline_s=0.3))
    finally:
        release.set()
    assert time.monotonic() - started < 25  # unbounded, it would wait 30 s on each of ~160 inputs
    assert result.outcome is Outcome.FAILED, result.reason
    assert any("hung on" in f.title for f in result.failures), [f.title for f in result.failures]
    assert any("not sent" in line for line in result.transcript)


def test_a_target_that_refuses_everything_gets_no_pass():
    class RefusesAll:
        def import_export(self, doc, **params):
            raise Rejected({"error": "no"})

        def export(self, body, **params):
            return {}

    result = _run_amps_battery(RefusesAll(), profile="ci")
    assert result.outcome is Outcome.ERRORED and "positive control refused" in result.reason


def test_the_battery_reaches_a_drop_folder_implementation_byte_for_byte(tmp_path):
    """dir: splices the battery's bytes into the request file: the implementation's own reader meets them."""
    from memconform.suites.amps.reference import ReferenceAmpsStore
    from memconform.targets import open_target

    (tmp_path / "inbox").mkdir()
    (tmp_path / "outbox").mkdir()
    store, stop, seen = ReferenceAmpsStore(), threading.Event(), []

    def responder():
        while not stop.is_set():
            for f in sorted((tmp_path / "inbox").glob("*.json")):
                request_id, op, _ = f.name.split(".")
                raw = f.read_bytes()
                f.unlink()
                seen.append(raw)
                try:
                    request = strict_loads(raw)
                    body = getattr(store, op)(request["body"])
                    reply = {"status": "ok", "body": body}
                except (StrictJsonError, Rejected) as exc:
                    reply = {"status": "rejected", "body": {"error": str(exc)[:200]}}
                out = tmp_path / "outbox" / f".{request_id}.tmp"
                out.write_text(json.dumps(reply))
                out.rename(tmp_path / "outbox" / f"{request_id}.json")
            time.sleep(0.002)

    thread = threading.Thread(target=responder, daemon=True)
    thread.start()
    try:
        target = open_target(f"dir:{tmp_path}", limits=Limits(dir_wait_s=10))
        ctx = Context(suite=get_suite("amps"), target=target, profile=Profile.named("ci"))
        result = run_one(REGISTRY.get("amps.hostile_json_refused"), ctx)
    finally:
        stop.set()
        thread.join()
    assert result.outcome is Outcome.PASSED, (result.reason, [f.title for f in result.failures])
    assert any(b"\\ud800" in raw for raw in seen) and any(b"\xff" in raw for raw in seen)  # delivered as sent


def test_an_in_process_object_that_takes_parsed_values_only_is_not_applicable():
    from memconform.suites.amps.reference import ReferenceAmpsStore

    class ParsedOnly(ReferenceAmpsStore):
        def import_export(self, doc, **params):
            if not isinstance(doc, dict):
                raise TypeError("expects a dict")
            return super().import_export(doc, **params)

    result = _run_amps_battery(ParsedOnly(), profile="ci")
    assert result.outcome is Outcome.SKIPPED and result.not_applicable, result.reason
