"""Edge Memory Protocol v1.0: line rules, a streaming reader and the resolved view."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from memconform.core.profile import declare_option

SUITE = "emp"
SPEC = "Edge Memory Protocol v1.0"
VERSION = "1.0"
MAJOR = 1
LOCK_SUFFIX = ".lock"
FILE_NAME = "memory.jsonl"
REQUIRED = ("v", "id", "ts", "src", "content")
# A file check lists at most this many offending lines, then says how many more there are, so a
# million bad lines cost bounded memory.
REPORT_CAP = 1000

VERSION_RE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z", re.I)
REVDOMAIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+\Z")
ENCRYPTED_RE = re.compile(r"^encrypted:([A-Za-z0-9_-]+):([A-Za-z0-9+/]*={0,2})\Z")

declare_option(SUITE, "tombstone", "deleted-flag", ("deleted-flag", "type-tombstone"),
               "how a tombstone line is written: meta {\"deleted\": true} (default) or type \"tombstone\"")
declare_option(SUITE, "stale_lock_s", "30", ("10", "30", "60"),
               "age in seconds after which a lock file may be taken over as stale")
declare_option(SUITE, "ts_tie", "later-line", ("later-line", "any"),
               "equal ts for one id: the later line wins (default) or either is accepted")


class LineError(ValueError):
    pass


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_version(v: Any) -> tuple[int, int] | None:
    if isinstance(v, str) and (m := VERSION_RE.match(v)):
        return int(m.group(1)), int(m.group(2))
    return None


def is_tombstone(entry: dict[str, Any]) -> bool:
    meta = entry.get("meta")
    return entry.get("type") == "tombstone" or (isinstance(meta, dict) and meta.get("deleted") is True)


def tombstone(entry_id: str, ts: int, src: str, style: str = "deleted-flag") -> dict[str, Any]:
    line: dict[str, Any] = {"v": VERSION, "id": entry_id, "ts": ts, "src": src, "content": ""}
    if style == "type-tombstone":
        line["type"] = "tombstone"
    else:
        line["meta"] = {"deleted": True}
    return line


def parse_line(raw: str) -> dict[str, Any] | LineError:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return LineError(f"not JSON: {exc}")
    if not isinstance(value, dict):
        return LineError(f"a line must be a JSON object, got {type(value).__name__}")
    return value


def iter_text(text: str | bytes) -> Iterator[tuple[int, str, Any]]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.strip():
            yield n, raw, parse_line(raw)


def iter_lines(path: str | Path) -> Iterator[tuple[int, str, Any]]:
    """Stream a file: (line number, raw text, parsed object or LineError); never loads it whole."""
    with open(path, "rb") as fh:
        for n, rawb in enumerate(fh, 1):
            raw = rawb.decode("utf-8", "replace").rstrip("\r\n")
            if raw.strip():
                yield n, raw, parse_line(raw)


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


@dataclass
class Findings:
    """Every line rule broken in one pass over a file: up to REPORT_CAP offenders per rule, and counts."""

    offenders: dict[str, list[tuple[int, str, Any]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    lines: int = 0

    def add(self, rule: str, n: int, message: str, value: Any) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + 1
        kept = self.offenders.setdefault(rule, [])
        if len(kept) < REPORT_CAP:
            kept.append((n, message, value))


def scan(lines: Iterable[tuple[int, str, Any]]) -> Findings:
    """One streaming pass: a corrupt line is recorded under lines_are_json_objects and the rest go on."""
    found = Findings()
    for n, raw, entry in lines:
        found.lines += 1
        if isinstance(entry, LineError):
            found.add("lines_are_json_objects", n, f"line is not a JSON object: {entry}", raw)
            continue
        if not line_is_clean(entry):
            for rule, message, value in field_errors(entry):
                found.add(rule, n, message, value)
    return found


def field_errors(entry: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(check name, message, value) for each field rule the line breaks."""
    for name in REQUIRED:
        if name not in entry:
            yield "required_fields", f"required field {name!r} missing", None
    if "v" in entry and parse_version(entry["v"]) is None:
        yield "version_format", "v must be \"MAJOR.MINOR\"", entry["v"]
    if "id" in entry and not (isinstance(entry["id"], str) and UUID4_RE.match(entry["id"])):
        yield "id_uuid4", "id must be a UUID v4", entry["id"]
    if "ts" in entry and not (is_int(entry["ts"]) and entry["ts"] >= 0):
        yield "ts_millis", "ts must be an integer Unix time in milliseconds", entry["ts"]
    if "src" in entry and not (isinstance(entry["src"], str) and REVDOMAIN_RE.match(entry["src"])):
        yield "src_reverse_domain", "src must be reverse domain notation", entry["src"]
    if "content" in entry:
        c = entry["content"]
        if not isinstance(c, str):
            yield "content_string", "content must be a string", c
        elif c.startswith("encrypted:") and not ENCRYPTED_RE.match(c):
            yield "encrypted_content_form", "encrypted content must be encrypted:ALGORITHM:base64", c
    if "type" in entry and not isinstance(entry["type"], str):
        yield "optional_field_types", "type must be a string", entry["type"]
    if "tags" in entry:
        t = entry["tags"]
        if not (isinstance(t, list) and all(isinstance(x, str) and x == x.lower() for x in t)):
            yield "tags_lowercase", "tags must be an array of lowercase strings", t
    if "meta" in entry and not isinstance(entry["meta"], dict):
        yield "optional_field_types", "meta must be an object", entry["meta"]
    if "emb" in entry:
        e = entry["emb"]
        if not (isinstance(e, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in e)):
            yield "optional_field_types", "emb must be an array of numbers", e


@functools.lru_cache(maxsize=4096)  # the few src values of a file repeat on every line
def _src_ok(src: str) -> bool:
    return REVDOMAIN_RE.match(src) is not None


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
    if type(src) is not str or not _src_ok(src):
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


def readable(entry: Any) -> bool:
    """A line a 1.x reader uses: an object with sane required fields and a major it understands."""
    if not isinstance(entry, dict):
        return False
    v = entry.get("v")
    if v != VERSION:  # the common case skips the regex
        ver = parse_version(v)
        if ver is None or ver[0] != MAJOR:
            return False
    return isinstance(entry.get("id"), str) and is_int(entry.get("ts")) and isinstance(entry.get("content"), str)


def resolve(lines: Iterable[tuple[int, str, Any]], keep_tombstones: bool = False) -> list[dict[str, Any]]:
    """Newest ts wins per id (a later line wins a tie); tombstones delete; bad lines are skipped."""
    best: dict[str, tuple[int, int, dict[str, Any]]] = {}
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
