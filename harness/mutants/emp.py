"""Known-broken Edge Memory Protocol apps, each breaking one rule of the reference."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from memconform.formats import emp
from memconform.hostile import parse_or_reject
from memconform.reference.emp import ReferenceEmpApp
from memconform.targets.base import Rejected

from .emp_paths import (  # noqa: F401  (mutants by name: python:memconform.mutants.emp:<Name>)
    AcceptsAnyStringId,
    AppendReserialises,
    CheckThenCreateLock,
    LockLeftOnRefusal,
    MissingFileTruncates,
    QueryFiltersRawLines,
    ReplacesBadUtf8,
    RewriteReencodes,
    RewritesFromCache,
    RewritesInPlace,
    StrictFileBeforeAppend,
    TombstoneFinal,
    UpdateAsNewId,
    UpdateInPlace,
    UpdateSkipsLock,
    WholeFileDecode,
)


class NoLock(ReferenceEmpApp):
    """Ignores memory.jsonl.lock and rewrites the whole file (read, pause, write back)."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        old = open(path, "rb").read() if os.path.exists(path) else b""
        time.sleep(0.002)
        new = "".join(json.dumps(e) + "\n" for e in lines).encode()
        with open(path, "wb") as fh:
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
    """Stamps ts as Unix seconds (a float), whatever it is given."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, ts=time.time()) for e in lines])


class TieKeepsFirstLine(ReferenceEmpApp):
    """On equal ts the line read first stays (a strict > where the reading says later line wins)."""

    def view(self, path: str) -> list[dict[str, Any]]:
        best: dict[str, dict[str, Any]] = {}
        for _, _, e in self.lines(path):
            if emp.readable(e) and (e["id"] not in best or e["ts"] > best[e["id"]]["ts"]):
                best[e["id"]] = e
        return [e for e in best.values() if not emp.is_tombstone(e)]


class TieKeepsBoth(ReferenceEmpApp):
    """Keeps every line of an id that has its newest ts: two lines with equal ts both show."""

    def view(self, path: str) -> list[dict[str, Any]]:
        lines = [e for _, _, e in self.lines(path) if emp.readable(e)]
        newest: dict[str, Any] = {}
        for e in lines:
            newest[e["id"]] = max(newest.get(e["id"], e["ts"]), e["ts"])
        return [e for e in lines if e["ts"] == newest[e["id"]] and not emp.is_tombstone(e)]


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


class Latin1Writer(ReferenceEmpApp):
    """Writes lines in Latin-1 (the platform's default encoding on some systems), not UTF-8."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in lines).encode("latin-1", "replace")
        with open(path, "ab") as fh:
            fh.write(data)


class NoValidation(ReferenceEmpApp):
    """Writes whatever entry it is given, without checking the schema."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        self.locked_append(body["path"], [body["entry"]])
        return {"ok": True, "id": body["entry"].get("id")}


class LenientJson(ReferenceEmpApp):
    """Reads a request with a lenient JSON parser (NaN, Infinity, lone surrogates) and writes what it got."""

    def append(self, body: Any) -> dict[str, Any]:
        if isinstance(body, (bytes, bytearray)):
            body = json.loads(body.decode("utf-8", "surrogatepass"))
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        entry = body["entry"]
        line = json.dumps(entry, ensure_ascii=True) + "\n"  # NaN and lone surrogates written as they came
        self.acquire(body["path"])
        try:
            with open(body["path"], "a", encoding="utf-8") as fh:
                fh.write(line)
        finally:
            self.release(body["path"])
        return {"ok": True, "id": entry.get("id")}


class ShortLineBuffer(ReferenceEmpApp):
    """Reads lines through a 64 KiB buffer: a longer line is cut and lost as corrupt."""

    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        if not os.path.exists(path):
            return []
        out = []
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                text = emp.decode(raw[:65536].rstrip(b"\r\n"))
                if text.strip():
                    out.append((n, text, emp.parse_line(text)))
        return out


class WritesVersion2(ReferenceEmpApp):
    """Stamps every line it writes with v "2.0"."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, v="2.0") for e in lines])


# caught only under a reading the profile pins (option -> mutant -> checks): tests/test_emp_readings.py
PINNED_KILLS: dict[str, dict[str, set[str]]] = {
    "emp.ts_tie=later-line": {"TieKeepsFirstLine": {"emp.reader_equal_ts_tie"}},
}

MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    NoLock, LockLeftBehind, StaleLockForever, RewriteDropsForeign, FileOrderWins, CorruptAborts,
    NewerMajorAccepted, ExactVersionOnly, TombstoneIgnored, FiltersIgnored, CaseSensitiveSearch, SecondsTimestamps,
    TieKeepsBoth, TombstoneByFileOrder, GluesToTornLine, BreaksLockOnTimeout, NeverCreatesLock,
    Latin1Writer, RewritesFromCache, NoValidation, LenientJson, ShortLineBuffer, WritesVersion2, UpdateAsNewId, UpdateInPlace, AppendReserialises, ReplacesBadUtf8, RewriteReencodes, MissingFileTruncates,
    CheckThenCreateLock, UpdateSkipsLock, LockLeftOnRefusal, TombstoneFinal, WholeFileDecode, QueryFiltersRawLines,
    AcceptsAnyStringId, StrictFileBeforeAppend)}

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
    "SecondsTimestamps": {"emp.writer_ts_millis"},
    "TieKeepsBoth": {"emp.reader_equal_ts_tie"},
    "TombstoneByFileOrder": {"emp.reader_deleted_stays_deleted"},
    "GluesToTornLine": {"emp.writer_after_torn_line", "emp.writer_after_killed_writer"},
    "BreaksLockOnTimeout": {"emp.writer_waits_for_lock"},
    "NeverCreatesLock": {"emp.writer_locks_around_write"},
    "Latin1Writer": {"emp.lines_utf8"},
    "RewritesFromCache": {"emp.writer_model_sequences"},
    "NoValidation": {"emp.writer_validates_before_writing"},
    "LenientJson": {"emp.hostile_json_refused"},
    "ShortLineBuffer": {"emp.reader_long_content"},
    "WritesVersion2": {"emp.writer_version_1x"},
    "UpdateAsNewId": {"emp.writer_update_same_id"},
    "UpdateInPlace": {"emp.writer_update_same_id"},
    "AppendReserialises": {"emp.writer_append_keeps_foreign"},
    "ReplacesBadUtf8": {"emp.writer_append_keeps_foreign"},
    "RewriteReencodes": {"emp.writer_delete_keeps_foreign"},
    "MissingFileTruncates": {"emp.writer_missing_file_contention"},
    "CheckThenCreateLock": {"emp.writer_concurrent_no_loss"},
    "UpdateSkipsLock": {"emp.writer_locks_around_write", "emp.writer_waits_for_lock"},
    "LockLeftOnRefusal": {"emp.writer_lock_removed"},
    "TombstoneFinal": {"emp.reader_newer_after_tombstone"},
    "WholeFileDecode": {"emp.reader_corrupt_line_isolated", "emp.writer_delete_keeps_foreign"},
    "QueryFiltersRawLines": {"emp.query_time", "emp.query_tags", "emp.query_type", "emp.query_content"},
    "AcceptsAnyStringId": {"emp.id_uuid4", "emp.writer_validates_before_writing"},
    "StrictFileBeforeAppend": {"emp.writer_after_torn_line", "emp.writer_append_keeps_foreign"},
}

# caught only when run as a command the harness can kill mid-operation (emp.writer_killed_mid_write)
COMMAND_MUTANTS: dict[str, type] = {"RewritesInPlace": RewritesInPlace}
COMMAND_KILLS: dict[str, set[str]] = {"RewritesInPlace": {"emp.writer_killed_mid_write"},  # tests/test_emp_crash.py
                                      "UpdateInPlace": {"emp.writer_killed_mid_write"}}

# the failure branch each mutant is written to reach: (check id, failure title), all of which must fire
EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "AppendReserialises": {("emp.writer_append_keeps_foreign", "an append changed or moved lines already in the file")},
    "BreaksLockOnTimeout": {("emp.writer_waits_for_lock", "the app removed or replaced memory.jsonl.lock while another app held it"),
                            ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "CaseSensitiveSearch": {("emp.query_content", "query left out a matching entry")},
    "CheckThenCreateLock": {("emp.writer_concurrent_no_loss",
                             "under contention memory.jsonl was written while no memory.jsonl.lock existed")},
    "CorruptAborts": {("emp.reader_corrupt_line_isolated", "resolve was refused on a file with torn, non-JSON and non-UTF-8 "
                                                           "lines, though it works on the same file without it")},
    "ExactVersionOnly": {("emp.reader_unknown_ignored", "an entry with unknown fields, type or newer minor was not read")},
    "FileOrderWins": {("emp.reader_newest_ts_wins", "an older line written later won over the newer ts")},
    "FiltersIgnored": {("emp.query_tags", "query returned an entry that does not match"),
                       ("emp.query_time", "query returned an entry that does not match"),
                       ("emp.query_type", "query returned an entry that does not match")},
    "GluesToTornLine": {("emp.writer_after_torn_line", "after an append to a file ending in a torn line, an entry is unreadable"),
                        ("emp.writer_after_killed_writer", "after a killed writer's stale lock and torn line, an entry is unreadable")},
    "Latin1Writer": {("emp.lines_utf8", "line is not valid UTF-8")},
    "LenientJson": set(),  # the battery's titles count inputs; its check id is enough (EXPECTED_KILLS)
    "LockLeftBehind": {("emp.writer_lock_removed", f"memory.jsonl.lock is left behind after {what}")
                       for what in ("an append", "an update", "a delete")},
    "MissingFileTruncates": {("emp.writer_missing_file_contention", "3 apps starting on a missing file lost or damaged a first entry")},
    "NeverCreatesLock": {("emp.writer_locks_around_write", "append wrote memory.jsonl while no memory.jsonl.lock existed"),
                         ("emp.writer_locks_around_write", "delete wrote memory.jsonl while no memory.jsonl.lock existed")},
    "NewerMajorAccepted": {("emp.reader_newer_major_refused", "an entry of an unknown major version was read as if it were 1.x")},
    "NoLock": {("emp.writer_concurrent_no_loss", "under contention memory.jsonl was written while no memory.jsonl.lock existed"),
               ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "NoValidation": {("emp.writer_validates_before_writing", "an entry with content a number was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with id not a UUID was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with tags in upper case was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with ts a string was written as given")},
    "ReplacesBadUtf8": {("emp.writer_append_keeps_foreign", "an append changed or moved lines already in the file")},
    "RewriteDropsForeign": {("emp.writer_delete_keeps_foreign", "a delete dropped, changed or reordered another app's line")},
    "RewriteReencodes": {("emp.writer_delete_keeps_foreign", "a delete dropped, changed or reordered another app's line")},
    "RewritesFromCache": {("emp.writer_model_sequences", "after a sequence of operations the file left the model")},
    "SecondsTimestamps": {("emp.writer_ts_millis", "an entry written now has a ts that is not now in Unix milliseconds")},
    "ShortLineBuffer": {("emp.reader_long_content", "an entry with long content was not read back whole")},
    "StaleLockForever": {("emp.writer_stale_lock", "a lock older than the stale limit blocked the write")},
    "TieKeepsBoth": {("emp.reader_equal_ts_tie", "one id with two equal-ts lines resolved to 2 entries")},
    "TombstoneByFileOrder": {("emp.reader_deleted_stays_deleted",
                              "an update older than the tombstone, written after it, brought the deleted entry back")},
    "TombstoneIgnored": {("emp.reader_tombstone_deletes", "an entry deleted by a tombstone line is still in the view")},
    "UpdateAsNewId": {("emp.writer_update_same_id", "the update was written as a new id instead of the same id")},
    "UpdateInPlace": {("emp.writer_update_same_id", "an update changed lines already in the file instead of appending"),
                      ("emp.writer_update_same_id", "the update's ts is not newer than the entry it updates")},
    "WritesVersion2": {("emp.writer_version_1x", "a 1.0 writer wrote a line of another major version")},
    "UpdateSkipsLock": {("emp.writer_locks_around_write", "update wrote memory.jsonl while no memory.jsonl.lock existed"),
                        ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "LockLeftOnRefusal": {("emp.writer_lock_removed", "memory.jsonl.lock is left behind after a refused update (an id nobody wrote)"),
                          ("emp.writer_lock_removed", "memory.jsonl.lock is left behind after a refused delete (an id nobody wrote)")},
    "TombstoneFinal": {("emp.reader_newer_after_tombstone", "a line newer than the tombstone did not take precedence: the id stays deleted")},
    "WholeFileDecode": {("emp.reader_corrupt_line_isolated", "resolve failed on a file with torn, non-JSON and non-UTF-8 lines, "
                                                             "though it works on the same file without it"),
                        ("emp.writer_delete_keeps_foreign", "delete failed on a file with a corrupt line and a line of invalid "
                                                            "UTF-8 (another app's), though it works on the same file without it")},
    "QueryFiltersRawLines": {(f"emp.query_{kind}", title) for kind in ("time", "tags", "type", "content") for title in (
        "query returned a superseded version: it filtered lines before resolving",
        "query returned a deleted entry: it filtered lines before resolving")},
    "StrictFileBeforeAppend": {
        ("emp.writer_after_torn_line", "append was refused on a file with a torn last line, though it works on the same "
                                       "file without it"),
        ("emp.writer_append_keeps_foreign", "append was refused on a file with another app's line of invalid UTF-8, "
                                            "though it works on the same file without it")},
    "AcceptsAnyStringId": {("emp.id_uuid4", "id must be a UUID"),
                           ("emp.writer_validates_before_writing", "an entry with id not a UUID was written as given")},
}


if __name__ == "__main__":  # a mutant as a command, one process per operation: python -m ... NAME OP IN OUT
    import sys

    from memconform.reference.emp import main

    sys.exit(main(sys.argv[2:], app={**MUTANTS, **COMMAND_MUTANTS}[sys.argv[1]]))


# checks killed by a test of their own (a mutant that only a real process shows), {check id: the test}
KILLED_ELSEWHERE = {"emp.writer_killed_mid_write": "tests/test_emp_crash.py (RewritesInPlace and UpdateInPlace, run as commands)"}
