"""Reading an EMP file: each line parsed (a LineError when it is not a JSON object), the text decoded and iterated,
a streamed LineStream; the resolved view (the last line of each id wins, tombstones remove) and `detect`.
The line rules and the one-pass scanner are lines.py."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from memconform.core.json_reader import LINE, JsonRejected, read_json
from memconform.kit.shared_rules import is_int as is_int

from .forms import MAJOR, VERSION, VERSION_RE


class LineError(ValueError):
    pass


class Replaced(str):
    """A line whose bytes were not valid UTF-8, decoded with U+FFFD replacement characters."""


def is_ts(value: Any) -> bool:
    """A number a reader can order by: an int or a finite float, not a bool (errata E11)."""
    return type(value) is int or (type(value) is float and math.isfinite(value))


def parse_version(v: Any) -> tuple[int, int] | None:
    if isinstance(v, str) and (m := VERSION_RE.match(v)):
        return int(m.group(1)), int(m.group(2))
    return None


def is_tombstone(entry: dict[str, Any]) -> bool:
    meta = entry.get("meta")
    return entry.get("type") == "tombstone" or (isinstance(meta, dict) and meta.get("deleted") is True)


def parse_line(raw: str, rawb: bytes | None = None) -> dict[str, Any] | LineError:
    """One line, parsed by the strict reader (`rawb`: its bytes when the line was read as valid UTF-8)."""
    try:
        value = read_json(raw.encode("utf-8", "surrogatepass") if rawb is None else rawb, LINE)
    except JsonRejected as exc:
        return LineError(f"not JSON: {exc.detail}")
    if not isinstance(value, dict):
        return LineError(f"a line must be a JSON object, got {type(value).__name__}")
    return value


def decode(rawb: bytes) -> str:
    """A line's text; a line that is not valid UTF-8 comes back as `Replaced` (U+FFFD in place of bad bytes)."""
    try:
        return rawb.decode("utf-8")
    except UnicodeDecodeError:
        return Replaced(rawb.decode("utf-8", "replace"))


def iter_text(text: str | bytes) -> Iterator[tuple[int, str, Any]]:
    lines: Iterable[str] = (decode(c) for c in text.split(b"\n")) if isinstance(text, bytes) else text.split("\n")
    for n, raw in enumerate(lines, 1):
        if raw.strip():
            yield n, raw, parse_line(raw)


def iter_lines(path: str | Path) -> Iterator[tuple[int, str, Any]]:
    """Stream a file: (line number, raw text, parsed object or LineError); never loads it whole."""
    with open(path, "rb") as fh:
        for n, rawb in enumerate(fh, 1):
            if line := read_line(n, rawb):
                yield line


class LineStream:
    """A memory.jsonl file as a document that is read again on each iteration, never held whole."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __iter__(self) -> Iterator[tuple[int, str, Any]]:
        return iter_lines(self.path)

    def __repr__(self) -> str:
        return f"LineStream({str(self.path)!r})"


def as_lines(doc: Any) -> Iterable[tuple[int, str, Any]]:
    """(line number, raw, parsed) for text, bytes, a LineStream or an already parsed list of lines."""
    if isinstance(doc, (str, bytes)):
        return iter_text(doc)
    return doc


def read_line(n: int, rawb: bytes) -> tuple[int, str, Any] | None:
    """(line number, raw text, parsed object or LineError) of one line as read from the file, or None when blank."""
    rawb = rawb.rstrip(b"\r\n")
    raw = decode(rawb)
    return (n, raw, parse_line(raw, None if isinstance(raw, Replaced) else rawb)) if raw.strip() else None


def readable(entry: Any) -> bool:
    """A line a 1.x reader uses: an object with sane required fields and a major it understands."""
    if not isinstance(entry, dict):
        return False
    v = entry.get("v")
    if v != VERSION:  # the common case skips the regex
        ver = parse_version(v)
        if ver is None or ver[0] != MAJOR:
            return False
    return isinstance(entry.get("id"), str) and is_ts(entry.get("ts")) and isinstance(entry.get("content"), str)


def resolve(lines: Iterable[tuple[int, str, Any]], keep_tombstones: bool = False) -> list[dict[str, Any]]:
    """Newest ts wins per id (a later line wins a tie); tombstones delete; bad lines are skipped."""
    best: dict[str, tuple[Any, int, dict[str, Any]]] = {}
    for n, _, entry in lines:
        if not readable(entry):
            continue
        key = (entry["ts"], n)
        cur = best.get(entry["id"])
        if cur is None or key >= cur[:2]:
            best[entry["id"]] = (entry["ts"], n, entry)
    out = [e for _, _, e in sorted(best.values(), key=lambda t: (t[0], t[1]))]
    return out if keep_tombstones else [e for e in out if not is_tombstone(e)]


def detect(doc: Any) -> bool:
    if isinstance(doc, dict):  # a one-line file parses as a single JSON object
        return "v" in doc and "id" in doc and "ts" in doc
    if not isinstance(doc, (str, bytes, list, LineStream)):
        return False
    return any(isinstance(e, dict) and "v" in e and "id" in e and "ts" in e for _, _, e in islice(as_lines(doc), 20))
