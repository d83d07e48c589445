"""`translate` through the CLI reads an EMP source a line at a time (portability/sourced.py, canonical.LineReading):
judged from its file as `validate` judges it, the lines EMP's resolved view keeps chosen in a first pass that holds
per id only its newest (ts, offset), then those lines read back by offset, in the resolved order, once to count and
once as the writer writes. Its bytes, ledger, findings and refusals are those of the whole-memory path on every EMP
fixture into every other format, and on files whose resolved order is not the order of their lines (updates,
ties, tombstones of both kinds, lines a 1.x reader skips, blank lines, CRLF); what load() would not read as lines
is read whole. A refusal midway and a source changed between the passes: tests/test_portability_sourced.py."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest
from memconform.core.profile import Profile
from memconform.portability.formats import formats, portable
from memconform.portability.sourced import read_source
from memconform.portability.translate import translate
from memconform.run.validate import validate_file
from memconform.suites.emp import format as emp
from portability_kit import SMALL, assert_same, both, fix_the_clock

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "emp").glob("*/*.json"))
TARGETS = tuple(f for f in formats() if f != "emp")


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch):
    fix_the_clock(monkeypatch)


def _file(folder: Path, text: str | bytes, name: str = "memory.jsonl") -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _same_everywhere(path: Path, folder: Path) -> list[object]:
    """Every target's translation of `path` read by lines, held equal to the whole-memory path's; the whole ones."""
    out = folder / "out"
    out.mkdir(exist_ok=True)
    said = []
    for target in TARGETS:
        whole, written, text = both(path, "emp", target, out)
        assert_same(whole, written, text, f"{path.name}: emp -> {target}")
        said.append(whole)
    assert list(out.iterdir()) == [], "a temporary file was left behind"
    return said


def test_emp_declares_a_line_reading_and_no_window_reading():
    assert portable("emp").lines is not None and portable("emp").reading is None
    assert len(FIXTURES) > 20, FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURES])
def test_every_emp_fixture_read_by_lines_equals_the_whole_memory_path(path, tmp_path):
    text = json.loads(path.read_text(encoding="utf-8"))["document"]
    _same_everywhere(_file(tmp_path, text), tmp_path)


def test_the_emp_fixtures_hold_refusals_and_translations():
    # the control that the fixture test compares both outcomes, not two refusals or two passes
    outcomes = {translate(json.loads(p.read_text(encoding="utf-8"))["document"], "emp", "amps").refused is None
                for p in FIXTURES}
    assert outcomes == {True, False}


def _id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _line(entry: dict[str, object]) -> str:
    return json.dumps(entry, ensure_ascii=False)


def _shuffled_history(seed: int, ids: int = 40) -> tuple[str, list[str]]:
    """(a memory.jsonl whose resolved order is not its line order, its ids): several lines per id at random times,
    ties on ts (the later line wins), tombstones of both kinds and a newer line after one, a 2.0 line (skipped),
    float times, blank and whitespace lines, CRLF line ends, an escape-hatch block that contradicts its line."""
    rng = random.Random(seed)
    names = [_id(rng) for _ in range(ids)]
    lines = []
    for n in range(ids * 4):
        entry_id = rng.choice(names)
        ts = rng.choice([rng.randrange(1, 10_000), 5000, 5000.0, 7000.5])
        entry: dict[str, object] = {"v": rng.choice(["1.0", "1.2"]), "id": entry_id, "ts": ts,
                                    "src": "com.example.app", "content": f"line {n} of {entry_id[:8]}"}
        kind = rng.randrange(10)
        if kind == 0:
            entry["meta"] = {"deleted": True}
            entry["content"] = ""
        elif kind == 1:
            entry["type"] = "tombstone"
        elif kind == 2:
            entry["v"] = "2.0"  # a newer major: a 1.x reader skips the line
        elif kind == 3:
            entry["tags"] = ["a", "b"]
            entry["emb"] = [0.5, 1, -2.25]
            entry["type"] = "fact"
        elif kind == 4:  # the block says the shown text was invented (it is not empty): refused, warned
            entry["meta"] = {"memconform_port": {"invented": ["text"], "fields": {"origin_session": "s-1"}}}
        elif kind == 5:
            entry["x_unknown"] = {"nested": [1, "two"]}
        lines.append(_line(entry))
        if rng.randrange(8) == 0:
            lines.append(rng.choice(["", "   ", "\t"]))
    text = "".join(line + ("\r\n" if i % 7 == 3 else "\n") for i, line in enumerate(lines))
    return text, names


@pytest.mark.parametrize("seed", [1, 2])
def test_a_history_resolved_out_of_line_order_read_by_lines_equals_the_whole_memory_path(seed, tmp_path):
    text, _ = _shuffled_history(seed)
    path = _file(tmp_path, text)
    # the controls: the file is valid, and its resolved order is not the order of its lines
    kept = portable("emp").lines.chosen(  # type: ignore[union-attr]
        (offset, parsed) for offset, parsed in _offsets(text.encode("utf-8")) if parsed is not None)
    assert list(kept) != sorted(kept), "the resolved order is the line order: nothing is reordered"
    said = _same_everywhere(path, tmp_path)
    assert all(tr.refused is None for tr in said), [tr.refused for tr in said]
    resolved = emp.resolve(emp.iter_text(text), keep_tombstones=True)
    assert all(tr.ledger.records_in == len(resolved) == len(kept) for tr in said)
    warnings = [w for tr in said for w in tr.ledger.warnings]
    assert any("block gives a text that contradicts" in w for w in warnings), warnings


def _offsets(raw: bytes) -> list[tuple[int, object]]:
    found, at = [], 0
    for line in raw.splitlines(keepends=True):
        found.append((at, portable("emp").lines.line(line)))  # type: ignore[union-attr]
        at += len(line)
    return found


def test_a_lone_surrogate_and_a_1e21_ts_read_by_lines_equal_the_whole_memory_path(tmp_path):
    rng = random.Random(3)
    text = "".join(_line(entry) + "\n" for entry in [
        {"v": "1.0", "id": _id(rng), "ts": 2000, "src": "com.example.app", "content": "kept"},
        {"v": "1.0", "id": _id(rng), "ts": 1e21, "src": "com.example.app", "content": "far"},
        {"v": "1.0", "id": _id(rng), "ts": 1000, "src": "com.example.app", "content": "lone \ud800 half"},
    ]).encode("utf-8", "surrogatepass").replace(b"\xed\xa0\x80", b"\\ud800")  # the escape, as JSON writes it
    said = _same_everywhere(_file(tmp_path, text), tmp_path)
    assert any(tr.refused is None for tr in said), [tr.refused for tr in said]


def test_a_refused_emp_source_read_by_lines_is_refused_as_the_whole_path_refuses_it(tmp_path):
    rng = random.Random(4)
    text = "".join(_line({"v": "1.0", "id": _id(rng), "ts": ts, "src": "com.example.app", "content": "x"}) + "\n"
                   for ts in (3, -1, 2))  # a negative ts: EMP's checks refuse the file
    said = _same_everywhere(_file(tmp_path, text), tmp_path)
    assert all(tr.refused and "emp.ts_millis" in tr.refused for tr in said), [tr.refused for tr in said]


def test_a_source_that_is_not_utf8_is_refused_as_validate_refuses_it(tmp_path):
    """Read by lines, the source is judged as `memconform validate` judges the file: a line that is not UTF-8
    breaks a MUST (lines_utf8), so nothing is written (the CLI's whole-memory path judges such a file from its bytes
    too: the next test)."""
    rng = random.Random(5)
    good = _line({"v": "1.0", "id": _id(rng), "ts": 1, "src": "com.example.app", "content": "fine"})
    bad = _line({"v": "1.0", "id": _id(rng), "ts": 2, "src": "com.example.app", "content": "caf@"})
    path = _file(tmp_path, (good + "\n" + bad + "\n").encode("utf-8").replace(b"caf@", b"caf\xe9"))
    _, _, results = validate_file(path, "emp", Profile.named("ci"), None, 1 << 20)
    assert any(r.check_id == "emp.lines_utf8" and r.outcome.value == "failed" for r in results)
    first = read_source(path, "emp", "amps", window=SMALL)
    assert first is not None and first.refused is not None and "emp.lines_utf8" in first.refused, first.refused


@pytest.mark.parametrize("named", [True, False])
def test_the_cli_refuses_a_source_that_is_not_utf8_whether_named_or_detected(tmp_path, capsys, named):
    """Without --from the file is read whole (the detection leaves a text that is not UTF-8 to load()), which used to
    replace the bytes with U+FFFD and call the text `kept`: now it is refused with validate's words, as the line path
    refuses it; nothing is written. The same file in UTF-8 is the control: it translates."""
    from memconform.cli.main import main

    rng = random.Random(5)
    good = _line({"v": "1.0", "id": _id(rng), "ts": 1, "src": "com.example.app", "content": "fine"})
    bad = _line({"v": "1.0", "id": _id(rng), "ts": 2, "src": "com.example.app", "content": "caf@"})
    text = (good + "\n" + bad + "\n").encode("utf-8")
    for data, code in ((text.replace(b"caf@", b"caf\xe9"), 1), (text.replace(b"caf@", "café".encode()), 0)):
        path, out = _file(tmp_path, data), tmp_path / "out.json"
        out.unlink(missing_ok=True)
        capsys.readouterr()
        assert main(["translate", str(path), *(["--from", "emp"] if named else []), "--to", "amps", "--out", str(out)]) \
            == code
        said = capsys.readouterr()
        assert out.exists() == (code == 0)
        if code:
            assert "refused" in said.err and "emp.lines_utf8" in said.err, said.err


def test_what_load_would_not_read_as_lines_is_read_whole(tmp_path):
    rng = random.Random(6)
    entry = {"v": "1.0", "id": _id(rng), "ts": 1, "src": "com.example.app", "content": "one"}
    one_line = _file(tmp_path, _line(entry) + "\n", "one.jsonl")
    assert read_source(one_line, "emp", "amps") is not None  # the control: one EMP line is read by lines
    pretty = _file(tmp_path, json.dumps(entry, indent=2) + "\n", "pretty.json")  # one JSON value over lines
    assert read_source(pretty, "emp", "amps") is None
    case = _file(tmp_path, json.dumps({"document": _line(entry), "verdict": "valid"}) + "\n", "case.json")
    assert read_source(case, "emp", "amps") is None  # a fixture case: load() reads the document inside it
    omp_like = _file(tmp_path, json.dumps({"omp_version": "1.0", "memories": []}) + "\n", "export.json")
    assert read_source(omp_like, "emp", "amps") is None  # one line another format claims: load() keeps the object
    assert read_source(_file(tmp_path, "\n \n", "blank.jsonl"), "emp", "amps") is None
    assert read_source(tmp_path / "missing.jsonl", "emp", "amps") is None
