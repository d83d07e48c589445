"""`memconform validate FILE`: name the format, read the document strictly, run the document checks.

Exit 2 only when the file cannot be read or no format can be named. A format is named by --format,
by the suite's `detect` (on a file that is cut off or broken, on the complete members it begins
with), by a near-miss of its envelope (two or more of its `hints` keys) or by the
file name (`x.memorizz.json`). A document that is not well-formed under the named format is one
failed check, `<suite>.well_formed` (exit 1), and no other check runs on it: one root cause, once.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.detectors import Detector, detectors
from ..core.handed import open_handed, read_handed, refuse_unless_regular
from ..core.json_reader import FILE, JsonRejected, read_json
from ..core.profile import Profile
from ..core.results import Failure, HarnessError, Outcome, Result
from ..core.suite import SuiteSpec, all_suites, get_suite

MAX_DEPTH = FILE.max_depth
HEAD_BYTES = 64 * 1024
_KEY_IN_TEXT = re.compile(rb'"([A-Za-z_][A-Za-z0-9_-]{0,63})"\s*:')


class NotWellFormed(Exception):
    def __init__(self, title: str, received: Any, path: str) -> None:
        super().__init__(title)
        self.failure = Failure(title, received, "a well-formed JSON text (RFC 8259)", path)


def _line_col(raw: bytes, offset: int) -> str:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", "replace")) + 1
    line = raw.count(b"\n", 0, offset) + 1
    return f"line {line} column {column}"


def parse_json(raw: bytes) -> Any:
    """The document a JSON file holds, or NotWellFormed saying, in the harness's words, where and why."""
    try:
        return read_json(raw, FILE)
    except JsonRejected as exc:
        raise NotWellFormed(*_in_words(exc, raw)) from None


def _in_words(exc: JsonRejected, raw: bytes | None) -> tuple[str, Any, str]:
    """(title, received, where) of a refusal, as `validate` prints it (`raw`: the text, for line and column)."""
    if exc.kind == "bom":
        return "the file begins with a byte order mark (RFC 8259 §8.1: JSON text MUST NOT)", "EF BB BF", "byte 0"
    if exc.kind == "utf-8":
        return "the file is not UTF-8 text (RFC 8259 §8.1)", exc.received, f"byte {exc.offset}"
    if exc.kind == "depth":
        where = _line_col(raw, exc.offset) if exc.offset is not None and raw is not None else "$"
        return f"the document nests arrays and objects deeper than {MAX_DEPTH} levels", exc.received, where
    if exc.kind == "syntax" and exc.offset is not None:
        line_col = f"{_line_col(raw, exc.offset)} " if raw is not None else ""
        return exc.message, exc.received, f"{line_col}(byte {exc.offset})"
    return exc.message, exc.received, exc.path or "$"


# ---- naming the format --------------------------------------------------------------------------

@dataclass
class Named:
    """The suite a file was named as, and how it was named."""

    suite: SuiteSpec
    how: str  # "--format", "detected", "near-miss of its envelope", "file name"


def _keys(doc: Any, raw: bytes) -> set[str]:
    if isinstance(doc, dict):
        return {k for k in doc if isinstance(k, str)}
    return {m.decode("ascii") for m in _KEY_IN_TEXT.findall(raw[:HEAD_BYTES])}


def detects(suite: SuiteSpec | Detector, text_or_doc: Any) -> bool:
    """The suite's own `detect`; hostile input that makes it raise is simply not recognised."""
    try:
        return suite.detect is not None and bool(suite.detect(text_or_doc))
    except (ValueError, TypeError, RecursionError, UnicodeError):
        return False


def near_miss(doc: Any, raw: bytes, suites: list[SuiteSpec]) -> SuiteSpec | None:
    """The one suite two or more of whose envelope keys (SuiteSpec.hints) the document has, if any."""
    keys = _keys(doc, raw)
    scores = sorted(((len(keys & set(s.hints)), s.name) for s in suites if s.hints), reverse=True)
    if scores and scores[0][0] >= 2 and (len(scores) == 1 or scores[1][0] < scores[0][0]):
        return next(s for s in suites if s.name == scores[0][1])
    return None


def by_file_name(path: Path, suites: list[SuiteSpec]) -> SuiteSpec | None:
    words = set(re.split(r"[._\-\s]+", path.name.lower()))
    found = [s for s in suites if s.name in words]
    return found[0] if len(found) == 1 else None


def leading_members(raw: bytes) -> dict[str, Any]:
    """The complete members at the start of a JSON object that is cut off or broken later on
    (`{"format": "memoryai-bundle", "version": 1,` gives both): enough for a format's `detect`."""
    text = raw[:HEAD_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    decoder = json.JSONDecoder()
    members: dict[str, Any] = {}
    if not text.startswith("{"):
        return members
    pos = 1
    while True:
        pos = _skip_space(text, pos)
        try:
            key, pos = decoder.raw_decode(text, pos)
            pos = _skip_space(text, pos)
            if not isinstance(key, str) or text[pos:pos + 1] != ":":
                return members
            value, pos = decoder.raw_decode(text, _skip_space(text, pos + 1))
        except (ValueError, RecursionError):
            return members
        members[key] = value
        pos = _skip_space(text, pos)
        if text[pos:pos + 1] != ",":
            return members
        pos += 1


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def name_format(path: Path, raw: bytes, doc: Any, wanted: str | None, suites: list[SuiteSpec] | None = None) -> Named:
    """The format of a document (`suites`: those to ask; None: every installed suite, each asked by its
    Detector first, so a document its format detects loads no other suite)."""
    if wanted:
        return Named(get_suite(wanted), "--format")
    parsed = not isinstance(doc, NotWellFormed)
    if suites is None:
        for light in (detectors() or []) if parsed else []:  # the same detect each SuiteSpec asks, in the same order
            if detects(light, doc):
                return Named(get_suite(light.name), "detected")
        suites = all_suites()
    for suite in suites:
        if detects(suite, doc if parsed else raw):
            return Named(suite, "detected")
    if not parsed:  # cut off or broken later on: the first members may still name the format
        head = leading_members(raw)
        found = [s for s in suites if head and detects(s, head)]
        if len(found) == 1:
            return Named(found[0], "its first bytes")
    guess = near_miss(doc if parsed else None, raw, suites)
    if guess is not None:
        return Named(guess, "near-miss of its envelope")
    guess = by_file_name(path, suites)
    if guess is not None:
        return Named(guess, "file name")
    what = "JSON document" if parsed else "file (it is not JSON)"
    raise HarnessError(f"{path}: no known format recognises this {what} (formats: {', '.join(s.name for s in suites)}); "
                       "name one with --format")


def well_formed_result(suite: SuiteSpec, failure: Failure) -> Result:
    return Result(check_id=f"{suite.name}.well_formed", suite=suite.name, spec=suite.spec_title, section="document",
                  keyword="MUST", level=suite.levels[0].key if suite.levels else "", outcome=Outcome.FAILED,
                  sentence="The document is well-formed in its format's syntax (JSON: RFC 8259).",
                  failures=[failure])


def json_syntax(suite: SuiteSpec) -> bool:
    """Is the format's file one JSON text? (a format with its own `parse`, like JSON Lines, is not)"""
    return suite.parse is None


def open_regular(path: Path) -> int:
    """A descriptor of `path`, refused before anything is read unless it is a regular file (core/handed.py:
    the one reader of handed files)."""
    return open_handed(path)


def read_head(path: Path) -> bytes:
    with os.fdopen(open_regular(path), "rb") as fh:
        try:
            return fh.read(HEAD_BYTES)
        except OSError as exc:
            raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_all(path: Path, max_bytes: int) -> bytes:
    size_within(path, max_bytes)
    return read_handed(path, max_bytes, what="a document (raise it with --max-bytes)")


def size_within(path: Path, max_bytes: int) -> int:
    """The file's size, once: a regular file within --max-bytes (one bound for every format), else exit 2."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    refuse_unless_regular(path, stat.st_mode)
    if stat.st_size > max_bytes:
        raise HarnessError(f"{path} is {stat.st_size} bytes, over the limit of {max_bytes} (raise it with --max-bytes)")
    return stat.st_size


def stream_suite(head: bytes, wanted: str | None, suites: list[SuiteSpec] | None = None) -> SuiteSpec | None:
    """The suite whose format is read as a stream (SuiteSpec.stream) and names this head, if any.
    Detection sees only the head's whole lines. `suites` None: every installed suite, asked by its
    Detector where every suite has one (only the suite named is loaded), else loaded to be asked."""
    lines = head[: head.rfind(b"\n") + 1] or head
    candidates: list[SuiteSpec] | list[Detector] = (detectors() or all_suites()) if suites is None else suites
    for suite in candidates:
        streamed = suite.streamed if isinstance(suite, Detector) else suite.stream is not None
        if streamed and wanted in (None, suite.name) and (wanted or detects(suite, lines)):
            return get_suite(suite.name) if isinstance(suite, Detector) else suite
    return None


def open_stream(path: Path, wanted: str | None) -> tuple[str, Any] | None:
    """(suite name, document) when the file is in a format read as a stream, else None."""
    suite = stream_suite(read_head(path), wanted)
    return None if suite is None or suite.stream is None else (suite.name, suite.stream(path))


def not_well_formed(document: Any) -> Failure | None:
    """What a streamed document's own single read refused (its `malformed`), as the well_formed failure."""
    refused = getattr(document, "malformed", None)
    if not isinstance(refused, JsonRejected):
        return None
    title, received, where = _in_words(refused, None)
    return Failure(title, received, "a well-formed JSON text (RFC 8259)", where)


@contextlib.contextmanager
def collector_paused() -> Any:
    """The cyclic collector off while one document is judged. A parsed document holds no cycles, yet
    once it exists every young-generation collection the checks trigger walks its millions of objects
    again (a fifth of the CPU of validating a 40 MB export); what the checks make is freed by reference
    counting, and the few cycles they make (a caught exception, a closure) wait until the end."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def validate_file(path: Path, wanted: str | None, profile: Profile, check_ids: list[str] | None,
                  max_bytes: int, window: int | None = None) -> tuple[SuiteSpec, str, list[Result]]:
    """(suite, how it was named, results) for one file, read once: the head names a streamed format
    (which then reads the file itself, once, within its own limits); a file over `window` bytes in a
    format with a window plan is read in windows of that size (harness/kit/windows/); any other file, or
    one the windows cannot read, is read whole."""
    with collector_paused():
        return _validate_file(path, wanted, profile, check_ids, max_bytes, window)


def _validate_file(path: Path, wanted: str | None, profile: Profile, check_ids: list[str] | None,
                   max_bytes: int, window: int | None = None) -> tuple[SuiteSpec, str, list[Result]]:
    from ..kit.windows.reader import WINDOW_BYTES
    from .document_run import validate_document

    size = size_within(path, max_bytes)
    head = read_head(path)
    # --format names one suite: the others are not loaded (no detection runs); else each suite's Detector
    # is asked first, and only the suite named is loaded (name_format, stream_suite)
    suites = [get_suite(wanted)] if wanted else None
    streamed = stream_suite(head, wanted, suites)
    if streamed is not None and streamed.stream is not None:
        document = streamed.stream(path)
        how = "--format" if wanted else "detected"
        results = validate_document(document, streamed, profile, check_ids)
        failure = not_well_formed(document)
        return streamed, how, [well_formed_result(streamed, failure)] if failure else results
    window = WINDOW_BYTES if window is None else window
    if size > window:
        from ..kit.windows.plan import validate_windowed

        windowed = validate_windowed(path, size, wanted, suites, profile, check_ids, window, open_regular, name_format)
        if windowed is not None:
            return windowed
    raw = head + read_rest(path, len(head), max_bytes)
    doc: Any
    try:
        doc = parse_json(raw)
    except NotWellFormed as exc:
        doc = exc
    named = name_format(path, raw, doc, wanted, suites)
    suite = named.suite
    if suite.parse is not None:  # a format that is not one JSON text
        try:
            doc = suite.parse(raw)
        except ValueError as exc:
            failure = Failure(f"the file cannot be read as {suite.name}: {exc}", raw[:80], f"a {suite.name} document")
            return suite, named.how, [well_formed_result(suite, failure)]
    elif isinstance(doc, NotWellFormed):
        return suite, named.how, [well_formed_result(suite, doc.failure)]
    return suite, named.how, validate_document(doc, suite, profile, check_ids)


def read_rest(path: Path, offset: int, max_bytes: int) -> bytes:
    """The file after its head, bounded by --max-bytes even if it grew since it was measured."""
    try:
        with os.fdopen(open_regular(path), "rb") as fh:  # a FIFO or device swapped in meanwhile is refused too
            fh.seek(offset)
            rest = fh.read(max_bytes + 1 - offset)
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    if offset + len(rest) > max_bytes:
        raise HarnessError(f"{path} grew past the limit of {max_bytes} bytes while it was read")
    return rest


# the most a handed document may weigh (validate, replay, translate)
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


def read_document(path: Path, max_bytes: int) -> tuple[bytes, Any]:
    """(bytes, parsed JSON) of a file, or (bytes, NotWellFormed) when it is not one JSON text."""
    raw = read_all(path, max_bytes)
    try:
        return raw, parse_json(raw)
    except NotWellFormed as exc:
        return raw, exc
