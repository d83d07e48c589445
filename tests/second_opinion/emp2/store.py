"""Reading memory.jsonl line by line, resolving versions by ts, and the read operations."""

import json
import os

from entry import Refused, is_encrypted, is_number, is_tombstone, readable


class CorruptFile(Exception):
    """Only raised under the corrupt_line_aborts fault: a clean reader skips a bad line."""


def raw_lines(path: str) -> list[bytes]:
    """The file's lines without their line ends; a missing file has none."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def parse_line(line: bytes, first: bool) -> object:
    """The JSON value on one line, or None when the line is blank, not UTF-8 or not JSON."""
    if first and line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    line = line.rstrip(b"\r")
    if not line.strip():
        return None
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def entries(path: str, bugs: frozenset = frozenset()) -> list[tuple[int, dict]]:
    """(line number, entry) for every readable line, in file order."""
    found = []
    for number, line in enumerate(raw_lines(path)):
        value = parse_line(line, number == 0)
        if value is None and line.strip(b" \t\r") and "corrupt_line_aborts" in bugs:
            raise CorruptFile(f"{path}: line {number + 1} is not valid JSON")
        if readable(value, reject_unknown_fields="unknown_fields_rejected" in bugs):
            found.append((number, value))
    return found


def winners(path: str, bugs: frozenset = frozenset()) -> dict[str, tuple[int, dict]]:
    """id -> (line number, entry) of the version that counts: the newest ts; on equal ts the later line."""
    best: dict[str, tuple[int, dict]] = {}
    by_file_order = "resolve_by_file_order" in bugs
    for number, entry in entries(path, bugs):
        current = best.get(entry["id"])
        if current is None or by_file_order or entry["ts"] >= current[1]["ts"]:
            best[entry["id"]] = (number, entry)
    return best


def resolve(path: str, bugs: frozenset = frozenset()) -> list[dict]:
    """The live entries (tombstoned ids left out), oldest ts first."""
    live = [
        (entry["ts"], number, entry)
        for number, entry in winners(path, bugs).values()
        if not is_tombstone(entry)
    ]
    live.sort(key=lambda item: (item[0], item[1]))
    return [entry for _, _, entry in live]


def fold_case(text: str, bugs: frozenset) -> str:
    if "text_ascii_casefold" in bugs:
        return text.encode("utf-8").lower().decode("utf-8")
    return text.casefold()


def query(path: str, request: dict, bugs: frozenset = frozenset()) -> list[dict]:
    start, end, tags, wanted_type, text = query_filters(request)
    end_exclusive = "time_end_exclusive" in bugs
    matching = []
    for entry in resolve(path, bugs):
        ts = entry["ts"]
        if start is not None and ts < start:
            continue
        if end is not None and (ts >= end if end_exclusive else ts > end):
            continue
        if wanted_type is not None and entry.get("type") != wanted_type:
            continue
        if tags and not has_all_tags(entry, tags):
            continue
        if text and not contains_text(entry["content"], text, bugs):
            continue
        matching.append(entry)
    return matching


def query_filters(request: dict) -> tuple:
    start, end = request.get("start"), request.get("end")
    for name, bound in (("start", start), ("end", end)):
        if bound is not None and not is_number(bound):
            raise Refused(f"{name} must be a number of milliseconds")
    tags = request.get("tags")
    if isinstance(tags, str):
        tags = [tags]
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise Refused("tags must be a string or an array of strings")
    wanted_type, text = request.get("type"), request.get("text")
    for name, value in (("type", wanted_type), ("text", text)):
        if value is not None and not isinstance(value, str):
            raise Refused(f"{name} must be a string")
    return start, end, [t.lower() for t in tags or []], wanted_type, text


def has_all_tags(entry: dict, tags: list[str]) -> bool:
    present = entry.get("tags")
    if not isinstance(present, list):
        return False
    lowered = {tag.lower() for tag in present if isinstance(tag, str)}
    return all(tag in lowered for tag in tags)


def contains_text(content: str, text: str, bugs: frozenset) -> bool:
    """Case-insensitive containment; encrypted content is opaque, so it never matches."""
    if is_encrypted(content):
        return False
    return fold_case(text, bugs) in fold_case(content, bugs)


def file_ends_without_newline(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False
