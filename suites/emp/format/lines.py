"""Edge Memory Protocol v1.0: the line rules as one table, a one-pass scanner, a streaming reader and the resolved view.

Each line rule is one small function registered in `RULES` with its spec sentence; the suite turns
every rule into a file check (suites/emp/checks/file.py) and checks that the two sets of names are
equal. `scan` reads a file once and runs every rule on every line. A problem that holds only under
one reading of open spec text carries that reading (suites/emp/errata.md); the check decides, from the
profile's options, whether it is a failure or only a reading seen.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.core import rules
from memconform.kit.shared_rules import is_int as is_int  # re-exported
from memconform.suites.emp.format.reader import (
    LineError,
    LineStream,
    Replaced,
    is_ts,
    parse_version,
    read_line,
)

from .block_scan import block_is_clean
from .forms import (
    ENCRYPTED_RE,
    REPORT_CAP,
    REQUIRED,
    REVDOMAIN_RE,
    UUID4_RE,
    UUID_RE,
    VERSION,
    VERSION_RE,
    src_is_reverse_domain,
)

# reading "<errata point>:<option value>" -> (option, value): a problem carrying a reading is a
# failure only when the profile pins that reading (the same shape as memconform.suites.memorizz.format)
PINNED: dict[str, tuple[str, str]] = {
    "E10:v4": ("id_version", "v4"),
    "E11:integer": ("ts_form", "integer"),
    "E12:reserved": ("encrypted_prefix", "reserved"),
}


def tombstone(entry_id: str, ts: int, src: str, style: str = "deleted-flag") -> dict[str, Any]:
    line: dict[str, Any] = {"v": VERSION, "id": entry_id, "ts": ts, "src": src, "content": ""}
    if style == "type-tombstone":
        line["type"] = "tombstone"
    else:
        line["meta"] = {"deleted": True}
    return line


# ---- the rule table --------------------------------------------------------------------------

# (message, offending value, readings under which it is a failure: () means under every reading)
Problem = tuple[str, Any, tuple[str, ...]]
LineRuleFn = Callable[[dict[str, Any]], Iterator[Problem]]


@dataclass(frozen=True)
class Rule(rules.Rule):
    expected: str
    fn: LineRuleFn | None  # None: a rule on the raw line, applied by scan itself


RULES: dict[str, Rule] = {}


def rule(section: str, keyword: str, sentence: str, expected: str) -> Callable[[LineRuleFn], LineRuleFn]:
    def register(fn: LineRuleFn) -> LineRuleFn:
        RULES[fn.__name__] = Rule(fn.__name__, section, keyword, sentence, expected, fn)
        return fn
    return register


RULES["lines_are_json_objects"] = Rule(
    "lines_are_json_objects", "Storage Format: JSONL", "MUST", "Each memory entry is a single line of JSON",
    "one JSON object per line", None)
RULES["lines_utf8"] = Rule(
    "lines_utf8", "Required Fields", "MUST", "UTF-8 encoded", "valid UTF-8", None)


@rule("Required Fields", "MUST", "Required Fields", "v, id, ts, src and content present")
def required_fields(entry: dict[str, Any]) -> Iterator[Problem]:
    for name in REQUIRED:
        if name not in entry:
            yield f"required field {name!r} missing", None, ()


@rule("Required Fields", "MUST", 'Format: "MAJOR.MINOR" (e.g., "1.0")', '"MAJOR.MINOR"')
def version_format(entry: dict[str, Any]) -> Iterator[Problem]:
    if "v" in entry and parse_version(entry["v"]) is None:
        yield 'v must be "MAJOR.MINOR"', entry["v"], ()


@rule("Required Fields", "MUST", "Must be a valid UUID v4", "a UUID (v4 under emp.id_version=v4)")
def id_uuid4(entry: dict[str, Any]) -> Iterator[Problem]:
    if "id" not in entry:
        return
    entry_id = entry["id"]
    if not (isinstance(entry_id, str) and UUID_RE.match(entry_id)):
        yield "id must be a UUID", entry_id, ()
    elif not UUID4_RE.match(entry_id):  # the spec's own examples are UUID v1 (errata E10)
        yield "id is a UUID but not version 4", entry_id, ("E10:v4",)


@rule("Required Fields", "MUST", "Unix timestamp in milliseconds", "a non-negative number of milliseconds")
def ts_millis(entry: dict[str, Any]) -> Iterator[Problem]:
    if "ts" not in entry:
        return
    ts = entry["ts"]
    if not is_ts(ts) or ts < 0:
        yield "ts must be a non-negative Unix time in milliseconds", ts, ()
    elif type(ts) is float and not ts.is_integer():  # JSON has one number type: 5.0 is 5 (errata E11)
        yield "ts is not a whole number of milliseconds", ts, ("E11:integer",)


@rule("Required Fields", "MUST", 'Reverse domain notation (e.g., "com.company.appname")', "reverse domain notation")
def src_reverse_domain(entry: dict[str, Any]) -> Iterator[Problem]:
    if "src" in entry and not (isinstance(entry["src"], str) and REVDOMAIN_RE.match(entry["src"])):
        yield "src must be reverse domain notation", entry["src"], ()


@rule("Required Fields", "MUST", "content (string): Memory content", "a string")
def content_string(entry: dict[str, Any]) -> Iterator[Problem]:
    if "content" in entry and not isinstance(entry["content"], str):
        yield "content must be a string", entry["content"], ()


@rule("Optional Fields", "MUST", "Array of lowercase strings", "an array of lowercase strings")
def tags_lowercase(entry: dict[str, Any]) -> Iterator[Problem]:
    if "tags" in entry:
        t = entry["tags"]
        if not (isinstance(t, list) and all(isinstance(x, str) and x == x.lower() for x in t)):
            yield "tags must be an array of lowercase strings", t, ()


@rule("Schema", "MUST", "type?: string; // Memory type (optional)", "type a string, meta an object, emb numbers")
def optional_field_types(entry: dict[str, Any]) -> Iterator[Problem]:
    if "type" in entry and not isinstance(entry["type"], str):
        yield "type must be a string", entry["type"], ()
    if "meta" in entry and not isinstance(entry["meta"], dict):
        yield "meta must be an object", entry["meta"], ()
    if "emb" in entry:
        e = entry["emb"]
        if not (isinstance(e, list) and all(_is_number(x) for x in e)):
            yield "emb must be an array of numbers", e, ()


@rule("Encryption (Optional)", "MAY", "Prefix: encrypted:ALGORITHM:", "encrypted:ALGORITHM:base64")
def encrypted_content_form(entry: dict[str, Any]) -> Iterator[Problem]:
    c = entry.get("content")
    if isinstance(c, str) and c.startswith("encrypted:") and not ENCRYPTED_RE.match(c):
        # plain text may start with "encrypted:" too (errata E12): a failure only when the prefix is reserved
        yield "content starts with encrypted: but is not encrypted:ALGORITHM:base64", c, ("E12:reserved",)


LINE_RULES: tuple[tuple[str, LineRuleFn], ...] = tuple((r.key, r.fn) for r in RULES.values() if r.fn is not None)


# ---- one pass over a file --------------------------------------------------------------------

@dataclass
class Findings:
    """Every line rule broken in one pass over a file: up to REPORT_CAP offenders per rule, and counts."""

    offenders: dict[str, list[tuple[int, str, Any, tuple[str, ...]]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    lines: int = 0

    def add(self, rule: str, n: int, message: str, value: Any, readings: tuple[str, ...] = ()) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + 1
        kept = self.offenders.setdefault(rule, [])
        if len(kept) < REPORT_CAP:
            kept.append((n, message, value, readings))


def scan(lines: Iterable[tuple[int, str, Any]]) -> Findings:
    """One streaming pass: a corrupt line is recorded under lines_are_json_objects and the rest go on.
    A file (LineStream) is read in blocks, each judged whole first (`block_is_clean`)."""
    if isinstance(lines, LineStream):
        return scan_file(lines.path)
    found = Findings()
    _scan_lines(found, lines)
    return found


def _scan_lines(found: Findings, lines: Iterable[tuple[int, str, Any]]) -> None:
    for n, raw, entry in lines:
        found.lines += 1
        if isinstance(raw, Replaced):
            found.add("lines_utf8", n, "line is not valid UTF-8", raw)
        if isinstance(entry, LineError):
            found.add("lines_are_json_objects", n, f"line is not a JSON object: {entry}", raw)
            continue
        if not line_is_clean(entry):
            for name, problem in field_errors(entry):
                found.add(name, n, *problem)


BLOCK_BYTES = 1 << 16  # lines are judged a block at a time: bounded memory, the per-line work in C; a block
# of about 300 lines keeps its parsed objects in the CPU cache across the column passes (1 MiB: ~10% slower)


def scan_file(path: str | Path) -> Findings:
    """`scan` of a file, block by block: a block whose every line is a clean entry (`block_is_clean`)
    is counted and passed; any other block is read again line by line, exactly as `iter_lines` reads,
    so every finding, message and line number is the one-line-at-a-time scan's."""
    found = Findings()
    collecting = gc.isenabled()
    gc.disable()  # parsed lines hold no cycles: collecting while each block's objects appear is wasted time
    try:
        for first, lines in line_blocks(path):
            if block_is_clean(lines):
                found.lines += len(lines)
            else:
                _scan_lines(found, (line for n, rawb in enumerate(lines, first) if (line := read_line(n, rawb))))
    finally:
        if collecting:
            gc.enable()
    return found


def line_blocks(path: str | Path) -> Iterator[tuple[int, list[bytes]]]:
    """(number of its first line, its lines without their line feeds) of runs of whole lines, read
    BLOCK_BYTES at a time; a line longer than a block is held whole (as the line reader holds it).
    Each chunk is split where it was read and only the line cut by a chunk's end is copied again."""
    first, pending = 1, []
    with open(path, "rb") as fh:
        while chunk := fh.read(BLOCK_BYTES):
            lines = chunk.split(b"\n")
            if len(lines) == 1:  # no line ends in this chunk
                pending.append(chunk)
                continue
            if pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
            pending = [lines.pop()]
            yield first, lines
            first += len(lines)
    rest = b"".join(pending)
    if rest:
        yield first, [rest]


def field_errors(entry: dict[str, Any]) -> Iterator[tuple[str, Problem]]:
    """(rule name, problem) for each rule the line breaks, under some reading."""
    for name, fn in LINE_RULES:
        for problem in fn(entry):
            yield name, problem


def hard_errors(entry: dict[str, Any]) -> list[str]:
    """Messages of the problems that hold under every reading (what a writer must refuse to write)."""
    return [message for _, (message, _, readings) in field_errors(entry) if not readings]


def _is_number(x: Any) -> bool:
    return type(x) is float or type(x) is int


def line_is_clean(entry: dict[str, Any]) -> bool:
    """A fast path for the common, valid line: True only if field_errors(entry) yields nothing (for
    parsed JSON, exactly then); False sends the line to field_errors for the messages."""
    try:
        v, entry_id, ts, src, content = entry["v"], entry["id"], entry["ts"], entry["src"], entry["content"]
    except KeyError:
        return False
    if not (v == VERSION or (type(v) is str and VERSION_RE.match(v))):
        return False
    if type(entry_id) is not str or not UUID4_RE.match(entry_id) or type(ts) is not int or ts < 0:
        return False
    if type(src) is not str or not src_is_reverse_domain(src):
        return False
    if type(content) is not str or (content.startswith("encrypted:") and not ENCRYPTED_RE.match(content)):
        return False
    if "type" in entry and type(entry["type"]) is not str:
        return False
    if "tags" in entry:
        tags = entry["tags"]
        if type(tags) is not list or not all(type(t) is str and t == t.lower() for t in tags):
            return False
    if "meta" in entry and type(entry["meta"]) is not dict:
        return False
    return "emb" not in entry or (type(entry["emb"]) is list and all(map(_is_number, entry["emb"])))


# ---- the resolved view -----------------------------------------------------------------------


