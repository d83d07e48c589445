"""What the portability tests that compare two paths of one translation share (tests/test_portability_written.py,
tests/test_portability_sourced.py, tests/test_portability_scale.py): a fixed clock, and the claim that a path writing its output to a file is the whole-memory path's
translation, byte for byte, ledger and summary included."""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from typing import Any

from memconform.portability.canonical import OnePass
from memconform.portability.formats import formats, portable
from memconform.portability.placement import Refused
from memconform.portability.sourced import read_source
from memconform.portability.translate import dump, load, translate
from memconform.portability.written import write_judged

FIXED_NOW = "2026-01-02T03:04:05.678Z"
SMALL = 256  # bytes per window of the source and of the output's judgement: every document here is read in several


def fix_the_clock(monkeypatch: Any) -> None:
    """Every translator's clock at FIXED_NOW: a source without an export time is dated by the clock, so two
    translations of it agree only on a fixed one."""
    for name in formats():
        monkeypatch.setattr(importlib.import_module(f"memconform.suites.{name}.portability.translator"), "now_canonical",
                            lambda: FIXED_NOW)


def assert_same(whole: Any, written: Any, text: str | None, what: str) -> None:
    """`written` (its file's text, or None when it left none) translated as `whole` did: the same refusal, the same
    ledger and summary, and the same output bytes; a refused translation left no file."""
    assert written.refused == whole.refused, what
    assert written.ledger.to_json() == whole.ledger.to_json(), f"{what}: ledger"
    assert written.ledger.summary() == whole.ledger.summary(), f"{what}: summary"
    if whole.output is None:
        assert text is None, f"{what}: a refused translation left a file"
    else:
        assert text == dump(whole.target, whole.output), f"{what}: output bytes"


def both(path: Path, source: str, target: str, folder: Path, writers: Any = None) -> tuple[Any, Any, str | None]:
    """(the whole-memory translation of the file, the translation read in windows or by lines (sourced.py), its judged
    file's text or None)."""
    _, doc = load(path, source)
    whole = translate(copy.deepcopy(doc), source, target, writers=writers)
    first = read_source(path, source, target, window=SMALL)
    assert first is not None, f"{path.name}: not read in windows or by lines"
    if first.refused is None:
        kind = OnePass if portable(target).one_pass else list
        assert type(first.canonical.records) is kind, f"{source} -> {target}: records as {type(first.canonical.records)}"
    written, text = judged_text(first, folder, writers)
    return whole, written, text


def judged_text(first: Any, folder: Path, writers: Any = None, window: int = SMALL) -> tuple[Any, str | None]:
    """(the translation written and judged from its file in windows of `window` bytes, that file's text or None),
    the file removed: what the tests compare with the whole-memory path."""
    written, part = write_judged(first, folder, writers=writers, window=window)
    text = None
    if part is not None:
        text = part.read_text(encoding="utf-8")
        part.unlink()
    return written, text


def plain_file(doc: Any, folder: Path, name: str = "source.json") -> Path:
    """The document as a plain file: a text format's text as it is (surrogates kept), any other document as JSON,
    a number past the double range (a fixture's 1e400, read as infinity) written past it again."""
    path = folder / name
    if isinstance(doc, str):
        path.write_bytes(doc.encode("utf-8", "surrogatepass"))
        return path
    try:
        text = json.dumps(doc, indent=1, allow_nan=False)
    except ValueError:
        text = json.dumps(doc, indent=1).replace("-Infinity", "-1e999").replace("Infinity", "1e999")
    path.write_text(text, encoding="utf-8")
    return path


def spy_on_read_source(monkeypatch: Any) -> list[bool]:
    """Whether each call of sourced.read_source (the CLI's windowed or line path) read the file (True) or left it
    to the whole path (False), in order."""
    from memconform.portability import sourced

    answers: list[bool] = []
    real = sourced.read_source

    def spying(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        answers.append(found is not None)
        return found
    monkeypatch.setattr(sourced, "read_source", spying)
    return answers


def stopping_writer(target: str, after: int):
    """The target's writer, refusing once `after` records have been made: a refusal midway through the stream."""
    real = portable(target).write

    def write(doc, ledger):
        records = doc.records

        def counted():
            for i, record in enumerate(records):
                if i == after:
                    raise Refused(f"planted: refused at record {after}")
                yield record
        if isinstance(records, OnePass):
            doc.records = OnePass(len(records), counted, records.again)
        else:
            doc.records = list(counted())
        return real(doc, ledger)

    return write
