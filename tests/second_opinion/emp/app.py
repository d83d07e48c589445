#!/usr/bin/env python3
"""Edge Memory Protocol v1.0: an independent app (writer and reader) over a shared memory.jsonl.

Written from the spec text alone. One process per operation, so several invocations behave as
separate apps sharing one file:

    python app.py OP INPUT.json OUTPUT.json

OP is one of append, update, delete, resolve, query (and compact, an extra). INPUT holds the
request JSON, OUTPUT receives the reply JSON. Exit 0 done, 3 refused, 4 no such operation,
1 the app failed (I/O error and the like), 2 bad command line.

Design, in short:
- the file is JSON Lines; every line is parsed on its own, so a corrupt line (bad JSON, bad
  UTF-8, a schema violation, an unsupported major version) is skipped and nothing else is lost;
- resolution: per id, the line with the newest ts wins (equal ts: the later line); a winning
  tombstone (`"deleted": true`) hides the id;
- writers take `memory.jsonl.lock` (O_EXCL, owner recorded inside), wait with exponential
  backoff and jitter, break a lock only when it is stale (owner process gone, or older than
  EMP_LOCK_STALE_S), and remove only a lock they own;
- appends are one O_APPEND write of a whole line, fsynced before the reply; a torn last line
  is closed with a newline first so the new entry never fuses with it;
- rewrites (delete scrubs the deleted entry's earlier versions; compact) go to a temporary file
  in the same folder, fsynced, then renamed over the original: readers see old or new, never half.

Bugs for harness evaluation are switched on by SECOND_OPINION_BUGS (comma-separated names, see
bugs.json); with it unset the app is meant to be correct.
"""
from __future__ import annotations

import json
import math
import os
import random
import re
import socket
import stat
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

APP_SRC = "dev.secondopinion.emp"  # this app's identity when a request names none
PROTOCOL_VERSION = "1.0"
SUPPORTED_MAJOR = 1

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED, EXIT_NO_OP = 0, 1, 2, 3, 4

BUGS = frozenset(b.strip() for b in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if b.strip())

LOCK_WAIT_S = float(os.environ.get("EMP_LOCK_WAIT_S", "15"))    # give up waiting after this
LOCK_STALE_S = float(os.environ.get("EMP_LOCK_STALE_S", "10"))  # a lock this old is abandoned
MAX_LOCK_BYTES = 4096

REQUIRED = ("v", "id", "ts", "src", "content")
TOMBSTONE_MARKERS = ("deleted", "tombstone")

VERSION_RE = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
UUID4_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
SRC_RE = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+")
ENCRYPTED_RE = re.compile(r"encrypted:([A-Za-z0-9][A-Za-z0-9_-]*):([A-Za-z0-9+/=_-]+)")


def bug(name: str) -> bool:
    return name in BUGS


class Refused(Exception):
    """The request is rejected; nothing was written."""


class LockBusy(Refused):
    """Another app held the lock for longer than we are willing to wait."""


# --------------------------------------------------------------------------------------------
# JSON

def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """RFC 8259 JSON only: no NaN/Infinity, no duplicate keys (parsers disagree on them)."""
    return json.loads(text, object_pairs_hook=_pairs_no_duplicates, parse_constant=_reject_constant)


def dumps_line(entry: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8, newline-terminated. Refuses what UTF-8 cannot carry."""
    ordered = {key: entry[key] for key in REQUIRED if key in entry}  # v first, as readers parse it first
    ordered.update((key, value) for key, value in entry.items() if key not in ordered)
    entry = ordered
    try:
        text = json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        raise Refused("entry holds text that is not valid Unicode (a lone surrogate); UTF-8 cannot encode it") from None
    except ValueError as exc:
        raise Refused(f"entry is not representable as JSON: {exc}") from None


# --------------------------------------------------------------------------------------------
# Schema

def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def version_major(value: Any) -> int | None:
    if isinstance(value, str) and VERSION_RE.fullmatch(value):
        return int(value.split(".", 1)[0])
    return None


def is_tombstone(entry: dict[str, Any]) -> bool:
    return any(entry.get(marker) is True for marker in TOMBSTONE_MARKERS) or entry.get("type") == "tombstone"


def optional_fields_ok(entry: dict[str, Any]) -> str | None:
    """Why the optional fields are malformed, or None."""
    if "type" in entry and not isinstance(entry["type"], str):
        return "type must be a string"
    if "tags" in entry:
        tags = entry["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            return "tags must be an array of strings"
    if "meta" in entry and not isinstance(entry["meta"], dict):
        return "meta must be an object"
    if "emb" in entry:
        emb = entry["emb"]
        if not isinstance(emb, list) or not all(is_number(x) for x in emb):
            return "emb must be an array of numbers"
    return None


def readable_entry(obj: Any) -> dict[str, Any] | None:
    """The entry when this parsed line is one we can use (reader side, lenient), else None.

    Parse v first: only major version 1 is understood (any minor; unknown fields are ignored).
    The id must be a non-empty string (not necessarily a v4 UUID: the spec's own examples carry
    v1 UUIDs); ts a finite number. A tombstone needs only v, id and ts.
    """
    if not isinstance(obj, dict) or version_major(obj.get("v")) != SUPPORTED_MAJOR:
        return None
    if not isinstance(obj.get("id"), str) or not obj["id"] or not is_number(obj.get("ts")):
        return None
    if is_tombstone(obj):
        return obj
    if not isinstance(obj.get("src"), str) or not isinstance(obj.get("content"), str):
        return None
    if optional_fields_ok(obj) is not None:
        return None
    return obj


def check_for_write(entry: dict[str, Any], existing_id: bool = False) -> None:
    """Writer side, strict: 'Validate entries: Check schema before writing'.

    `existing_id`: the line updates an entry already in the file, whose id (possibly written by
    another app, possibly not a v4 UUID) is not this writer's to judge.
    """
    for field in REQUIRED:
        if field not in entry:
            raise Refused(f"missing required field {field!r}")
    major = version_major(entry["v"])
    if major is None:
        raise Refused(f"v must be a \"MAJOR.MINOR\" string, got {entry['v']!r}")
    if major != SUPPORTED_MAJOR:
        raise Refused(f"this app writes protocol major version {SUPPORTED_MAJOR}, not {entry['v']!r}")
    ident = entry["id"]
    if existing_id:
        pass
    elif bug("accepts_non_v4_id"):
        if not isinstance(ident, str) or not ident:
            raise Refused("id must be a non-empty string")
    elif not isinstance(ident, str) or not UUID4_RE.fullmatch(ident):
        raise Refused(f"id must be a valid UUID v4, got {ident!r}")
    if not is_number(entry["ts"]) or entry["ts"] < 0:
        raise Refused(f"ts must be a non-negative Unix timestamp in milliseconds, got {entry['ts']!r}")
    if not isinstance(entry["src"], str) or not SRC_RE.fullmatch(entry["src"]):
        raise Refused(f"src must be reverse domain notation (com.company.app), got {entry['src']!r}")
    content = entry["content"]
    if not isinstance(content, str):
        raise Refused("content must be a string")
    if content.startswith("encrypted:") and not ENCRYPTED_RE.fullmatch(content):
        raise Refused("content starts with the encryption prefix but is not encrypted:ALGORITHM:base64data")
    problem = optional_fields_ok(entry)
    if problem:
        raise Refused(problem)
    for tag in entry.get("tags", []):
        if tag != tag.lower():
            raise Refused(f"tags must be lowercase, got {tag!r}")
        if not tag:
            raise Refused("a tag must not be empty")
    for marker in TOMBSTONE_MARKERS:
        if marker in entry and not isinstance(entry[marker], bool):
            raise Refused(f"{marker} must be a boolean")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def newer_ts(previous: float | None) -> int:
    """A ts that takes precedence over `previous` even when clocks disagree."""
    ts = now_ms()
    if previous is not None and ts <= previous:
        ts = math.floor(previous) + 1
    return ts


# --------------------------------------------------------------------------------------------
# Reading the file

class Line:
    __slots__ = ("index", "raw", "entry")

    def __init__(self, index: int, raw: bytes, entry: dict[str, Any] | None) -> None:
        self.index, self.raw, self.entry = index, raw, entry


def _open_regular(path: str, flags: int, mode: int = 0o644) -> int:
    """Open `path` (following a symlink, as apps do) only when it is a regular file."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def parse_line(raw: bytes, first: bool) -> dict[str, Any] | None:
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a byte order mark left by a text editor
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
        return readable_entry(loads_strict(text))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None  # corruption stays confined to this line


def read_lines(path: str) -> list[Line]:
    """Every line of the file (raw bytes without the newline) and its entry when usable."""
    try:
        fd = _open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, "rb") as handle:
        if bug("whole_file_utf8_decode"):
            # decodes the file as one text: a single bad byte anywhere fails the whole read
            text = handle.read().decode("utf-8")
            raws = [part.encode("utf-8") for part in text.split("\n")]
            if raws and raws[-1] == b"":
                raws.pop()
        else:
            raws = [raw[:-1] if raw.endswith(b"\n") else raw for raw in handle]
    return [Line(i, raw, parse_line(raw, i == 0)) for i, raw in enumerate(raws)]


def winners(lines: list[Line]) -> dict[str, Line]:
    """Per id, the line that takes precedence: newest ts, and on a tie the later line."""
    best: dict[str, Line] = {}
    for line in lines:
        entry = line.entry
        if entry is None:
            continue
        current = best.get(entry["id"])
        if bug("last_line_wins") or current is None or (entry["ts"], line.index) > (current.entry["ts"], current.index):  # type: ignore[index]
            best[entry["id"]] = line
    return best


def live_entries(lines: list[Line]) -> list[dict[str, Any]]:
    best = winners(lines)
    if bug("tombstone_beats_newer_entry"):
        gone = {ln.entry["id"] for ln in lines if ln.entry is not None and is_tombstone(ln.entry)}
        alive = [ln for ln in best.values() if ln.entry["id"] not in gone]  # type: ignore[index]
    else:
        alive = [ln for ln in best.values() if not is_tombstone(ln.entry)]  # type: ignore[arg-type]
    alive.sort(key=lambda ln: (ln.entry["ts"], ln.index))  # type: ignore[index]
    return [ln.entry for ln in alive]  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Lock: memory.jsonl.lock

class Lock:
    def __init__(self, path: str, body: bytes, ino: int, dev: int) -> None:
        self.path, self.body, self.ino, self.dev = path, body, ino, dev


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError, OSError):
        return True  # cannot tell: let the age decide
    return True


def _lock_is_stale(lock_path: str) -> os.stat_result | None:
    """The lock's stat when it is abandoned (owner gone or too old), else None."""
    try:
        st = os.stat(lock_path)
        with open(lock_path, "rb") as handle:
            raw = handle.read(MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    try:
        owner = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        owner = None  # empty (being written right now) or written by another implementation
    if isinstance(owner, dict) and owner.get("host") == socket.gethostname():
        pid = owner.get("pid")
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and not _pid_alive(pid):
            return st
    if time.time() - st.st_mtime > LOCK_STALE_S:
        return st
    return None


def _break_stale_lock(lock_path: str, seen: os.stat_result) -> None:
    """Remove the abandoned lock we looked at, and only that one.

    Rename it aside first, then check it is the file we judged stale: if another app replaced it
    meanwhile (it broke the same lock and took a fresh one), put theirs back.
    """
    aside = f"{lock_path}.stale-{uuid.uuid4().hex}"
    try:
        os.rename(lock_path, aside)
    except FileNotFoundError:
        return
    try:
        moved = os.lstat(aside)
        if (moved.st_ino, moved.st_dev) != (seen.st_ino, seen.st_dev):
            try:
                os.link(aside, lock_path)
            except FileExistsError:
                pass
    finally:
        try:
            os.unlink(aside)
        except FileNotFoundError:
            pass


def acquire_lock(path: str) -> Lock:
    lock_path = path + ".lock"
    os.makedirs(os.path.dirname(os.path.abspath(lock_path)), exist_ok=True)
    body = json.dumps({
        "app": APP_SRC, "pid": os.getpid(), "host": socket.gethostname(),
        "token": uuid.uuid4().hex, "created_ms": now_ms(),
    }).encode("utf-8")
    deadline = time.monotonic() + LOCK_WAIT_S
    delay = 0.005
    attempts = 0
    while True:
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        except FileExistsError:
            attempts += 1
            if bug("live_lock_broken_after_retries") and attempts > 6:
                # "it has been held too long, it must be stale": takes over a live lock
                try:
                    os.unlink(lock_path)
                except FileNotFoundError:
                    pass
                continue
            stale = _lock_is_stale(lock_path)
            if stale is not None:
                _break_stale_lock(lock_path, stale)
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LockBusy(f"{lock_path} is held by another app; gave up after {LOCK_WAIT_S:g}s") from None
            time.sleep(min(remaining, delay * random.uniform(0.5, 1.0)))
            delay = min(delay * 2, 0.5)
            continue
        try:
            written = 0
            while written < len(body):
                written += os.write(fd, body[written:])
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(lock_path)
            except FileNotFoundError:
                pass
            raise
        os.close(fd)
        return Lock(lock_path, body, st.st_ino, st.st_dev)


def release_lock(lock: Lock) -> None:
    """Remove the lock file only if it is still ours (same file, same owner record)."""
    try:
        st = os.stat(lock.path)
        with open(lock.path, "rb") as handle:
            raw = handle.read(MAX_LOCK_BYTES)
    except FileNotFoundError:
        return
    if (st.st_ino, st.st_dev) == (lock.ino, lock.dev) and raw == lock.body:
        try:
            os.unlink(lock.path)
        except FileNotFoundError:
            pass


@contextmanager
def locked(path: str) -> Iterator[Lock]:
    lock = acquire_lock(path)
    try:
        yield lock
    except Refused:
        if bug("lock_left_on_refusal"):
            raise  # the early-exit path forgets to release
        release_lock(lock)
        raise
    except BaseException:
        release_lock(lock)
        raise
    release_lock(lock)


# --------------------------------------------------------------------------------------------
# Writing

def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def append_line(path: str, line: bytes) -> None:
    """Append one whole line durably. Call with the lock held."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    existed = os.path.lexists(path)
    fd = _open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size and not bug("append_glued_to_torn_line") and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # close a torn last line so it cannot swallow this entry
        try:
            _write_all(fd, line)
            os.fsync(fd)
        except BaseException:
            try:
                os.ftruncate(fd, size)  # leave no half line behind (we hold the lock)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
    if not existed:
        _fsync_dir(directory)


def rewrite_file(path: str, data: bytes) -> None:
    """Replace the file's content atomically. Call with the lock held."""
    real = os.path.realpath(path)  # a symlinked memory.jsonl stays a symlink
    if bug("rewrite_in_place"):
        with open(real, "r+b") as handle:
            handle.truncate(0)
            handle.write(data)
        return
    directory = os.path.dirname(real)
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        mode = 0o644
    tmp = os.path.join(directory, f".{os.path.basename(real)}.rewrite-{uuid.uuid4().hex}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(directory)


def join_lines(lines: list[Line]) -> bytes:
    return b"".join(line.raw + b"\n" for line in lines)


# --------------------------------------------------------------------------------------------
# Operations

def _path(req: dict[str, Any]) -> str:
    path = req.get("path")
    if not isinstance(path, str) or not path or "\x00" in path:
        raise Refused("path must name the memory.jsonl file")
    return path


def _id(req: dict[str, Any]) -> str:
    ident = req.get("id")
    if not isinstance(ident, str) or not ident:
        raise Refused("id must be a non-empty string")
    return ident


def op_append(req: dict[str, Any]) -> dict[str, Any]:
    path = _path(req)
    entry = req.get("entry")
    if not isinstance(entry, dict):
        raise Refused("entry must be a JSON object")
    entry = dict(entry)
    entry.setdefault("v", PROTOCOL_VERSION)
    entry.setdefault("src", APP_SRC)
    chose_id = "id" not in entry
    if chose_id:
        entry["id"] = str(uuid.uuid4())
    if "ts" in entry:
        check_for_write(entry)
        line = dumps_line(entry)
        with locked(path):
            append_line(path, line)
    else:
        check_for_write({**entry, "ts": 0})
        with locked(path):
            previous = None
            if not chose_id:  # an existing id: this line must take precedence over it
                found = winners(read_lines(path)).get(entry["id"])
                previous = found.entry["ts"] if found is not None else None  # type: ignore[index]
            entry["ts"] = newer_ts(previous)
            append_line(path, dumps_line(entry))
    return {"id": entry["id"], "ts": entry["ts"]}


def op_update(req: dict[str, Any]) -> dict[str, Any]:
    path, ident = _path(req), _id(req)
    changes = req.get("entry", {})
    if changes is None:
        changes = {}
    if not isinstance(changes, dict):
        raise Refused("entry must be a JSON object of the fields to change")
    if "id" in changes and changes["id"] != ident:
        raise Refused("an update cannot change the id")
    if any(changes.get(m) for m in TOMBSTONE_MARKERS):
        raise Refused("use delete to delete an entry")
    if "ts" in changes and changes["ts"] is not None and not is_number(changes["ts"]):
        raise Refused("ts must be a Unix timestamp in milliseconds")

    def apply() -> dict[str, Any]:
        found = winners(read_lines(path)).get(ident)
        if found is None or is_tombstone(found.entry):  # type: ignore[arg-type]
            raise Refused(f"no entry with id {ident!r}")
        current: dict[str, Any] = found.entry  # type: ignore[assignment]
        new = dict(current)
        for key, value in changes.items():
            if value is None:
                if key in REQUIRED:
                    raise Refused(f"{key} is required and cannot be removed")
                new.pop(key, None)
            else:
                new[key] = value
        given = changes.get("ts")
        new["ts"] = given if is_number(given) and given > current["ts"] else newer_ts(current["ts"])
        check_for_write(new, existing_id=True)
        append_line(path, dumps_line(new))
        return {"id": ident, "ts": new["ts"]}

    if bug("update_skips_lock"):
        return apply()
    with locked(path):
        return apply()


def op_delete(req: dict[str, Any]) -> dict[str, Any]:
    """Append a tombstone, and scrub the deleted entry's earlier versions from the file.

    The rewrite keeps every other line byte for byte, including lines this app cannot read
    (corrupt ones, other protocol versions): they are not ours to drop.
    """
    path, ident = _path(req), _id(req)
    with locked(path):
        lines = read_lines(path)
        found = winners(lines).get(ident)
        if found is None or is_tombstone(found.entry):  # type: ignore[arg-type]
            raise Refused(f"no entry with id {ident!r}")
        ts = newer_ts(found.entry["ts"])  # type: ignore[index]
        tombstone = {"v": PROTOCOL_VERSION, "id": ident, "ts": ts, "src": APP_SRC, "content": "", "deleted": True}
        keep = [ln for ln in lines if ln.entry is None or ln.entry["id"] != ident]
        rewrite_file(path, join_lines(keep) + dumps_line(tombstone))
    return {"id": ident, "ts": ts, "deleted": True}


def op_compact(req: dict[str, Any]) -> dict[str, Any]:
    """Drop superseded versions; keep tombstones, lines we cannot read, and file order."""
    path = _path(req)
    with locked(path):
        lines = read_lines(path)
        best = winners(lines)
        keep = [ln for ln in lines if ln.entry is None or best[ln.entry["id"]] is ln]
        keep = [ln for ln in keep if ln.entry is not None or ln.raw.strip(b" \t\r")]
        if len(keep) != len(lines):
            rewrite_file(path, join_lines(keep))
    return {"lines_before": len(lines), "lines_after": len(keep)}


def op_resolve(req: dict[str, Any]) -> list[dict[str, Any]]:
    return live_entries(read_lines(_path(req)))


def _query_params(req: dict[str, Any]) -> tuple[Any, Any, list[str], Any, Any]:
    start, end, tags, kind, text = (req.get(k) for k in ("start", "end", "tags", "type", "text"))
    for name, value in (("start", start), ("end", end)):
        if value is not None and not is_number(value):
            raise Refused(f"{name} must be a timestamp in milliseconds")
    if tags is None:
        tags = []
    elif isinstance(tags, str):
        tags = [tags]
    elif not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise Refused("tags must be a tag or a list of tags")
    if kind is not None and not isinstance(kind, str):
        raise Refused("type must be a string")
    if text is not None and not isinstance(text, str):
        raise Refused("text must be a string")
    return start, end, tags, kind, text


def _matches(entry: dict[str, Any], start: Any, end: Any, tags: list[str], kind: Any, text: Any) -> bool:
    ts = entry["ts"]
    if start is not None and ts < start:
        return False
    if end is not None and ts > end:
        return False
    if tags and not all(tag in entry.get("tags", []) for tag in tags):
        return False
    if kind is not None and entry.get("type") != kind:
        return False
    if text is not None:
        content = entry.get("content", "")
        if content.startswith("encrypted:") and ENCRYPTED_RE.fullmatch(content):
            return False  # ciphertext: its words are not the memory's words
        if text.casefold() not in content.casefold():
            return False
    return True


def op_query(req: dict[str, Any]) -> list[dict[str, Any]]:
    path = _path(req)
    params = _query_params(req)
    lines = read_lines(path)
    if bug("query_filter_before_resolve"):
        # filters the lines, then keeps the newest of what matched
        matching = [ln for ln in lines if ln.entry is not None and _matches(ln.entry, *params)]
        return live_entries(matching)
    return [entry for entry in live_entries(lines) if _matches(entry, *params)]


OPS = {
    "append": op_append, "update": op_update, "delete": op_delete,
    "resolve": op_resolve, "query": op_query, "compact": op_compact,
}


# --------------------------------------------------------------------------------------------

def _reply(output: str, body: Any) -> None:
    with open(output, "w", encoding="utf-8") as handle:
        json.dump(body, handle, ensure_ascii=False, allow_nan=False)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: app.py OP INPUT.json OUTPUT.json", file=sys.stderr)
        return EXIT_USAGE
    op, input_path, output_path = argv[1:]
    handler = OPS.get(op)
    if handler is None:
        _reply(output_path, {"error": f"no such operation: {op!r}", "operations": sorted(OPS)})
        return EXIT_NO_OP
    try:
        with open(input_path, "rb") as handle:
            request = loads_strict(handle.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        _reply(output_path, {"error": f"unreadable request: {exc}"})
        return EXIT_REFUSED
    if not isinstance(request, dict):
        _reply(output_path, {"error": "the request must be a JSON object"})
        return EXIT_REFUSED
    try:
        body = handler(request)
    except Refused as exc:
        _reply(output_path, {"error": str(exc), "busy": isinstance(exc, LockBusy)})
        return EXIT_REFUSED
    except Exception as exc:  # an I/O failure and the like: report it, do not pretend success
        _reply(output_path, {"error": f"{type(exc).__name__}: {exc}"})
        print(f"{op} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _reply(output_path, body)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
