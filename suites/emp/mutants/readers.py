"""Known-broken EMP readers, one rule each: which line of an id wins (ts, ties, tombstones), corrupt and
long lines, the versions read, and the query filters. MUTANTS and the expected kills are in table.py.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from memconform.suites.emp import format as emp
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected


class FileOrderWins(ReferenceEmpApp):
    """The last line for an id wins, whatever its ts."""

    def view(self, path: str) -> list[dict[str, Any]]:
        last: dict[str, dict[str, Any]] = {}
        for _, _, e in self.lines(path):
            if emp.readable(e):
                last[e["id"]] = e
        return [e for e in last.values() if not emp.is_tombstone(e)]


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


class TombstoneIgnored(ReferenceEmpApp):
    """Treats tombstones as ordinary entries."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return emp.resolve(self.lines(path), keep_tombstones=True)


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


class CorruptAborts(ReferenceEmpApp):
    """One bad line refuses the whole read."""

    def resolve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        lines = self.lines(body["path"])
        if any(isinstance(e, emp.LineError) for _, _, e in lines):
            raise Rejected({"error": "corrupt file"}, "corrupt file")
        return emp.resolve(lines)


class BrokenOnlyWhenReading(ReferenceEmpApp):
    """A mutant whose reader is broken and whose writes are the reference's: an append, update or delete finds
    the entry it changes through the reference's reader (`read_lines` and `read_view` are what is broken).
    A write through the broken reader misses a line, and its update stamps that line's ts again when both
    fall in one millisecond (max(now, ts + 1) of the entry before it): emp.writer_updates_every_class failed
    or passed as the machine's speed decided (tests/test_emp_writer_clock.py)."""

    def __init__(self) -> None:
        super().__init__()
        self._writing = threading.local()

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._as_reference(super().append, body)

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._as_reference(super().update, body)

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._as_reference(super().delete, body)

    def _as_reference(self, write: Callable[[dict[str, Any]], dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
        self._writing.on = True
        try:
            return write(body)
        finally:
            self._writing.on = False

    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        return super().lines(path) if getattr(self._writing, "on", False) else self.read_lines(path)

    def view(self, path: str) -> list[dict[str, Any]]:
        return super().view(path) if getattr(self._writing, "on", False) else self.read_view(path)

    def read_lines(self, path: str) -> list[tuple[int, str, Any]]:
        return super().lines(path)

    def read_view(self, path: str) -> list[dict[str, Any]]:
        return super().view(path)


class ShortLineBuffer(BrokenOnlyWhenReading):
    """Reads lines through a 64 KiB buffer: a longer line is cut and lost as corrupt."""

    def read_lines(self, path: str) -> list[tuple[int, str, Any]]:
        if not os.path.exists(path):
            return []
        out = []
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                text = emp.decode(raw[:65536].rstrip(b"\r\n"))
                if text.strip():
                    out.append((n, text, emp.parse_line(text)))
        return out


class NewerMajorAccepted(ReferenceEmpApp):
    """Reads entries of any major version as if they were 1.x."""

    def view(self, path: str) -> list[dict[str, Any]]:
        lines = [(n, r, dict(e, v="1.0") if isinstance(e, dict) else e) for n, r, e in self.lines(path)]
        return emp.resolve(lines)


class ExactVersionOnly(BrokenOnlyWhenReading):
    """Drops every line whose v is not exactly "1.0" (newer minors are lost)."""

    def read_view(self, path: str) -> list[dict[str, Any]]:
        return emp.resolve([(n, r, e) for n, r, e in self.lines(path) if isinstance(e, dict) and e.get("v") == "1.0"])


class FiltersIgnored(ReferenceEmpApp):
    """query returns everything, ignoring time, tag and type filters."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return super().query({"path": body["path"], "text": body.get("text")})


class CaseSensitiveSearch(ReferenceEmpApp):
    """Content search compares case-sensitively."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        rest = {k: v for k, v in body.items() if k != "text"}
        return [e for e in super().query(rest) if body.get("text") is None or body["text"] in e["content"]]


class SplitsOnUnicodeLineBreaks(ReferenceEmpApp):
    """Splits the file with str.splitlines(): a raw U+2028, U+0085 or form feed inside a JSON string ends
    the line there, and both halves are dropped as corrupt."""

    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        return [(n, raw, emp.parse_line(raw)) for n, raw in enumerate(text.splitlines(), 1) if raw.strip()]


class QueryFirstFilterOnly(ReferenceEmpApp):
    """query applies only the first filter it is given (an if/elif chain: time, else tags, else type,
    else text): each filter alone works, a query of two returns what only one keeps."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        for names in (("start", "end"), ("tags",), ("type",), ("text",), ("near",)):
            if any(body.get(n) is not None for n in names):
                return super().query({"path": body["path"], **{n: body.get(n) for n in names}})
        return super().query({"path": body["path"]})
