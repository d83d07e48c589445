"""`translate` through the CLI reads an AMPS or MemoryAI source in windows (portability/sourced.py): judged from
its file as `validate` judges it, counted in a first pass, then each canonical record handed to a one-pass writer as
it is read. Its bytes, ledger, findings and refusals are those of the whole-memory path (translate.translate) on
every fixture document of those formats (valid and invalid) into every other format, on generated documents read
in many windows, with repeated ids, unwritable text and refused escape-hatch values; a refusal midway leaves no
file, and a file that changes between the passes is a harness error, never a shorter output."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.core.results import HarnessError
from memconform.portability.formats import formats, portable
from memconform.portability.sourced import read_source
from memconform.portability.translate import dump, load, translate
from memconform.portability.written import write_judged

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_translate import generate  # noqa: E402
from portability_kit import (  # noqa: E402
    SMALL,
    assert_same,
    both,
    fix_the_clock,
    plain_file,
    spy_on_read_source,
    stopping_writer,
)

FORMATS = formats()
WINDOWED = tuple(f for f in FORMATS if portable(f).reading is not None)
FIXTURES_ROOT = Path(__file__).resolve().parents[1] / "fixtures"
CASES = [(fmt, path) for fmt in WINDOWED for path in sorted((FIXTURES_ROOT / fmt).glob("*/*.json"))]
RECORDS = 300  # a generated document: hundreds of windows at SMALL


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch):
    fix_the_clock(monkeypatch)


def test_the_formats_read_in_windows_are_the_ones_with_a_reading():
    # the control that the tests below test something: AMPS, MemoryAI, MemoRizz and OMP declare their readers in steps
    assert set(WINDOWED) == {"amps", "memoryai", "memorizz", "omp"}, WINDOWED
    assert len(CASES) > 100, len(CASES)


def _has_sections(fmt: str, doc: Any) -> bool:
    """Does the document hold a record section as an array (what the window reader reads in windows)?"""
    reading = portable(fmt).reading
    holder = doc.get(reading.group) if isinstance(doc, dict) and reading.group else doc
    return isinstance(holder, dict) and any(isinstance(holder.get(s), list) for s in reading.sections)


def _document(path: Path) -> Any:
    case = json.loads(path.read_text(encoding="utf-8"))
    return case["document"] if isinstance(case, dict) and "document" in case and "verdict" in case else case


@pytest.mark.parametrize(("fmt", "path"), CASES, ids=[f"{f}/{p.parent.name}/{p.name}" for f, p in CASES])
def test_every_fixture_read_in_windows_equals_the_whole_memory_path(fmt, path, tmp_path):
    doc = _document(path)
    if not _has_sections(fmt, doc):
        plain = plain_file(doc, tmp_path)  # no record section: read whole, as before
        assert read_source(plain, fmt, "emp", window=SMALL) is None
        return
    folder = tmp_path / "out"
    folder.mkdir()
    plain = plain_file(doc, tmp_path)
    for target in FORMATS:
        if target != fmt:
            whole, written, text = both(plain, fmt, target, folder)
            assert_same(whole, written, text, f"{path.name}: {fmt} -> {target}")
    assert list(folder.iterdir()) == [], "a temporary file was left behind"


def test_the_fixtures_hold_refusals_and_translations():
    # the control that the fixture test compares both outcomes, not two refusals or two passes
    outcomes = set()
    for fmt, path in CASES:
        if "/invalid/" in str(path) or len(outcomes) < 2:
            doc = _document(path)
            if _has_sections(fmt, doc):
                outcomes.add(translate(doc, fmt, "emp").refused is None)
        if outcomes == {True, False}:
            return
    pytest.fail(f"only {outcomes}")


def _generated(fmt: str, records: int = RECORDS) -> dict[str, Any]:
    return json.loads(generate(fmt, records))


@pytest.mark.parametrize("fmt", WINDOWED)
def test_a_generated_document_read_in_many_windows_equals_the_whole_memory_path(fmt, tmp_path):
    plain = plain_file(_generated(fmt), tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    for target in FORMATS:
        if target != fmt:
            whole, written, text = both(plain, fmt, target, folder)
            assert whole.refused is None, whole.refused
            assert whole.ledger.records_in == RECORDS
            assert_same(whole, written, text, f"{fmt} -> {target}")


def _record_list(fmt: str, doc: dict[str, Any]) -> list[Any]:
    return doc[portable(fmt).reading.sections[0]]


def _id_field(fmt: str) -> str:
    return {"amps": "atom_id", "memoryai": "id", "omp": "id"}[fmt]


@pytest.mark.parametrize("fmt", ["amps", "memoryai", "omp"])  # MemoRizz: ids repeat only across stores (fixtures)
def test_repeated_ids_unwritable_text_and_refused_restores_read_in_windows_equal_the_whole_path(fmt, tmp_path):
    """What translate.prepare says before any writer runs, said alike when the records come in windows: a record
    whose id repeats (named `#2`, `#3`, warned in order), a lone surrogate (noted lost), an escape-hatch value that
    contradicts the visible field (warned after every repeat)."""
    doc = _generated(fmt, 60)
    items = _record_list(fmt, doc)
    key = _id_field(fmt)
    if fmt != "omp":  # OMP's checks refuse an export whose ids repeat
        items[40][key] = items[3][key]  # one id three times, far apart (other windows)
        items[55][key] = items[3][key]
    extension = "x-provider" if fmt == "amps" else "metadata"  # the escape hatch
    # a block that says the shown text was invented (it is not empty: refused), and restores a field not shown
    items[30].setdefault(extension, {})["memconform_port"] = {"invented": ["text"], "fields": {"origin_session": "s-1"}}
    if fmt != "memoryai":  # a MemoryAI bundle with a lone surrogate has no canonical form for its checksum: refused
        items[20]["text" if fmt == "amps" else "content"] += "\ud800"  # written as the escape \ud800
    else:
        from memconform.suites.memoryai import format as mai

        doc = mai.seal(doc)
    plain = plain_file(doc, tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    said = []
    for target in FORMATS:
        if target != fmt:
            whole, written, text = both(plain, fmt, target, folder, writers=None)
            assert_same(whole, written, text, f"{fmt} -> {target}")
            said.append(whole)
    warnings = [w for tr in said for w in tr.ledger.warnings]
    if all(tr.refused for tr in said):  # the control: what is compared is a translation, not a refusal
        pytest.fail(f"every translation refused: {said[0].refused}")
    assert fmt == "omp" or any("appears 3 times" in w for w in warnings), warnings
    assert any("block gives a text that contradicts" in w for w in warnings), warnings
    assert all(tr.ledger.restored for tr in said if not tr.refused)
    if fmt != "memoryai":
        assert any(tr.ledger.status(items[20][key], "text") == "lost" for tr in said if not tr.refused)


def _source_file(fmt: str, records: int, folder: Path) -> Path:
    """A generated document of `fmt` as a plain file (a text format's text as it is)."""
    if portable(fmt).text:
        path = folder / "source.jsonl"
        path.write_text(generate(fmt, records), encoding="utf-8")
        return path
    return plain_file(_generated(fmt, records), folder)


MIDWAY = [("amps", "emp"), ("memoryai", "amps"), ("amps", "memoryai"), ("emp", "amps"), ("emp", "memoryai"),
          ("emp", "omp"), ("omp", "emp"), ("omp", "memoryai")]


@pytest.mark.parametrize(("source", "target"), MIDWAY, ids=[f"{s}->{t}" for s, t in MIDWAY])
def test_a_refusal_midway_leaves_no_file_and_says_why(source, target, tmp_path):
    plain = _source_file(source, 120, tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    writers = {target: stopping_writer(target, 70)}
    whole, written, text = both(plain, source, target, folder, writers=writers)
    assert written.refused == whole.refused == "planted: refused at record 70", written.refused
    # the ledger of a refusal in a streamed writer also counts the records written before it (written.py's too)
    assert written.ledger.summary() == whole.ledger.summary()
    assert written.ledger.records_in == whole.ledger.records_in == 120
    assert text is None and list(folder.iterdir()) == []


def _grown(path: Path) -> None:
    with open(path, "ab") as grown:
        grown.write(b" ")


def _replaced(path: Path) -> None:  # another file of the same size under the name (a new inode)
    other = path.with_suffix(".other")
    other.write_bytes(path.read_bytes().replace(b"record 1", b"record X"))
    os.replace(other, path)


def _rewritten(path: Path) -> None:  # the same inode and size, written again later
    info = path.stat()
    path.write_bytes(path.read_bytes().replace(b"record 1", b"record X"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


@pytest.mark.parametrize("source", ["amps", "emp", "omp"])
@pytest.mark.parametrize("change", [_grown, _replaced, _rewritten], ids=["grown", "replaced", "rewritten"])
def test_a_source_that_changes_between_the_passes_is_a_harness_error(change, source, tmp_path):
    plain = _source_file(source, 120, tmp_path)
    first = read_source(plain, source, "amps" if source == "emp" else "emp", window=SMALL)
    assert first is not None and first.refused is None
    change(plain)
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(HarnessError, match="changed while it was translated"):
        write_judged(first, folder, window=SMALL)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("source", ["amps", "emp", "omp"])
def test_an_unchanged_source_is_written_after_the_same_steps(source, tmp_path):
    # the control of the test above: with no change between the passes the same steps write the output
    plain = _source_file(source, 120, tmp_path)
    first = read_source(plain, source, "amps" if source == "emp" else "emp", window=SMALL)
    folder = tmp_path / "out"
    folder.mkdir()
    written, part = write_judged(first, folder, window=SMALL)
    assert part is not None and written.refused is None and written.ledger.records_in == 120


def test_a_one_pass_document_refuses_a_second_pass(tmp_path):
    plain = plain_file(_generated("amps", 20), tmp_path)
    first = read_source(plain, "amps", "emp", window=SMALL)
    assert first is not None
    records = first.canonical.records
    assert len(records) == 20 and len(list(records)) == 20  # the control: the first pass meets every record
    with pytest.raises(RuntimeError, match="already written"):
        list(records)


def test_what_the_windows_cannot_read_is_read_whole(tmp_path):
    case = tmp_path / "case.json"  # a fixture case file: load() reads the document inside it
    case.write_text(json.dumps({"document": _generated("amps", 5), "verdict": "valid", "atoms": []}), encoding="utf-8")
    assert read_source(case, "amps", "emp", window=SMALL) is None
    not_json = tmp_path / "broken.json"
    not_json.write_text('{"atoms": [', encoding="utf-8")
    assert read_source(not_json, "amps", "emp", window=SMALL) is None
    assert read_source(tmp_path / "missing.json", "amps", "emp") is None
    no_section = plain_file({"omp_version": "1.0", "exported_at": "2026-01-01T00:00:00Z", "memories": None}, tmp_path)
    assert read_source(no_section, "omp", "emp") is None  # no array to read in windows
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        assert read_source(fifo, "amps", "emp") is None


@pytest.mark.parametrize(("source", "target"), [("memoryai", "emp"), ("omp", "emp"), ("emp", "amps")])
def test_the_cli_reads_a_named_source_in_windows_and_writes_what_the_whole_path_writes(source, target, tmp_path,
                                                                                       monkeypatch, capsys):
    from memconform.cli.main import main

    plain = _source_file(source, 50, tmp_path)
    calls = spy_on_read_source(monkeypatch)
    out = tmp_path / "out.txt"
    assert main(["translate", str(plain), "--from", source, "--to", target, "--out", str(out)]) == 0
    assert calls == [True]
    _, doc = load(plain, source)
    assert out.read_text(encoding="utf-8") == dump(target, translate(doc, source, target).output)


@pytest.mark.parametrize("named", [False, True])
def test_the_cli_reads_whole_what_it_cannot_read_in_windows_and_writes_the_same(named, tmp_path, monkeypatch):
    """A named source the windows cannot read (a fixture case file): parsed whole, as before, with the same output;
    no --from, the format found from a skim (detected.py, tests/test_portability_detected.py): read in windows."""
    from memconform.cli.main import main

    source = "amps"
    plain = plain_file({"document": _generated(source, 30), "verdict": "valid"} if named else _generated(source, 30), tmp_path)
    answers = spy_on_read_source(monkeypatch)
    out = tmp_path / "out.jsonl"
    assert main(["translate", str(plain), *(["--from", source] if named else []), "--to", "emp", "--out", str(out)]) == 0
    assert answers == [not named]
    _, doc = load(plain, source)
    assert out.read_text(encoding="utf-8") == dump("emp", translate(doc, source, "emp").output)


def test_an_omp_source_with_split_memories_read_in_windows_equals_the_whole_memory_path(tmp_path):
    """A text over OMP's limit is written as several memories, the later ones naming the first in their block; read
    back, their texts are joined to it. In windows the first pass finds the parts and each pass after it joins them
    as it makes the record: the parts before their first memories, in other windows."""
    from memconform.suites.omp.portability.translator import PART

    long_texts = {3: "α" * 25_000, 17: "long " * 7_000}
    lines = [json.loads(line) for line in generate("emp", 30).splitlines()]
    for i, text in long_texts.items():
        lines[i]["content"] = text
    made = translate("".join(json.dumps(line) + "\n" for line in lines), "emp", "omp")
    omp_doc = made.output
    assert omp_doc is not None, made.refused
    memories = omp_doc["memories"]
    split = [m for m in memories if PART in ((m.get("metadata") or {}).get("memconform_port") or {})]
    assert len(split) >= 3, "the control: the long texts were split into parts"
    rest = [m for m in memories if m not in split]
    memories[:] = split[::-1] + rest  # the parts first, far from their memories, in reverse order
    plain = plain_file(omp_doc, tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    said = []
    for target in FORMATS:
        if target != "omp":
            whole, written, text = both(plain, "omp", target, folder)
            assert_same(whole, written, text, f"omp -> {target}")
            said.append(whole)
    assert all(tr.refused is None for tr in said), [tr.refused for tr in said]
    assert all(tr.ledger.records_in == len(rest) for tr in said)


def _with_a_part_block(index: Any, tmp_path: Path) -> Any:
    """An OMP export whose second memory holds a part block naming the first with `index`, translated into EMP
    whole and in windows (which must agree); the whole translation."""
    from memconform.suites.omp.portability.translator import PART

    doc = translate(generate("emp", 3), "emp", "omp").output
    assert doc is not None
    first, odd = doc["memories"][0], doc["memories"][1]
    odd.setdefault("metadata", {}).setdefault("memconform_port", {"v": 1})[PART] = {"of": first["id"], "index": index,
                                                                                     "count": 2}
    folder = tmp_path / "out"
    folder.mkdir()
    whole, written, text = both(plain_file(doc, tmp_path), "omp", "emp", folder)
    assert_same(whole, written, text, "omp -> emp")
    return whole


@pytest.mark.parametrize("index", ["2", 1.5, True, [1], None, {"i": 1}, -1, 0])
def test_an_omp_part_block_whose_index_is_no_whole_number_is_read_as_a_memory_of_its_own(tmp_path, index):
    """A part block memconform did not write (its index no whole number from 1) ends in no internal error, whole or in
    windows: the memory is read as itself, and both paths agree (a part block with index 1 is the control)."""
    whole = _with_a_part_block(index, tmp_path)
    assert whole.refused is None, whole.refused
    assert whole.ledger.records_in == 3


def test_an_omp_part_block_with_index_one_is_joined_to_its_first_memory(tmp_path):
    assert _with_a_part_block(1, tmp_path).ledger.records_in == 2
