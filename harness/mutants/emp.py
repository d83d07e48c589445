"""Known-broken Edge Memory Protocol apps, each breaking one rule of the reference."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from memconform.formats import emp
from memconform.reference.emp import ReferenceEmpApp
from memconform.targets.base import Rejected


class NoLock(ReferenceEmpApp):
    """Ignores memory.jsonl.lock and rewrites the whole file (read, pause, write back)."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        time.sleep(0.002)
        new = "".join(json.dumps(e) + "\n" for e in lines)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(old + new)


class LockLeftBehind(ReferenceEmpApp):
    """Takes the lock but never removes it (nor waits for it)."""

    def acquire(self, path: str) -> None:
        open(self.lock_path(path), "w").close()

    def release(self, path: str) -> None:
        pass


class StaleLockForever(ReferenceEmpApp):
    """Never takes over a lock, however old."""

    STALE_S = float("inf")


class RewriteDropsForeign(ReferenceEmpApp):
    """Deletes by rewriting the file with only the lines it understands."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        keep = [e for e in self.view(path) if e["id"] != body["id"]]
        self.acquire(path)
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(e) + "\n" for e in keep))
        finally:
            self.release(path)
        return {"ok": True}


class FileOrderWins(ReferenceEmpApp):
    """The last line for an id wins, whatever its ts."""

    def view(self, path: str) -> list[dict[str, Any]]:
        last: dict[str, dict[str, Any]] = {}
        for _, _, e in self.lines(path):
            if emp.readable(e):
                last[e["id"]] = e
        return [e for e in last.values() if not emp.is_tombstone(e)]


class CorruptAborts(ReferenceEmpApp):
    """One bad line refuses the whole read."""

    def resolve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        lines = self.lines(body["path"])
        if any(isinstance(e, emp.LineError) for _, _, e in lines):
            raise Rejected({"error": "corrupt file"}, "corrupt file")
        return emp.resolve(lines)


class NewerMajorAccepted(ReferenceEmpApp):
    """Reads entries of any major version as if they were 1.x."""

    def view(self, path: str) -> list[dict[str, Any]]:
        lines = [(n, r, dict(e, v="1.0") if isinstance(e, dict) else e) for n, r, e in self.lines(path)]
        return emp.resolve(lines)


class ExactVersionOnly(ReferenceEmpApp):
    """Drops every line whose v is not exactly "1.0" (newer minors are lost)."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return emp.resolve([(n, r, e) for n, r, e in self.lines(path) if isinstance(e, dict) and e.get("v") == "1.0"])


class TombstoneIgnored(ReferenceEmpApp):
    """Treats tombstones as ordinary entries."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return emp.resolve(self.lines(path), keep_tombstones=True)


class FiltersIgnored(ReferenceEmpApp):
    """query returns everything, ignoring time, tag and type filters."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return super().query({"path": body["path"], "text": body.get("text")})


class CaseSensitiveSearch(ReferenceEmpApp):
    """Content search compares case-sensitively."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        rest = {k: v for k, v in body.items() if k != "text"}
        return [e for e in super().query(rest) if body.get("text") is None or body["text"] in e["content"]]


class SecondsTimestamps(ReferenceEmpApp):
    """Writes ts as float seconds."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, ts=e["ts"] / 1000 + 0.5) for e in lines])


class TieKeepsFirstLine(ReferenceEmpApp):
    """On equal ts the line read first stays (a strict > where the reading says later line wins)."""

    def view(self, path: str) -> list[dict[str, Any]]:
        best: dict[str, dict[str, Any]] = {}
        for _, _, e in self.lines(path):
            if emp.readable(e) and (e["id"] not in best or e["ts"] > best[e["id"]]["ts"]):
                best[e["id"]] = e
        return [e for e in best.values() if not emp.is_tombstone(e)]


class TombstoneByFileOrder(ReferenceEmpApp):
    """A tombstone deletes what came before it in the file; any later line revives the id, whatever its ts."""

    def view(self, path: str) -> list[dict[str, Any]]:
        best: dict[str, dict[str, Any]] = {}
        for _, _, e in self.lines(path):
            if not emp.readable(e):
                continue
            if emp.is_tombstone(e):
                best.pop(e["id"], None)
            elif e["id"] not in best or e["ts"] >= best[e["id"]]["ts"]:
                best[e["id"]] = e
        return list(best.values())


class GluesToTornLine(ReferenceEmpApp):
    """Appends right after a torn last line, so the new entry is glued onto it and lost."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(e) + "\n" for e in lines))
            fh.flush()
            os.fsync(fh.fileno())


class BreaksLockOnTimeout(ReferenceEmpApp):
    """Waits 0.2 s for the lock, then deletes another app's fresh lock and writes anyway."""

    MAX_WAIT_S = 0.2

    def acquire(self, path: str) -> None:
        try:
            super().acquire(path)
        except TimeoutError:
            # another of its own writers may have broken the same lock first: not a crash
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path(path))
            super().acquire(path)

    def release(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):  # its own lock may have been broken the same way
            super().release(path)


class NeverCreatesLock(ReferenceEmpApp):
    """Waits while another app's lock exists, but never creates one of its own."""

    def acquire(self, path: str) -> None:
        delay, deadline = 0.002, time.monotonic() + self.MAX_WAIT_S
        while os.path.exists(self.lock_path(path)):
            if time.monotonic() > deadline:
                raise TimeoutError("lock held too long")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def release(self, path: str) -> None:
        pass


MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    NoLock, LockLeftBehind, StaleLockForever, RewriteDropsForeign, FileOrderWins, CorruptAborts,
    NewerMajorAccepted, ExactVersionOnly, TombstoneIgnored, FiltersIgnored, CaseSensitiveSearch, SecondsTimestamps,
    TieKeepsFirstLine, TombstoneByFileOrder, GluesToTornLine, BreaksLockOnTimeout, NeverCreatesLock)}

EXPECTED_KILLS: dict[str, set[str]] = {
    "NoLock": {"emp.writer_waits_for_lock", "emp.writer_locks_around_write", "emp.writer_concurrent_no_loss",
               "emp.writer_after_torn_line"},
    "LockLeftBehind": {"emp.writer_lock_removed", "emp.writer_waits_for_lock"},
    "StaleLockForever": {"emp.writer_stale_lock", "emp.writer_after_killed_writer"},
    "RewriteDropsForeign": {"emp.writer_delete_keeps_foreign"},
    "FileOrderWins": {"emp.reader_newest_ts_wins"},
    "CorruptAborts": {"emp.reader_corrupt_line_isolated"},
    "NewerMajorAccepted": {"emp.reader_newer_major_refused"},
    "ExactVersionOnly": {"emp.reader_unknown_ignored"},
    "TombstoneIgnored": {"emp.reader_tombstone_deletes"},
    "FiltersIgnored": {"emp.query_time", "emp.query_tags", "emp.query_type"},
    "CaseSensitiveSearch": {"emp.query_content"},
    "SecondsTimestamps": {"emp.ts_millis"},
    "TieKeepsFirstLine": {"emp.reader_equal_ts_tie"},
    "TombstoneByFileOrder": {"emp.reader_deleted_stays_deleted"},
    "GluesToTornLine": {"emp.writer_after_torn_line", "emp.writer_after_killed_writer"},
    "BreaksLockOnTimeout": {"emp.writer_waits_for_lock"},
    "NeverCreatesLock": {"emp.writer_locks_around_write"},
}
