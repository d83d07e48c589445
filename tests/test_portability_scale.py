"""`translate` at scale (issue 32): the text the CLI writes piece by piece (jsontext.py, orjson) is byte for
byte json.dumps(indent=2)'s, for every fixture and a generated document of every format; the CLI's path
(the source let go once read, the records once written) gives the ledger the whole-document path gives;
the ledger's running counts and shared per-record lines say what a recount says; writing the text never
holds it whole. Time is bench/bench_translate.py's (timing never decides a test); memory is judged by
tracemalloc, which counts allocations, not the machine's load."""

from __future__ import annotations

import json
import math
import sys
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.portability.formats import formats, portable
from memconform.portability.jsontext import STREAM_ABOVE, pieces
from memconform.portability.matrix import sample_files
from memconform.portability.translate import chunks, load, read_checked, translate, write_read

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_translate import generate  # noqa: E402
from portability_kit import fix_the_clock  # noqa: E402

RECORDS = 2000  # enough for a store or section past STREAM_ABOVE and for shared ledger lines to show
FORMATS = formats()
FIXTURES = [(fmt, path) for fmt in FORMATS for path in sample_files(fmt)]


def _stdlib(value):
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)


@pytest.fixture
def fixed_now(monkeypatch):
    fix_the_clock(monkeypatch)


def _recount(ledger):
    out = Counter()
    for fields in ledger.per_record.values():
        out.update((name, status) for name, status in fields.items() if not name.startswith("+"))
    return {key: n for key, n in out.items() if n}


@pytest.mark.parametrize(("fmt", "path"), FIXTURES, ids=[f"{f}/{p.name}" for f, p in FIXTURES])
def test_fixture_outputs_and_ledgers_are_the_stdlib_text(fmt, path):
    source, doc = load(path)
    for target in FORMATS:
        if target == fmt:
            continue
        tr = translate(doc, source, target)
        if not portable(target).text:  # a text format's lines (EMP's) are json.dumps's own, written whole
            assert "".join(chunks(target, tr.output)) == _stdlib(tr.output) + "\n", f"{fmt} -> {target}"
        ledger = tr.ledger.to_json()
        assert "".join(pieces(ledger)) == _stdlib(ledger)
        assert {k: n for k, n in tr.ledger.tally.items() if n} == _recount(tr.ledger), f"{fmt} -> {target}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_generated_document_cli_path_equals_whole_document_path(fmt, tmp_path, fixed_now, capsys):
    src = tmp_path / f"{fmt}.in"
    src.write_text(generate(fmt, RECORDS), encoding="utf-8")
    source, doc = load(src, fmt)
    for target in FORMATS:
        if target == fmt:
            continue
        whole = translate(doc, source, target)
        assert whole.refused is None, whole.refused
        out, ledger = tmp_path / f"{target}.out", tmp_path / f"{target}.ledger.json"
        assert main(["translate", str(src), "--from", fmt, "--to", target, "--out", str(out), "--ledger", str(ledger)]) == 0
        expected = whole.output if portable(target).text else _stdlib(whole.output) + "\n"
        assert out.read_text(encoding="utf-8") == expected, f"{fmt} -> {target}: output"
        assert ledger.read_text(encoding="utf-8") == _stdlib(whole.ledger.to_json()) + "\n", f"{fmt} -> {target}: ledger"
        assert capsys.readouterr().out.strip() == whole.ledger.summary()
        # records written alike share their ledger lines: a handful of patterns, not one dict per record
        assert len({id(v) for v in whole.ledger.per_record.values()}) <= 8
        assert {k: n for k, n in whole.ledger.tally.items() if n} == _recount(whole.ledger)


def test_a_later_note_does_not_change_a_shared_pattern():
    from memconform.portability.ledger import Ledger

    ledger = Ledger("omp", "amps")
    for rid in ("a", "b"):
        ledger.note(rid, "text", "kept")
        ledger.share(rid)
    assert ledger.per_record["a"] is ledger.per_record["b"]
    ledger.note("a", "text", "lost", "cut")
    assert dict(ledger.per_record["a"]) == {"text": "lost"} and dict(ledger.per_record["b"]) == {"text": "kept"}
    assert ledger.counts()["text"] == Counter({"kept": 1, "lost": 1})


EDGES = [
    {"floats": [1e-4, 9.99e-5, 1e-5, 1e-7, 5e-324, -2.5e-9, 0.0, -0.0, 1e16, 1e22, 1.7976931348623157e308, 0.1, 1e-100]},
    {"ints": [2**63 - 1, -(2**63), 2**64, 10**30]},
    {1: "int key", None: "null key", False: "bool key", 2.5: "float key"},
    {"text": "quote \" backslash \\ tab \t line\nbreak \x00 \x1f \x7f \u2028 \u2029 é ☃ 😀"},
    {"lone": "\ud800 surrogate"},
    {"empty": {"list": [], "dict": {}}, "nested": [[[]], [{}], {"a": [{}]}]},
    {"deep": {"store": [{"id": str(i), "data": {"x": i / 7, "y": [i, 1e-6]}} for i in range(STREAM_ABOVE + 5)]}},
    [],
    {},
    "a string",
    3.5e-6,
]


@pytest.mark.parametrize("value", EDGES, ids=range(len(EDGES)))
def test_edge_values_are_the_stdlib_text(value):
    assert "".join(pieces(value)) == _stdlib(value)


@pytest.mark.parametrize("value", [math.nan, {"a": [math.inf]}, {"a": {"b": -math.inf}}])
def test_a_value_no_json_text_holds_is_refused_as_json_refuses_it(value):
    with pytest.raises(ValueError, match="JSON compliant"):
        "".join(pieces(value))


@pytest.mark.parametrize("target", [fmt for fmt in FORMATS if not portable(fmt).text])
def test_writing_the_text_never_holds_it_whole(target):
    """Peak allocation while the text is written piece by piece stays a small part of the text's size."""
    source = "omp" if target != "omp" else "amps"
    first = read_checked(json.loads(generate(source, RECORDS)), source, target)
    output = write_read(first, keep_canonical=False).output
    size = sum(len(p) for p in chunks(target, output))
    tracemalloc.start()
    try:
        for piece in chunks(target, output):
            len(piece)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 500_000
    assert peak < size / 20, f"{target}: {peak} bytes at the peak while writing {size} characters"


@pytest.mark.parametrize("text", ["", "plain ascii", "é☃ combining e\u0301", "😀 astral 𝄞", "\ud800 lone \udfff", "a" * 300 + "😀"])
def test_text_units_counted_in_c_equal_a_count_per_character(text):
    from memconform.suites.omp.portability.textlimits import cut, pieces, units

    assert units(text) == len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    for limit in (2, 3, 5, units(text), units(text) + 1):
        assert units(cut(text, limit)) <= limit and "".join(pieces(text, limit)) == text
    assert cut(text, units(text)) == text
    if units(text) > 2:
        assert cut(text, units(text) - 1) != text


def _records_held(value, depth=0):
    """Objects held in the lists of a parsed document's first levels (where every format keeps its records)."""
    if isinstance(value, dict) and depth < 3:
        return sum(_records_held(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return sum(1 for item in value if isinstance(item, dict))
    return 0


@pytest.mark.parametrize("fmt", [fmt for fmt in FORMATS if not portable(fmt).text])
def test_the_cli_path_lets_go_of_what_it_has_read_and_the_library_keeps_it(fmt):
    """consume / keep_canonical=False (the CLI): the parsed records and the canonical ones are let go as they are
    read and written, and what comes out is what the keeping path gives; translate() leaves the caller's
    document as it was handed."""
    import copy

    target = "emp" if fmt != "emp" else "omp"
    doc = json.loads(generate(fmt, 80))
    handed = copy.deepcopy(doc)
    kept = translate(doc, fmt, target)
    assert doc == handed, "translate() changed the document it was handed"
    assert _records_held(doc) >= 80
    first = read_checked(doc, fmt, target, consume=True)
    assert _records_held(doc) == 0, "the parsed records were not let go as they were read"
    records = first.canonical.records
    assert len(records) == 80 and all(r is not None for r in records)
    done = write_read(first, keep_canonical=False)
    assert records == [None] * 80, "the canonical records were not let go as they were written"
    assert done.output == kept.output and done.ledger.to_json() == kept.ledger.to_json()
