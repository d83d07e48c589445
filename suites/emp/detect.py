"""Is this an EMP memory.jsonl? Answered without loading the suite (`memconform validate` asks every suite,
on every file's first lines, before it loads the one named: core/detectors.py). A parsed object
is answered here, and so is a text none of whose first 20 lines orjson reads as an entry; anything else
is asked of format/reader.py's `detect`, whose strict reader is the authority on a line."""

from __future__ import annotations

from typing import Any

import orjson

STREAMED = True  # the SuiteSpec's `stream` reads the file a line at a time (format/reader.py LineStream)
LINES_LOOKED_AT = 20  # format/reader.py detect: the first 20 lines that are not blank
CUT_SHORT = "unexpected end of data"  # orjson's words for a text that ends inside a value


def detect(doc: Any) -> bool:
    if isinstance(doc, dict):  # a one-line file parses as a single JSON object
        return "v" in doc and "id" in doc and "ts" in doc
    if isinstance(doc, (str, bytes)) and not _may_hold_an_entry(doc):
        return False
    from memconform.suites.emp.format.reader import detect as detect_lines

    return detect_lines(doc)


def _may_hold_an_entry(text: str | bytes) -> bool:
    """False only when each of the first lines the reader would look at parses, by orjson, to something that
    is not an object with v, id and ts: where orjson reads a line the strict reader yields the same value
    (the same keys) or refuses the line, so it holds no entry either; a line that ends inside a value no
    reader reads. Any other line orjson cannot read, or that is not UTF-8, is left to the reader."""
    seen = 0
    lines: list[bytes] | list[str] = text.split(b"\n") if isinstance(text, bytes) else text.split("\n")
    for line in lines:
        try:
            shown = line.decode("utf-8") if isinstance(line, bytes) else line
        except UnicodeDecodeError:
            return True
        if not shown.strip():
            continue
        seen += 1
        if seen > LINES_LOOKED_AT:
            return False
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if exc.msg == CUT_SHORT:  # a line that ends inside a value (a head cut mid-line) reads in no reader
                continue
            return True
        if isinstance(value, dict) and "v" in value and "id" in value and "ts" in value:
            return True
    return False
