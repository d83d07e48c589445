"""Known-broken EMP apps on the failure paths: rewrites, crashes mid-write, contention on a missing file,
lock ownership, and what the independent implementation (tests/second_opinion/emp) got wrong. MUTANTS and
the expected kills are in table.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.emp import format as emp
from memconform.suites.emp.reference import NEAR_COSINE, ReferenceEmpApp, cosine, query_problems
from memconform.targets.base import Rejected


class RewritesFromCache(ReferenceEmpApp):
    """Keeps the file in memory from its first read and deletes by writing that copy back: what other
    apps appended since is lost (only a sequence of operations shows it)."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: dict[str, list[bytes]] = {}

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, lines)
        self.cache.setdefault(path, [])
        self.cache[path] += [json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() for e in lines]

    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        if path not in self.cache and os.path.exists(path):
            self.cache[path] = [raw for raw in open(path, "rb").read().split(b"\n") if raw.strip()]
        return super().lines(path)

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        self.lines(path)
        self.acquire(path)
        try:
            keep = [raw for raw in self.cache.get(path, [])
                    if not (isinstance(e := emp.parse_line(emp.decode(raw)), dict) and e.get("id") == body["id"])]
            self.cache[path] = keep
            with open(path, "wb") as fh:
                fh.write(b"".join(raw + b"\n" for raw in keep))
        finally:
            self.release(path)
        return {"ok": True}


class RewritesInPlace(ReferenceEmpApp):
    """Deletes by truncating the file and writing the kept lines back one by one (no temporary file):
    a crash in the middle leaves other apps' lines gone."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            raws = [r for r in open(path, "rb").read().split(b"\n") if r.strip()]
            keep = [r for r in raws if not (isinstance(e := emp.parse_line(emp.decode(r)), dict) and e.get("id") == body["id"])]
            with open(path, "wb") as fh:
                for raw in keep:
                    fh.write(raw + b"\n")
                    fh.flush()
                    time.sleep(0.05)  # a slow medium: each line takes a moment
        finally:
            self.release(path)
        return {"ok": True}


class UpdateAsNewId(ReferenceEmpApp):
    """Writes an update as a new entry with a fresh id (the old one stays)."""

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        current = {e["id"]: e for e in self.view(body["path"])}.get(body["id"])
        if current is None:
            raise Rejected({"error": "no such entry"}, "no such entry")
        entry = {**current, **body.get("entry", {}), "id": str(uuid.uuid4()), "ts": int(time.time() * 1000)}
        self.locked_append(body["path"], [entry])
        return {"ok": True, "id": entry["id"]}


class UpdateInPlace(ReferenceEmpApp):
    """Updates by rewriting the entry's line where it is, keeping its ts."""

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            out = []
            for raw in open(path, "rb").read().split(b"\n"):
                e = emp.parse_line(emp.decode(raw)) if raw.strip() else None
                if isinstance(e, dict) and e.get("id") == body["id"]:
                    raw = json.dumps({**e, **body.get("entry", {})}).encode()
                out.append(raw)
            with open(path, "wb") as fh:
                fh.write(b"\n".join(out))
        finally:
            self.release(path)
        return {"ok": True, "id": body["id"]}


class AppendReserialises(ReferenceEmpApp):
    """Appends by loading every line, re-serialising it, and writing the whole file back."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        kept = [json.dumps(e) if isinstance(e, dict) else raw for _, raw, e in self.lines(path)]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in kept + [json.dumps(e) for e in lines]))


class ReplacesBadUtf8(ReferenceEmpApp):
    """Appends by reading the file as text with U+FFFD replacement and writing it all back."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        old = open(path, "rb").read().decode("utf-8", "replace") if os.path.exists(path) else ""
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(old + "".join(json.dumps(e) + "\n" for e in lines))


class RewriteReencodes(ReferenceEmpApp):
    """Deletes by rewriting the file, keeping every other line but re-encoding it as JSON."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            kept = [json.dumps(e) if isinstance(e, dict) else raw for _, raw, e in self.lines(path)
                    if not (isinstance(e, dict) and e.get("id") == body["id"])]
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in kept))
        finally:
            self.release(path)
        return {"ok": True}


class MissingFileTruncates(ReferenceEmpApp):
    """Creates a missing file by truncating it before taking the lock (another app's first entry is wiped).

    The interleaving a busy phone produces by chance is forced with events, so it happens on every
    run whatever the machine's load: the first app to find the file missing waits until a second one
    has found it missing too, then creates it and appends; the others truncate once it has appended.
    (Sleeps staggered by arrival lost nothing when a loaded machine ran the truncations first.)"""

    WAIT_S = 10.0  # a bound on each wait, never a window the verdict depends on
    _state: dict[str, dict[str, Any]] = {}
    _state_lock = threading.Lock()

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        if not os.path.exists(path):
            with self._state_lock:
                state = self._state.setdefault(path, {"arrived": 0, "second": threading.Event(),
                                                      "appended": threading.Event()})
                state["arrived"] += 1
                first = state["arrived"] == 1
                if state["arrived"] == 2:
                    state["second"].set()
            if first:
                state["second"].wait(self.WAIT_S)  # "is it there?" ... (another app asks the same now)
                open(path, "w").close()
                super().locked_append(path, lines)
                state["appended"].set()
                return
            state["appended"].wait(self.WAIT_S)  # ... "create it": truncating what the first app appended
            open(path, "w").close()
        super().locked_append(path, lines)


class CheckThenCreateLock(ReferenceEmpApp):
    """Looks for the lock, then creates it in a second step: two apps can both believe they hold it.

    The race is forced with events for the first two apps that find a file's lock free, so it shows on
    every run whatever the load: both take "the" lock, the first writes and removes it, and only then
    the second writes, with no lock in place (the app's other writers wait until the pair is done)."""

    WAIT_S = 2.0  # a bound on each wait, never a window the verdict depends on
    _pairs: dict[str, dict[str, Any]] = {}
    _pairs_lock = threading.Lock()

    def __init__(self) -> None:
        super().__init__()
        self._mine = threading.local()  # which of the pair this call is (one object serves every thread)
        self._active, self._active_lock = 0, threading.Lock()  # write calls in flight: apps at work now

    def _counted(self, op: Any, body: Any) -> Any:
        with self._active_lock:
            self._active += 1
        try:
            return op(body)
        finally:
            with self._active_lock:
                self._active -= 1

    def append(self, body: Any) -> dict[str, Any]:
        return self._counted(super().append, body)  # type: ignore[no-any-return]

    def delete(self, body: Any) -> dict[str, Any]:
        return self._counted(super().delete, body)  # type: ignore[no-any-return]

    def acquire(self, path: str) -> None:
        delay, deadline = 0.002, time.monotonic() + self.MAX_WAIT_S
        while True:
            while os.path.exists(self.lock_path(path)):
                if time.monotonic() > deadline:
                    raise TimeoutError("lock held too long")
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
            # the window between "is it free?" and "take it": idle -> waiting (a first app found it free
            # while another app is at work) -> paired (a second found it free too) -> done
            with self._pairs_lock:
                pair = self._pairs.setdefault(path, {"state": "idle", "both": threading.Event(),
                                                     "released": threading.Event(), "done": threading.Event()})
                self._mine.pair, self._mine.rank = pair, 0
                if pair["state"] == "idle" and self._active > 1:
                    pair["state"], self._mine.rank = "waiting", 1
                elif pair["state"] == "waiting":
                    pair["state"], self._mine.rank = "paired", 2
                    pair["both"].set()
                paired = pair["state"] == "paired" and self._mine.rank == 0
            if not paired:
                break
            pair["done"].wait(self.WAIT_S)  # the app's other writers come after the pair (a forced order)
        if self._mine.rank == 1 and not pair["both"].wait(self.WAIT_S):
            with self._pairs_lock:  # nobody else came: an ordinary write
                pair["state"], self._mine.rank = "idle", 0
        with open(self.lock_path(path), "w") as fh:
            fh.write(self._lock_token(path))

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        if getattr(self._mine, "rank", 0) == 2:
            self._mine.pair["released"].wait(self.WAIT_S)  # the other holder is done and has removed the lock
        super().write_lines(path, lines)

    def release(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):  # the other holder may have removed "its" lock
            os.unlink(self.lock_path(path))  # whoever's it is: both of the pair believe it is theirs
        rank = getattr(self._mine, "rank", 0)
        if rank == 1:
            self._mine.pair["released"].set()
        elif rank == 2:
            self._mine.pair["state"] = "done"
            self._mine.pair["done"].set()
        self._mine.rank = 0


class StrictFileBeforeAppend(ReferenceEmpApp):
    """Reads the whole file before an append and refuses to touch it when any line is bad (torn, not
    JSON, not valid UTF-8): one app's broken line stops every app's appends."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        path = body.get("path") if isinstance(body, dict) else None
        if isinstance(path, str) and os.path.exists(path):
            for _, raw, e in self.lines(path):
                if isinstance(e, emp.LineError) or isinstance(raw, emp.Replaced):
                    raise Rejected({"error": "memory.jsonl is corrupt"}, "corrupt file")
        return super().append(body)


class UpdateSkipsLock(ReferenceEmpApp):
    """Locks appends and deletes, but writes an update without the lock (a second code path that
    forgot it)."""

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        current = {e["id"]: e for e in self.view(path)}.get(body["id"])
        if current is None:
            raise Rejected({"error": "no such entry"}, "no such entry")
        entry = {**current, **body.get("entry", {}), "id": body["id"], "ts": max(int(time.time() * 1000), current["ts"] + 1)}
        self.write_lines(path, [entry])
        return {"ok": True, "id": body["id"]}


class LockLeftOnRefusal(ReferenceEmpApp):
    """Takes the lock before it looks the id up; refusing an update or delete of an unknown id, the
    early exit skips the release."""

    def _known_under_lock(self, path: str, entry_id: str) -> None:
        self.acquire(path)
        if entry_id not in {e["id"] for e in self.view(path)}:
            raise Rejected({"error": f"no entry {entry_id!r}"}, "no such entry")  # the lock stays
        self.release(path)

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        self._known_under_lock(body["path"], body["id"])
        return super().update(body)

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        self._known_under_lock(body["path"], body["id"])
        return super().delete(body)


class TombstoneFinal(ReferenceEmpApp):
    """Any tombstone hides its id for good, even behind a line with a newer ts."""

    def view(self, path: str) -> list[dict[str, Any]]:
        lines = self.lines(path)
        gone = {e["id"] for _, _, e in lines if emp.readable(e) and emp.is_tombstone(e)}
        return [e for e in emp.resolve(lines) if e["id"] not in gone]


class WholeFileDecode(ReferenceEmpApp):
    """Decodes the whole file as UTF-8 at once: one invalid byte in any line fails every read."""

    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        if not os.path.exists(path):
            return []
        text = open(path, "rb").read().decode("utf-8")  # UnicodeDecodeError: the whole read fails
        return list(emp.iter_text(text.replace("\r\n", "\n")))


class QueryFiltersRawLines(ReferenceEmpApp):
    """query filters the raw lines first, then resolves what matched: a superseded version that matches
    comes back, and so does an entry whose tombstone does not match."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if query_problems(body):
            raise Rejected({"errors": query_problems(body)}, "query parameters do not validate")
        return emp.resolve([(n, raw, e) for n, raw, e in self.lines(body["path"]) if emp.readable(e) and _matches(body, e)])


def _matches(body: dict[str, Any], e: dict[str, Any]) -> bool:
    """The reference's query filters, applied to one line."""
    if body.get("start") is not None and e["ts"] < body["start"]:
        return False
    if body.get("end") is not None and e["ts"] > body["end"]:
        return False
    if body.get("tags") and not set(body["tags"]) <= set(e.get("tags") or []):
        return False
    if body.get("type") is not None and e.get("type") != body["type"]:
        return False
    if body.get("near") is not None and cosine(e.get("emb"), body["near"]) < NEAR_COSINE:
        return False
    return body.get("text") is None or body["text"].lower() in e["content"].lower()


class AcceptsAnyStringId(ReferenceEmpApp):
    """Validates every field but the id, which only has to be a non-empty string ("note-1" is written)."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        entry = {"v": emp.VERSION, "src": self.SRC, "ts": int(time.time() * 1000), **body["entry"]}
        if not (isinstance(entry.get("id"), str) and entry["id"]):
            raise Rejected({"errors": ["id must be a non-empty string"]}, "bad id")
        errors = emp.hard_errors({**entry, "id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93"})  # every rule but the id's
        if errors:
            raise Rejected({"errors": errors}, "entry does not validate")
        self.locked_append(body["path"], [entry])
        return {"ok": True, "id": entry["id"]}
