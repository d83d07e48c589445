"""Edge Memory Protocol v1.0: line rules, a streaming reader and the resolved view."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness.core.profile import declare_option

SUITE = "emp"
SPEC = "Edge Memory Protocol v1.0"
VERSION = "1.0"
MAJOR = 1
LOCK_SUFFIX = ".lock"
FILE_NAME = "memory.jsonl"
REQUIRED = ("v", "id", "ts", "src", "content")

VERSION_RE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)
REVDOMAIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+$")
ENCRYPTED_RE = re.compile(r"^encrypted:([A-Za-z0-9_-]+):([A-Za-z0-9+/]*={0,2})$")

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


def as_lines(doc: Any) -> list[tuple[int, str, Any]]:
    if isinstance(doc, (str, bytes)):
        return list(iter_text(doc))
    return list(doc)


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


def readable(entry: Any) -> bool:
    """A line a 1.x reader uses: an object with sane required fields and a major it understands."""
    if not isinstance(entry, dict):
        return False
    ver = parse_version(entry.get("v"))
    return (ver is not None and ver[0] == MAJOR and isinstance(entry.get("id"), str)
            and is_int(entry.get("ts")) and isinstance(entry.get("content"), str))


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
    try:
        lines = as_lines(doc)
    except Exception:
        return False
    return any(isinstance(e, dict) and "v" in e and "id" in e and "ts" in e for _, _, e in lines[:20])
