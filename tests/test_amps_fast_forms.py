"""The AMPS bulk paths say what the one-by-one readings say: the common date-time shape (one match over
all strings, the C parser for instants), the schema's format places, and the counting scan."""

from __future__ import annotations

import copy
import datetime as dt
import functools
import importlib
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.suites.amps import format as amps
from memconform.suites.amps.format.schema_sites import format_sites_of
from memconform.suites.amps.format.string_formats import (
    PLAIN_DATE_TIME_PATTERN,
    PLAIN_URI_PATTERN,
    instant,
    is_date_time,
    is_uri,
    parse_date_time,
    plain_date_times,
)

FUZZ = settings(max_examples=300, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
FEW = settings(FUZZ, max_examples=50)  # strings drawn from a long regex are slow to make

_PIECES = ["0000", "0001", "1999", "2000", "2023", "2024", "9999", "-", "00", "01", "02", "12", "13", "28", "29", "30",
           "31", "32", "T", "t", " ", "\n", ":", "23", "24", "59", "60", "61", ".", "5", "123456", "1234567", "Z", "z",
           "+", "-", "+23:59", "-24:00", "+05:30", "+0530", "\u0660", "x"]


@st.composite
def near_date_times(draw):
    """Strings built around the date-time shape: mostly valid ones, with every part nudged."""
    year = draw(st.sampled_from(["0000", "0001", "1999", "2000", "2023", "2024", "9999"]))
    month = draw(st.sampled_from(["00", "01", "02", "04", "06", "09", "11", "12", "13"]))
    day = draw(st.sampled_from(["00", "01", "28", "29", "30", "31", "32"]))
    sep = draw(st.sampled_from(["T", "T", "t", " ", "\n"]))
    hour = draw(st.sampled_from(["00", "09", "19", "23", "24"]))
    minute = draw(st.sampled_from(["00", "59", "60"]))
    second = draw(st.sampled_from(["00", "59", "60", "61"]))
    fraction = draw(st.sampled_from(["", ".5", ".123456", ".1234567", ".", ".9999995"]))
    zone = draw(st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+23:59", "-24:00", "+05:30", "+0530", "+05"]))
    text = f"{year}-{month}-{day}{sep}{hour}:{minute}:{second}{fraction}{zone}"
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(_PIECES)) + text[at + draw(st.integers(0, 2)):]
    return text


@FUZZ
@given(st.lists(near_date_times(), min_size=1, max_size=6))
def test_plain_shape_passes_only_what_ajv_formats_accepts(values):
    if plain_date_times(set(values)):
        assert all(is_date_time(v) for v in values), values


@FUZZ
@given(near_date_times())
def test_instant_is_the_reading_of_parse_date_time(value):
    assert instant(value) == parse_date_time(value)
    if instant(value) is not None:
        assert instant(value).utcoffset() == parse_date_time(value).utcoffset()


def test_plain_shape_takes_the_common_forms():
    common = {"2024-02-28T23:59:59Z", "2024-12-31T00:00:00.123456+05:30", "1999-04-30T12:00:00-23:59"}
    assert plain_date_times(common)
    assert plain_date_times(set())
    for odd in ("2024-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-01-01t00:00:00Z", "2024-01-01T00:00:00",
                "2024-01-01T00:00:00Z\n2024-01-01T00:00:00Z", "0000-01-01T00:00:00Z"):
        assert not plain_date_times(common | {odd}), odd


def test_format_places_of_the_published_schema():
    sites = dict((steps, name) for steps, name in amps.format_sites())
    assert sites == {("exported_at",): "date-time", ("atoms", None, "valid_from"): "date-time",
                     ("atoms", None, "valid_to"): "date-time", ("atoms", None, "created_at"): "date-time",
                     ("artifacts", None, "captured_at"): "date-time", ("artifacts", None, "media_url"): "uri"}


def test_format_places_are_not_guessed_for_other_applicators():
    known = {"date-time", "uri"}
    for schema in ({"anyOf": [{"format": "date-time"}]}, {"properties": {"a": {"$ref": "https://x/y"}}},
                   {"$defs": {"A": {"properties": {"n": {"$ref": "#/$defs/A"}}}}, "$ref": "#/$defs/A"},
                   {"properties": {"a": {"format": "email"}}}, {"additionalProperties": {"format": "uri"}},
                   {"properties": {"a": {"$id": "https://x/", "format": "uri"}}}):
        assert format_sites_of(schema, known) is None, schema
    assert format_sites_of({"items": {"format": "uri"}, "properties": {"a": True}}, known) == (((None,), "uri"),)


def _export(atoms, artifacts):
    return {"export_version": "0.1.0", "exported_at": "2024-01-01T00:00:00Z", "subject": {"subject_id": "s"},
            "atoms": atoms, "artifacts": artifacts}


def _atom(i, **more):
    atom = {"atom_id": f"a{i}", "kind": "fact", "text": "t", "created_at": "2024-01-01T00:00:00Z",
            "provenance": {"derivation": "stated"}}
    atom.update(more)
    return atom


def test_schema_fast_path_judges_each_format_place():
    good = _export([_atom(1, valid_from="2024-01-01T00:00:00Z", valid_to=None)],
                   [{"artifact_id": "r", "kind": "chat", "captured_at": "2024-02-29T00:00:00z",
                     "media_url": "https://example.org/a"}])
    assert amps.schema_surely_valid(good)  # a 29th of February and a lower-case z: the full reading takes them
    for steps, bad in ((("atoms", 0, "valid_to"), "2023-02-29T00:00:00Z"), (("exported_at",), "yesterday"),
                       (("artifacts", 0, "media_url"), "not a uri"), (("atoms", 0, "created_at"), "2024-01-01")):
        doc = copy.deepcopy(good)
        node = doc
        for step in steps[:-1]:
            node = node[step]
        node[steps[-1]] = bad
        assert not amps.schema_surely_valid(doc), steps
        assert amps.schema_errors(doc), steps


def test_scan_counts_and_reports_as_before():
    atoms = [_atom(0, valid_from="2024-01-02T00:00:00Z", valid_to="2024-01-01T00:00:00.5+01:00", sensitivity="public",
                   provenance={"derivation": "inferred", "artifact_ids": ["r", "gone"]}),
             _atom(1, valid_from="2024-01-01T00:00:00Z", valid_to="2024-01-01T01:00:00+01:00",
                   provenance={"derivation": "observed"}, text="x" * 501)]
    found = amps.scan(_export(atoms, [{"artifact_id": "r", "kind": "chat", "captured_at": "2024-01-01T00:00:00Z",
                                       "atom_ids": ["a0", "a9"]}]))
    assert found.observed == {"inferred_has_sources": 1, "observed_has_sources": 1, "atom_labels": 2,
                              "atom_labels_required": 2, "valid_to_not_before_valid_from": 2,
                              "text_at_most_500": 2, "references_resolve": 4}
    paths = {rule: [p.path for p in problems] for rule, problems in found.problems.items()}
    assert paths["references_resolve"] == ["$.atoms[0].provenance.artifact_ids[1]", "$.artifacts[0].atom_ids[1]"]
    assert paths["inferred_has_sources"] == ["$.atoms[0].provenance.extractor"]
    assert paths["observed_has_sources"] == ["$.atoms[1].provenance.artifact_ids"]
    assert paths["valid_to_not_before_valid_from"] == ["$.atoms[0].valid_to", "$.atoms[1].valid_to"]
    assert found.zero_length == 1  # 01:00+01:00 is the very instant 00:00Z
    assert paths["atom_labels"] == ["$.atoms[1].sensitivity"]
    assert paths["text_at_most_500"] == ["$.atoms[1].text"]
    assert instant("2024-01-01T01:00:00+01:00") == dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


# ---- the plain patterns: the formats of a window in their common shapes judged in Rust -----------

@functools.cache
def _rust_pattern(pattern: str):
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator({"pattern": pattern})


def _rust_matches(pattern: str, value: str) -> bool:
    """How jsonschema-rs (the validator the windows use) reads the pattern."""
    return _rust_pattern(pattern).is_valid(value)


@FEW
@given(st.from_regex(PLAIN_DATE_TIME_PATTERN, fullmatch=True))
def test_plain_date_time_pattern_holds_only_ajv_formats_date_times(value):
    assert is_date_time(value) and plain_date_times({value}), value
    assert _rust_matches(PLAIN_DATE_TIME_PATTERN, value)


@FUZZ
@given(near_date_times())
def test_plain_date_time_pattern_reads_alike_in_rust_and_python(value):
    in_python = re.fullmatch(PLAIN_DATE_TIME_PATTERN[1:-1], value, re.ASCII) is not None
    assert _rust_matches(PLAIN_DATE_TIME_PATTERN, value) == in_python, value
    if in_python:
        assert is_date_time(value)


@FEW
@given(st.from_regex(PLAIN_URI_PATTERN, fullmatch=True))
def test_plain_uri_pattern_holds_only_ajv_formats_uris(value):
    assert is_uri(value), value
    assert _rust_matches(PLAIN_URI_PATTERN, value)


def test_plain_patterns_take_the_common_forms_and_refuse_the_rest():
    # positive controls: the shapes exports carry
    for value in ("2024-01-01T00:00:00Z", "0001-12-31T23:59:59.999999+05:30", "2024-02-28T00:00:00-23:59"):
        assert _rust_matches(PLAIN_DATE_TIME_PATTERN, value), value
    for value in ("https://media.example/0.m4a", "http://h:8080/a/b/", "https://a-b.c"):
        assert _rust_matches(PLAIN_URI_PATTERN, value), value
    # not plain (some are valid, the exact path then judges them): the pattern must refuse them all
    for value in ("0000-01-01T00:00:00Z", "2024-02-29T00:00:00Z", "2024-01-01T00:00:00z", "2024-01-01t00:00:00Z",
                  "2024-01-01 00:00:00Z", "2024-01-01T00:00:60Z", "2024-01-01T00:00:00.1234567Z",
                  "2024-01-01T00:00:00Z\n", "\n2024-01-01T00:00:00Z", "2024-01-01T00:00:00+0530", "2024-01-01",
                  "2024-01-01T00:00:00\u0660Z", "x2024-01-01T00:00:00Z"):
        assert not _rust_matches(PLAIN_DATE_TIME_PATTERN, value), value
    for value in ("https://a.example/?q=1", "https://a.example/#f", "mailto:a@b", "https://a.example/é",
                  "https://a.example/ b", "https://a.example/\n", "//a.example/", "ftp://a.example/"):
        assert not _rust_matches(PLAIN_URI_PATTERN, value), value


def test_with_plain_patterns_adds_a_pattern_beside_each_known_format_only():
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": "date-time"},
                                               "format": {"type": "string", "format": "uri"},
                                               "e": {"type": "string", "format": "email"},
                                               "c": {"const": {"format": "date-time"}}}}
    out = amps.with_plain_patterns(schema)
    assert out["properties"]["a"]["pattern"] == PLAIN_DATE_TIME_PATTERN
    assert out["properties"]["format"]["pattern"] == PLAIN_URI_PATTERN
    assert "pattern" not in out["properties"]["e"] and out["properties"]["c"] == {"const": {"format": "date-time"}}
    assert "pattern" not in schema["properties"]["a"]  # a copy
    assert amps.with_plain_patterns({"type": "string", "format": "uri", "pattern": "^h"}) is None


def _every_section_slice():
    from memconform.kit.fixtures_loader import fixture_root

    for case in sorted((fixture_root() / "amps").glob("*/*.json")):
        data = json.loads(case.read_text("utf-8"))
        doc = data.get("document") if isinstance(data, dict) else None
        name = case.stem
        for section in ("atoms", "artifacts"):
            items = doc.get(section) if isinstance(doc, dict) else None
            if isinstance(items, list):
                yield name, section, items


def test_section_errors_with_and_without_the_plain_patterns_are_the_same(monkeypatch):
    """The fast path against the path before it, on every AMPS fixture and on atoms whose formats are
    valid but not plain (so the patterned validator says no and the exact path must say yes)."""
    cases = list(_every_section_slice())
    assert cases
    odd = _export([_atom(0, valid_from="2024-02-29T00:00:00z", created_at="2024-01-01 00:00:00Z")],
                  [{"artifact_id": "r", "kind": "chat", "captured_at": "2024-01-01T00:00:60Z",
                    "media_url": "urn:isbn:0451450523"}])
    cases += [("odd", section, odd[section]) for section in ("atoms", "artifacts")]
    fast = {(name, section): amps.section_schema_errors(section, items, 3) for name, section, items in cases}
    assert amps.section_schema_errors("atoms", odd["atoms"], 0) == []  # valid, judged by the exact path
    monkeypatch.setattr(importlib.import_module("memconform.suites.amps.format.schema"), "_section_plain", lambda section: None)
    slow = {(name, section): amps.section_schema_errors(section, items, 3) for name, section, items in cases}
    assert fast == slow
    assert any(fast.values()) and not all(fast.values())  # both outcomes were exercised
