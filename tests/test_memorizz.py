"""MemoRizz Memory Archive v1: reference, mutants, fixture corpus, canonical JSON and the file reader agree.

The reference passes every memorizz check; each mutant breaks one rule and fails the checks named for
it without erroring any; every check is killed by some mutant or invalid fixture; each fixture's
verdict matches what the document checks say, in process and through `memconform validate`.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.cli.main import main as cli_main
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.results import Outcome
from memconform.kit.fixtures_loader import fixture_root, iter_cases
from memconform.run.document_run import validate_document
from memconform.run.session import execute_run
from memconform.suites.memorizz import format as mz
from memconform.suites.memorizz.format import strategies
from memconform.suites.memorizz.reference import ReferenceArchiveStore

CASES = [(p, c) for p, c in iter_cases("memorizz") if isinstance(c, dict) and "document" in c]
VECTORS = json.loads((fixture_root() / "memorizz" / "canonical-vectors.json").read_text("utf-8"))["vectors"]
FUZZ = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_fixtures_cover_both_verdicts_and_every_document_check() -> None:
    assert {c["verdict"] for _, c in CASES} == {"valid", "invalid"}
    doc_checks = {c.id for c in REGISTRY.for_suite("memorizz") if c.kind == "document"}
    named = {b for _, c in CASES for b in c.get("breaks", []) + c.get("warnings", [])}
    assert doc_checks - named == set()


def test_fixture_cases_are_well_formed() -> None:
    ids = {c.id for c in REGISTRY.for_suite("memorizz")}
    for path, case in CASES:
        assert case["id"] == path.stem and case["spec"] == mz.SPEC
        assert set(case["breaks"]) | set(case.get("warnings", [])) <= ids, path.name
        assert (case["verdict"] == "invalid") == bool(case["breaks"]), path.name


@pytest.mark.parametrize("path,case", [(p, c) for p, c in CASES if c["id"] in {
    "spec-example", "number-forms", "checksum-python-numbers", "over-record-limit", "number-overflow",
    "external-reference-unreported"}], ids=lambda v: v["id"] if isinstance(v, dict) else "file")
def test_validate_command_reads_the_file_itself(path, case, tmp_path, capsys) -> None:
    """`memconform validate FILE`: detected from its head, read once, same verdict as in process."""
    raw = json.dumps(case["document"], ensure_ascii=False, indent=2).replace("Infinity", "1e400")
    target = tmp_path / "archive.memorizz.json"
    target.write_text(raw, "utf-8")
    options = [a for k, v in (case.get("options") or {}).items() for a in ("--option", f"{k}={v}")]
    code = cli_main(["validate", str(target), "--json", *options])
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["format"] == "memorizz"
    assert code == (1 if case["verdict"] == "invalid" else 0)
    assert set(verdict["failed"]) == set(case["breaks"])


def test_over_size_file_is_refused_before_reading(tmp_path, monkeypatch, capsys) -> None:
    target = tmp_path / "big.memorizz.json"
    target.write_text('{"format": "memorizz.memory", "version": 1, "pad": "' + "x" * 5000 + '"}', "utf-8")
    real_open = open

    def guarded_open(file, mode="r", *args, **kwargs):
        if str(file) == str(target) and "b" in mode:
            class Head:  # the sniffer may read the head; nothing may read the whole file
                def __init__(self):
                    self.fh = real_open(file, mode, *args, **kwargs)

                def read(self, n=-1):
                    assert 0 < n <= 64 * 1024, "the whole over-limit file was read"
                    return self.fh.read(n)

                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    self.fh.close()
            return Head()
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded_open)
    monkeypatch.setattr("pathlib.Path.open", lambda self, mode="r", *a, **k: guarded_open(self, mode, *a, **k))
    code = cli_main(["validate", str(target), "--json", "--option", "memorizz.max_bytes=4KiB"])
    verdict = json.loads(capsys.readouterr().out)
    assert code == 1 and verdict["failed"] == ["memorizz.within_limits"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["json"][:30] for v in VECTORS])
def test_canonical_golden_vectors(vector) -> None:
    value = json.loads(vector["json"])
    assert mz.canonical_text(value) == vector["canonical"]
    assert mz.canonical_text_exact(value) == vector["canonical"]


def test_fast_writer_is_used_only_when_exact() -> None:
    assert not mz.needs_exact_writer({"a": [0.5, 1234.25, 1e-4], "b": 3})
    for special in (1.0, -0.0, 1e-5, 1e16, 1e21, 5e-324):
        assert mz.needs_exact_writer({"a": [0.5, {"x": special}]})


def test_key_order_utf16_differs_from_code_points() -> None:
    value = {"\uff61": 1, "\U0001f600": 2}
    assert mz.canonical_text(value) == '{"\uff61":1,"\U0001f600":2}'
    assert mz.canonical_text(value, "utf16") == '{"\U0001f600":2,"\uff61":1}'
    assert not mz.key_orders_agree(mz.canonical_bytes(value))


@FUZZ
@given(st.dictionaries(st.text(max_size=4), st.dictionaries(st.text(max_size=3), st.integers(), max_size=4), max_size=6))
def test_key_orders_agree_only_when_both_orders_write_the_same_text(value) -> None:
    """The digest check computes the other key order's digest only when the text says the two may differ."""
    text = mz.canonical_bytes(value)
    if mz.key_orders_agree(text):
        assert mz.canonical_bytes(value, "utf16") == text
    else:
        assert any(ord(c) >= 0xE000 for c in text.decode("utf-8"))


def test_key_orders_agree_on_text_below_u_e000() -> None:
    assert mz.key_orders_agree(mz.canonical_bytes({"caf\u00e9": 1, "\u2602": [2], "\ud7ff": "z"}))
    assert not mz.key_orders_agree(mz.canonical_bytes({"a": "\ue000"}))  # a value too: the search is by text


def as_doubles(value):
    """JSON has one number type: compare numbers as the IEEE doubles a browser reads (ints stay exact)."""
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53):
        return float(value)
    return value


@FUZZ
@given(strategies.json_values)
def test_canonical_form_round_trips(value) -> None:
    text = mz.canonical_text(value)
    assert text == mz.canonical_text_exact(value)
    # 3.014081762996721e16 is written 30140817629967210 (shortest digits, as a browser does): the same double
    assert as_doubles(json.loads(text)) == as_doubles(value)
    assert mz.canonical_text(json.loads(text)) == text  # a fixed point: re-canonicalising changes nothing


@FUZZ
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_text_round_trips(x) -> None:
    text = mz.number_text(x)
    assert float(text) == x or (x == 0 and text == "0")
    assert ".0e" not in text and not text.endswith(".0") and "e+0" not in text and "e-0" not in text
    assert ("e" in text) == (x != 0 and not 1e-6 <= abs(x) < 1e21)
    assert not math.isnan(float(text))


@settings(FUZZ, max_examples=25)
@given(strategies.archives())
def test_strategy_archives_pass_every_document_check(archive) -> None:
    results = validate_document(archive, "memorizz", Profile.named("ci"))
    assert {r.check_id: [f.title for f in r.failures] for r in results if r.outcome is not Outcome.PASSED} == {}


def test_generic_read_path_applies_the_size_limit(tmp_path, capsys) -> None:
    """A file whose head does not name the format is read the generic way: the size limit still holds."""
    doc = json.loads(json.dumps(next(c for _, c in CASES if c["id"] == "spec-example")["document"]))
    doc["stores"]["knowledge_base"][0]["data"]["notes"] = "harbor " * 20_000  # the head is all stores
    mz.seal(doc)
    late = {k: doc[k] for k in ("stores", "manifest", "taxonomy", "integrity", "version", "format")}
    target = tmp_path / "late-format.json"
    target.write_text(json.dumps(late, ensure_ascii=False), "utf-8")
    assert not mz.sniff(target.read_bytes()[:64 * 1024])
    code = cli_main(["validate", str(target), "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["format"] == "memorizz"
    code = cli_main(["validate", str(target), "--json", "--option", "memorizz.max_bytes=4KiB"])
    assert code == 1 and json.loads(capsys.readouterr().out)["failed"] == ["memorizz.within_limits"]


def test_marked_writer_falls_back_when_the_data_holds_a_marker(monkeypatch) -> None:
    from memconform.suites.memorizz.format import canonical

    monkeypatch.setattr(canonical.os, "urandom", lambda n: b"\x00" * n)
    marker = "\u2063mz" + "00" * 8 + "-0"
    value = {"a": 1.0, "b": marker, "c": [1e-7, 2.5]}
    assert mz.canonical_text_marked(value) == mz.canonical_text_exact(value)
    assert value == {"a": 1.0, "b": marker, "c": [1e-7, 2.5]}  # the swap is undone


class SmallTransport(ReferenceArchiveStore):
    """A MemoRizz consumer whose transport refuses archives over 1 MiB (the record limit's archives are 8 MB)."""

    MAX_BYTES = 1024 * 1024


def test_record_limit_behind_a_smaller_transport_limit_is_inconclusive() -> None:
    """'Transport limits can be smaller': refusing one record fewer too shows the byte limit refused, not the
    record count, so the boundary check cannot conclude (the negative control of the off-by-one branch)."""
    outcome = execute_run(["memorizz"], "python:test_memorizz:SmallTransport", Profile.named("ci"), report_dir=None,
                          check_ids=["memorizz.record_limit_at_the_boundary"])
    (result,) = outcome.results
    assert result.outcome.value == "skipped" and result.inconclusive, result.reason
    assert "transport limit" in result.reason
