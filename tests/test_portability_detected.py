"""`translate` without --from finds the format from a skim of the file (portability/detected.py) only where that is
provably the format translate.load finds by parsing it whole, and then reads it in windows or by lines as a named
source is read: every fixture of every format, translated through the CLI with and without --from, gives the same
exit code, output bytes, ledger and summary; a document two formats claim, a fixture case, a file that is not JSON,
a one-line file, a head past its bound or a detector that declares nothing is parsed whole, as before."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.portability import detected
from memconform.portability.detected import detect_file
from memconform.portability.formats import formats, portable
from memconform.portability.translate import load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_translate import generate  # noqa: E402
from portability_kit import SMALL, fix_the_clock, plain_file  # noqa: E402

FORMATS = formats()
FIXTURES_ROOT = Path(__file__).resolve().parents[1] / "fixtures"
CASES = [(fmt, path) for fmt in FORMATS for path in sorted((FIXTURES_ROOT / fmt).glob("*/*.json"))]


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch):
    fix_the_clock(monkeypatch)


def _document(path: Path) -> Any:
    case = json.loads(path.read_text(encoding="utf-8"))
    return case["document"] if isinstance(case, dict) and "document" in case and "verdict" in case else case


def _whole_format(path: Path) -> str | None:
    try:
        return load(path)[0]
    except Exception:  # noqa: BLE001 - a file no format claims, or that does not read: the whole path refuses it
        return None


def test_every_fixture_detected_light_is_the_format_the_whole_parse_finds(tmp_path):
    light: dict[str, int] = {}
    for fmt, path in CASES:
        plain = plain_file(_document(path), tmp_path)
        found = detect_file(plain, window=SMALL)
        if found is not None:
            assert found == _whole_format(plain), path
            light[fmt] = light.get(fmt, 0) + 1
    # the control: the light answer is given for most documents of every format, not only refused
    assert set(light) == set(FORMATS) and min(light.values()) >= 5, light


def _cli(path: Path, named: str | None, target: str, folder: Path,
         capsys: Any) -> tuple[int, bytes | None, str | None, str]:
    """(exit code, output bytes or None, ledger text or None, what it printed) of one translation through the CLI."""
    from memconform.cli.main import main

    out, ledger = folder / "out.txt", folder / "ledger.json"
    out.unlink(missing_ok=True)
    ledger.unlink(missing_ok=True)
    capsys.readouterr()
    code = main(["translate", str(path), *(["--from", named] if named else []), "--to", target, "--out", str(out),
                 "--ledger", str(ledger)])
    said = capsys.readouterr()
    return (code, out.read_bytes() if out.exists() else None,
            ledger.read_text(encoding="utf-8") if ledger.exists() else None, said.out + said.err)


def _spy(monkeypatch: Any) -> list[tuple[str, bool]]:
    """The calls of sourced.read_source the CLI makes: (format, read in windows or by lines)."""
    from memconform.portability import sourced

    calls: list[tuple[str, bool]] = []
    real = sourced.read_source

    def spying(path: Path, source: str, *args: Any, **kwargs: Any) -> Any:
        found = real(path, source, *args, **kwargs)
        calls.append((source, found is not None))
        return found
    monkeypatch.setattr(sourced, "read_source", spying)
    return calls


def _next(fmt: str) -> str:
    return FORMATS[(FORMATS.index(fmt) + 1) % len(FORMATS)]


def _before(monkeypatch: Any) -> Any:
    """The CLI as it was before the skim: without --from, every file parsed whole to find its format."""
    from contextlib import contextmanager

    @contextmanager
    def whole() -> Any:
        with monkeypatch.context() as patched:
            patched.setattr(detected, "detect_file", lambda path, window=None: None)
            yield
    return whole()


@pytest.mark.parametrize(("fmt", "path"), CASES, ids=[f"{f}/{p.parent.name}/{p.name}" for f, p in CASES])
def test_every_fixture_through_the_cli_translates_alike_with_and_without_from(fmt, path, tmp_path, capsys, monkeypatch):
    plain = plain_file(_document(path), tmp_path)
    target = _next(fmt)
    found = _cli(plain, None, target, tmp_path, capsys)
    with _before(monkeypatch):
        assert _cli(plain, None, target, tmp_path, capsys) == found, f"{fmt} -> {target}: not as before"
    whole = _whole_format(plain)
    if whole is None:  # no format claims it (an invalid fixture's broken format member): refused as before
        assert found[0] == 2 and "no format recognises" in found[3], found
    else:
        assert found == _cli(plain, whole, target, tmp_path, capsys), f"{fmt} -> {target}: not as named"


def _source_file(fmt: str, records: int, folder: Path) -> Path:
    path = folder / ("source.jsonl" if portable(fmt).text else "source.json")
    path.write_text(generate(fmt, records), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_document_of_each_format_is_found_light_and_read_in_windows_or_by_lines(fmt, tmp_path, monkeypatch, capsys):
    plain = _source_file(fmt, 40, tmp_path)
    target = _next(fmt)
    named = _cli(plain, fmt, target, tmp_path, capsys)
    calls = _spy(monkeypatch)
    found = _cli(plain, None, target, tmp_path, capsys)
    assert calls == [(fmt, True)]  # found without the whole parse, then read as the named source is
    assert found == named and found[0] == 0 and found[1], found[3]
    calls.clear()
    with _before(monkeypatch):  # the control: the path before, parsed whole, never reads the source in windows
        assert _cli(plain, None, target, tmp_path, capsys) == found
    assert calls == []


def _memorizz_with_format_last(folder: Path) -> Path:
    """A MemoRizz archive whose format member comes after its stores (the skim keeps late members too)."""
    doc = json.loads(generate("memorizz", 60))
    fmt = doc.pop("format")
    doc["format"] = fmt
    assert list(doc)[-1] == "format" and list(doc).index("stores") < len(doc) - 1
    path = folder / "late.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_format_member_after_the_sections_is_still_found_light(tmp_path, monkeypatch, capsys):
    path = _memorizz_with_format_last(tmp_path)
    assert detect_file(path, window=SMALL) == "memorizz" == load(path)[0]
    named = _cli(path, "memorizz", "emp", tmp_path, capsys)
    calls = _spy(monkeypatch)
    assert _cli(path, None, "emp", tmp_path, capsys) == named
    assert calls == [("memorizz", True)]


def _claimed_twice() -> dict[str, Any]:
    """A MemoryAI bundle that is also an OMP export by its shape: detect's order decides; the skim does not."""
    doc = json.loads(generate("memoryai", 10))
    doc.update(omp_version="1.0", memories=[])
    assert portable("memoryai").detect(doc) and portable("omp").detect(doc)
    return doc


def _ambiguous(folder: Path) -> dict[str, Path]:
    files = {
        "two formats claim it": folder / "both.json",
        "a fixture case": folder / "case.json",
        "not JSON": folder / "broken.json",
        "one line of EMP": folder / "one.jsonl",
        "an EMP object among JSON formats": folder / "emp-object.json",
        "no format claims it": folder / "nobody.json",
        "no entry in the first lines": folder / "late-entry.jsonl",
    }
    files["two formats claim it"].write_text(json.dumps(_claimed_twice()), encoding="utf-8")
    files["a fixture case"].write_text(json.dumps({"document": json.loads(generate("amps", 5)), "verdict": "valid"}),
                                       encoding="utf-8")
    files["not JSON"].write_text('{"atoms": [', encoding="utf-8")
    first = generate("emp", 3).splitlines()[0]
    files["one line of EMP"].write_text(first + "\n", encoding="utf-8")
    files["an EMP object among JSON formats"].write_text(json.dumps(dict(json.loads(first), atoms=[])), encoding="utf-8")
    files["no format claims it"].write_text(json.dumps({"atoms": [{"id": "a"}], "subject": {}}), encoding="utf-8")
    # 20 lines without an entry, then entries: detect looks at the first 20 only, so no format claims the file
    files["no entry in the first lines"].write_text("".join(json.dumps({"n": i}) + "\n" for i in range(20))
                                                    + generate("emp", 5), encoding="utf-8")
    return files


def test_what_cannot_be_proved_light_is_parsed_whole_with_the_same_answer(tmp_path, monkeypatch, capsys):
    calls = _spy(monkeypatch)
    for what, path in _ambiguous(tmp_path).items():
        assert detect_file(path, window=SMALL) is None, what
        whole = _whole_format(path)
        target = "amps" if whole != "amps" else "emp"
        calls.clear()
        found = _cli(path, None, target, tmp_path, capsys)
        assert calls == [], what  # no format found light: load() parses the file whole, as before
        if whole is None:  # load() refuses it, in its words
            assert found[0] != 0 and found[1] is None, what
        else:
            assert found == _cli(path, whole, target, tmp_path, capsys), what
    # the control: the twice-claimed document is a MemoryAI bundle to the whole parse (detect's order), and the
    # file with its entries after line 20 is no format's; both answers come from the whole path, unchanged
    files = _ambiguous(tmp_path)
    assert _whole_format(files["two formats claim it"]) == "memoryai"
    assert _whole_format(files["no entry in the first lines"]) is None
    assert _whole_format(files["one line of EMP"]) == "emp"


def test_a_detector_that_declares_no_shape_is_asked_only_of_the_whole_document(tmp_path, monkeypatch):
    plain = _source_file("amps", 20, tmp_path)
    assert detect_file(plain) == "amps"  # the control
    real = detected.portable

    def undeclared(name: str) -> Any:
        found = real(name)
        return dataclasses.replace(found, detect_by_shape=False) if name == "omp" else found
    monkeypatch.setattr(detected, "portable", undeclared)
    assert detect_file(plain) is None


def test_a_text_format_without_a_line_count_and_a_long_head_are_parsed_whole(tmp_path, monkeypatch):
    plain = _source_file("emp", 30, tmp_path)
    assert detect_file(plain) == "emp"  # the control
    monkeypatch.setattr(detected, "HEAD_BYTES", 100)  # the first 20 lines are longer than this
    assert detect_file(plain) is None
    monkeypatch.undo()
    real = detected.portable
    monkeypatch.setattr(detected, "portable", lambda name: dataclasses.replace(real(name), detect_lines=None)
                        if name == "emp" else real(name))
    assert detect_file(plain) is None


def test_a_jsonl_file_whose_first_line_is_not_one_value_is_parsed_whole(tmp_path):
    lines = generate("emp", 5).splitlines()
    path = tmp_path / "split.jsonl"
    path.write_text(lines[0][:-1] + "\n}\n" + "\n".join(lines[1:]) + "\n", encoding="utf-8")  # an object over two lines
    assert detect_file(path) is None


def _emp_edges() -> dict[str, bytes]:
    """EMP texts at the edges of what the whole path and the line path read: each must translate as before."""
    lines = [line.encode("utf-8") for line in generate("emp", 25).splitlines()]
    body = b"\n".join(lines) + b"\n"
    return {
        "plain": body,
        "a byte that is not UTF-8 in line 3": b"\n".join([*lines[:2], lines[2].replace(b"record", b"rec\xffrd"),
                                                           *lines[3:]]) + b"\n",
        "a byte that is not UTF-8 after line 20": b"\n".join([*lines[:22], lines[22].replace(b"record", b"rec\xc3rd"),
                                                               *lines[23:]]) + b"\n",
        "a lone surrogate escaped": body.replace(b"record 4:", b"record \\ud800:", 1),
        "a byte order mark": b"\xef\xbb\xbf" + body,
        "CRLF line ends": body.replace(b"\n", b"\r\n"),
        "blank lines and no final newline": b"\n\n  \n" + body.replace(b"\n", b"\n \n").rstrip(b"\n "),
        "a line that is not JSON": b"\n".join([*lines[:5], b"{not json", *lines[5:]]) + b"\n",
        "a line that is an array": b"\n".join([*lines[:5], b"[1, 2]", *lines[5:]]) + b"\n",
        "white space that is not JSON's before line 1": b"\x0c\n" + body,
        "a U+2028 line": b"\n".join([*lines[:5], "\u2028".encode(), *lines[5:]]) + b"\n",
        "a first line that is not an entry": b'{"note": 1}\n' + body,
        "a first line that is an array": b"[1]\n" + body,
        "an entry split over two lines": lines[0][:-1] + b"\n}\n" + b"\n".join(lines[1:]) + b"\n",
    }


def _translates_as_before(edges: dict[str, bytes], what: str, name: str, target: str, tmp_path, monkeypatch,
                          capsys) -> None:
    """The edge `what` of `edges`, written as `name`, translates into `target` as it did before the skim (the CLI's
    exit, output, ledger and summary)."""
    assert what == "plain" or edges[what] != edges["plain"]  # the control: each edge is put in
    path = tmp_path / name
    path.write_bytes(edges[what])
    found = _cli(path, None, target, tmp_path, capsys)
    with _before(monkeypatch):
        before = _cli(path, None, target, tmp_path, capsys)
    assert found == before, what


@pytest.mark.parametrize("what", list(_emp_edges()))
def test_an_emp_text_at_an_edge_translates_as_before(what, tmp_path, monkeypatch, capsys):
    _translates_as_before(_emp_edges(), what, "edge.jsonl", "amps", tmp_path, monkeypatch, capsys)


def _json_edges() -> dict[str, bytes]:
    """JSON documents at the edges of what the skim and the whole parse read: each must translate as before."""
    amps = json.loads(generate("amps", 12))
    text = json.dumps(amps).encode("utf-8")
    late = dict(amps)
    version = late.pop("export_version")
    late["export_version"] = version
    return {
        "plain": text,
        "a byte order mark": b"\xef\xbb\xbf" + text,
        "white space around": b"\n\t " + text + b"\n\n",
        "a member twice": text[:-1] + b', "export_version": "9.9"}',
        "a section twice": text[:-1] + b', "atoms": []}',
        "text after the object": text + b"x",
        "a second object after it": text + b"\n" + text,
        "not UTF-8 inside a string": text.replace(b"record 3", b"rec\xffrd 3", 1),
        "NaN in a record": text.replace(b'"atoms": [{', b'"atoms": [{"x-n": NaN, ', 1),
        "a number past the double range": text.replace(b'"atoms": [{', b'"atoms": [{"x-n": 1e999, ', 1),
        "the format member last": json.dumps(late).encode("utf-8"),
        "subject an array": json.dumps(dict(amps, subject=[])).encode("utf-8"),
        "atoms an object": json.dumps(dict(amps, atoms={})).encode("utf-8"),
        "deeply nested in a record": text.replace(b'"atoms": [{', b'"atoms": [{"x-d": ' + b"[" * 600 + b"]" * 600
                                                  + b", ", 1),
    }


@pytest.mark.parametrize("what", list(_json_edges()))
def test_a_json_document_at_an_edge_translates_as_before(what, tmp_path, monkeypatch, capsys):
    _translates_as_before(_json_edges(), what, "edge.json", "emp", tmp_path, monkeypatch, capsys)
