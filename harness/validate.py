"""`memconform validate FILE`: name the format, read the document strictly, run the document checks.

Exit 2 only when the file cannot be read or no format can be named. A format is named by --format,
by the suite's `detect` (on a file that is cut off or broken, on the complete members it begins
with), by a near-miss of its envelope (two or more of its `hints` keys) or by the
file name (`x.memorizz.json`). A document that is not well-formed under the named format is one
failed check, `<suite>.well_formed` (exit 1), and no other check runs on it: one root cause, once.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .core.model import Failure, HarnessError, Outcome, Result
from .core.profile import Profile
from .core.suite import SuiteSpec, all_suites, get_suite

MAX_DEPTH = 512  # deeper JSON is refused before Python's parser would run out of stack
MAX_INT_DIGITS = 4300  # Python's own bound on int <-> str conversion (sys.get_int_max_str_digits)
_HUGE_INT = re.compile(f"[0-9]{{{MAX_INT_DIGITS + 1}}}")
HEAD_BYTES = 64 * 1024
BOM = b"\xef\xbb\xbf"
_KEY_IN_TEXT = re.compile(rb'"([A-Za-z_][A-Za-z0-9_-]{0,63})"\s*:')


class NotWellFormed(Exception):
    def __init__(self, title: str, received: Any, path: str) -> None:
        super().__init__(title)
        self.failure = Failure(title, received, "a well-formed JSON text (RFC 8259)", path)


class _NonJson:
    """NaN, Infinity or -Infinity in the text: Python reads them, JSON has no such numbers."""

    def __init__(self, text: str) -> None:
        self.text = text


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _too_deep_at(text: str) -> int | None:
    """Offset where nesting passes MAX_DEPTH, outside strings; None when it never does."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return i
        elif ch in "]}":
            depth -= 1
    return None


class _HugeInt:
    def __init__(self, digits: int) -> None:
        self.digits = digits


def _int(text: str) -> int | _HugeInt:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_INT_DIGITS else _HugeInt(digits)


def _non_json_numbers(doc: Any) -> Iterator[tuple[str, Any]]:
    stack: list[tuple[str, Any]] = [("$", doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _HugeInt):
            yield path, value
        elif isinstance(value, _NonJson):
            yield path, value.text
        elif isinstance(value, dict):
            stack.extend((f"{path}.{k}", v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))


def parse_json(raw: bytes) -> Any:
    """The document a JSON file holds, or NotWellFormed saying, in the harness's words, where and why."""
    if raw.startswith(BOM):
        raise NotWellFormed("the file begins with a byte order mark (RFC 8259 §8.1: JSON text MUST NOT)",
                            "EF BB BF", "byte 0")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotWellFormed("the file is not UTF-8 text (RFC 8259 §8.1)", raw[exc.start:exc.start + 8].hex(" "),
                            f"byte {exc.start}") from None
    seen_constants: list[str] = []

    def constant(name: str) -> _NonJson:
        seen_constants.append(name)
        return _NonJson(name)

    huge = _HUGE_INT.search(text) is not None
    try:
        doc = json.loads(text, parse_constant=constant, parse_int=_int if huge else None)
    except json.JSONDecodeError as exc:
        raise NotWellFormed(f"not well-formed JSON: {exc.msg}", text[max(0, exc.pos - 40):exc.pos + 40],
                            f"{_line_col(text, exc.pos)} (byte {len(text[:exc.pos].encode('utf-8'))})") from None
    except RecursionError:  # Python's reader stops near 1,000 levels: say where the nesting passes MAX_DEPTH
        deep = _too_deep_at(text)
        where = _line_col(text, deep) if deep is not None else "$"
        raise NotWellFormed(f"the document nests arrays and objects deeper than {MAX_DEPTH} levels",
                            f"more than {MAX_DEPTH} levels", where) from None
    if seen_constants or huge:
        found = next(_non_json_numbers(doc), None)
        if found is not None and isinstance(found[1], _HugeInt):
            raise NotWellFormed(f"an integer of {found[1].digits} digits: more than the {MAX_INT_DIGITS} digits the "
                                "harness reads (RFC 8259 §6 lets a reader limit the range of numbers)",
                                f"<{found[1].digits} digits>", found[0])
    if seen_constants:
        path, name = next(_non_json_numbers(doc))
        more = f" (and {len(seen_constants) - 1} more)" if len(seen_constants) > 1 else ""
        raise NotWellFormed(f"{name} is not a JSON number (RFC 8259 §6){more}", name, path)
    return doc


# ---- naming the format --------------------------------------------------------------------------

@dataclass
class Named:
    suite: SuiteSpec
    how: str  # "--format", "detected", "near-miss of its envelope", "file name"


def _keys(doc: Any, raw: bytes) -> set[str]:
    if isinstance(doc, dict):
        return {k for k in doc if isinstance(k, str)}
    return {m.decode("ascii") for m in _KEY_IN_TEXT.findall(raw[:HEAD_BYTES])}


def detects(suite: SuiteSpec, text_or_doc: Any) -> bool:
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


def name_format(path: Path, raw: bytes, doc: Any, wanted: str | None) -> Named:
    if wanted:
        return Named(get_suite(wanted), "--format")
    suites = all_suites()
    parsed = not isinstance(doc, NotWellFormed)
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
    """A descriptor of `path`, refused before anything is read unless it is a regular file: a FIFO
    would block the reader forever, a device (/dev/zero) never ends. Checked by stat before opening,
    and by fstat of what was opened (non-blocking, so a FIFO swapped in between cannot block the open)."""
    try:
        _refuse_unless_regular(path, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse_unless_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "not a file")
    raise HarnessError(f"cannot read {path}: it is {kind}, not a regular file")


def read_head(path: Path) -> bytes:
    with os.fdopen(open_regular(path), "rb") as fh:
        try:
            return fh.read(HEAD_BYTES)
        except OSError as exc:
            raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_all(path: Path, max_bytes: int) -> bytes:
    with os.fdopen(open_regular(path), "rb") as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise HarnessError(f"{path} is {size} bytes, over the limit of {max_bytes} (raise it with --max-bytes)")
            data = fh.read(max_bytes + 1)  # a file that grows while read is still cut at the limit
        except OSError as exc:
            raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise HarnessError(f"{path} is over the limit of {max_bytes} bytes (raise it with --max-bytes)")
    return data


def open_stream(path: Path, wanted: str | None) -> tuple[str, Any] | None:
    """(suite, document) when the file is in a format read as a stream (SuiteSpec.stream), else None.

    Detection sees only the file's first whole lines; the document is opened, never loaded, so
    --max-bytes (a memory guard) does not apply to it."""
    streaming = [s for s in all_suites() if s.stream is not None and wanted in (None, s.name)]
    if not streaming:
        return None
    head = read_head(path)
    head = head[: head.rfind(b"\n") + 1] or head
    for suite in streaming:
        if suite.stream is not None and (wanted or detects(suite, head)):
            return suite.name, suite.stream(path)
    return None


def validate_file(path: Path, wanted: str | None, profile: Profile, check_ids: list[str] | None,
                  max_bytes: int) -> tuple[SuiteSpec, str, list[Result]]:
    """(suite, how it was named, results) for one file."""
    from .session import validate_document

    os.close(open_regular(path))  # a FIFO, device or folder is refused before any reader opens it
    streamed = open_stream(path, wanted)
    if streamed is not None:
        suite = get_suite(streamed[0])
        results = validate_document(streamed[1], suite.name, profile, check_ids)
        how = "--format" if wanted else "detected"
        if json_syntax(suite) and any(r.outcome is Outcome.ERRORED for r in results):
            # a check could not read the document: if it is not well-formed, that is the one finding
            try:
                parse_json(read_all(path, max_bytes))
            except NotWellFormed as exc:
                return suite, how, [well_formed_result(suite, exc.failure)]
        return suite, how, results
    raw = read_all(path, max_bytes)
    doc: Any
    try:
        doc = parse_json(raw)
    except NotWellFormed as exc:
        doc = exc
    named = name_format(path, raw, doc, wanted)
    suite = named.suite
    if suite.parse is not None:  # a format that is not one JSON text
        try:
            doc = suite.parse(raw)
        except ValueError as exc:
            failure = Failure(f"the file cannot be read as {suite.name}: {exc}", raw[:80], f"a {suite.name} document")
            return suite, named.how, [well_formed_result(suite, failure)]
    elif isinstance(doc, NotWellFormed):
        return suite, named.how, [well_formed_result(suite, doc.failure)]
    return suite, named.how, validate_document(doc, suite.name, profile, check_ids)
