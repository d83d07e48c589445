"""The write operations: append, update (a newer line with the same id), delete (rewrite without the id)."""

import json
import os
import tempfile
import time
import uuid

from entry import PROTOCOL_VERSION, Refused, check_for_writing, drop_absent_optionals, is_tombstone, is_uuid4
from lock import locked
from store import file_ends_without_newline, parse_line, raw_lines, winners

DEFAULT_SOURCE = "org.memconform.emp2"


def now_ts(bugs: frozenset) -> int:
    if "ts_in_seconds" in bugs:
        return int(time.time())
    return time.time_ns() // 1_000_000


def new_id(bugs: frozenset) -> str:
    return str(uuid.uuid1() if "uuid_not_v4" in bugs else uuid.uuid4())


def in_field_order(entry: dict) -> dict:
    """The spec's field order first (as in its examples), anything else after, for human readers."""
    order = ("v", "id", "ts", "src", "content", "type", "tags", "meta", "emb")
    return {**{k: entry[k] for k in order if k in entry}, **entry}


def serialise(entry: dict) -> bytes:
    entry = in_field_order(entry)
    try:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")
    except (ValueError, UnicodeEncodeError) as error:
        raise Refused(f"entry cannot be written as one UTF-8 JSON line: {error}") from None


def append_line(path: str, line: bytes, bugs: frozenset) -> None:
    """One write of the whole line; a file left without its final newline is closed off first."""
    prefix = b"\n" if file_ends_without_newline(path) and "no_newline_guard" not in bugs else b""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, prefix + line + b"\n")
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def checked(entry: dict, bugs: frozenset) -> dict:
    return check_for_writing(
        entry,
        lowercase_tags="tags_not_lowercased" not in bugs,
        # The uuid_not_v4 fault is a writer that mints version-1 ids and so only checks "is a UUID".
        any_uuid_version="uuid_not_v4" in bugs,
    )


def append(path: str, entry: object, bugs: frozenset) -> dict:
    if not isinstance(entry, dict):
        raise Refused("entry must be a JSON object")
    entry = drop_absent_optionals(entry)
    filled = {"v": PROTOCOL_VERSION, "id": new_id(bugs), "ts": now_ts(bugs), "src": DEFAULT_SOURCE}
    for name in filled:
        if entry.get(name) is None:
            entry[name] = filled[name]
    line = serialise(checked(entry, bugs))
    with locked(path, bugs):
        append_line(path, line, bugs)
    return {"id": entry["id"]}


def live_entry(path: str, entry_id: str, bugs: frozenset) -> dict:
    found = winners(path, bugs).get(entry_id)
    if found is None or is_tombstone(found[1]):
        raise Refused(f"no live entry with id {entry_id!r}")
    return found[1]


def update(path: str, entry_id: object, changes: object, bugs: frozenset) -> dict:
    if not isinstance(entry_id, str) or not isinstance(changes, dict):
        raise Refused("update needs an id string and an entry object of changes")
    if changes.get("id", entry_id) != entry_id:
        raise Refused("the id of an entry cannot change")
    with locked(path, bugs):
        current = live_entry(path, entry_id, bugs)
        merged = {**current, **changes, "id": entry_id}
        merged = drop_absent_optionals(merged)
        merged.setdefault("v", PROTOCOL_VERSION)
        merged["ts"] = next_ts(current, changes, bugs)
        line = serialise(checked(merged, bugs))
        append_line(path, line, bugs)
    return {"id": entry_id}


def next_ts(current: dict, changes: dict, bugs: frozenset) -> int:
    """A newer ts than the line it supersedes, so it wins in every reader; an older explicit ts is refused."""
    if "ts" in changes:
        if not isinstance(changes["ts"], (int, float)) or changes["ts"] <= current["ts"]:
            raise Refused(f"ts {changes['ts']!r} is not newer than the stored {current['ts']!r}")
        return changes["ts"]
    if "update_keeps_old_ts" in bugs:
        return current["ts"]
    if "ts_in_seconds" in bugs:
        return now_ts(bugs)
    return max(now_ts(bugs), int(current["ts"]) + 1)


def delete(path: str, entry_id: object, bugs: frozenset) -> dict:
    """Rewrite the file without every line of the id; unreadable lines of other apps are kept byte for byte."""
    if not isinstance(entry_id, str) or not entry_id:
        raise Refused("delete needs an id string")
    with locked(path, bugs):
        winner = live_entry(path, entry_id, bugs)
        lines = raw_lines(path)
        kept = [
            line for number, line in enumerate(lines) if not drops_line(line, number, entry_id, winner, bugs)
        ]
        rewrite(path, kept)
    return {"deleted": entry_id}


def drops_line(line: bytes, number: int, entry_id: str, winner: dict, bugs: frozenset) -> bool:
    value = parse_line(line, number == 0)
    if not isinstance(value, dict) or value.get("id") != entry_id:
        return False
    return value == winner if "delete_only_last_line" in bugs else True


def rewrite(path: str, lines: list[bytes]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o777
    descriptor, temporary = tempfile.mkstemp(prefix=".memory.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(b"".join(line + b"\n" for line in lines))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


__all__ = ["append", "update", "delete", "is_uuid4"]
