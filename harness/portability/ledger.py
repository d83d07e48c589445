"""The loss ledger of one translation: per canonical field, how many records kept it, carried it in the
target's escape hatch, lost it, or had a value invented for them; the id map; what was refused."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .canonical import HATCH_KEY

# worst last: a field noted twice for one record keeps the worse status. `respelled`: the same value in
# the target's own field, spelled by a rule the detail names (a date-time in UTC, a vendor prefix, an id
# with its store)
STATUSES = ("kept", "respelled", "carried", "lost", "invented")
LEDGER_VERSION = 1


@dataclass
class Ledger:
    source: str
    target: str
    records_in: int = 0
    per_record: dict[str, Mapping[str, str]] = field(default_factory=lambda: defaultdict(dict))
    details: dict[tuple[str, str], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    invented: Counter[tuple[str, str]] = field(default_factory=Counter)
    document: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    document_details: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    restored: dict[str, list[str]] = field(default_factory=dict)  # record -> fields the source's hatch block restored
    id_map: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    declared_in_target: list[str] = field(default_factory=list)
    refused: str | None = None
    warnings: list[str] = field(default_factory=list)  # SHOULD-level findings on the output, and notes
    # per field and status, how many records: kept as notes are made (counts() is asked per translation)
    tally: Counter[tuple[str, str]] = field(default_factory=Counter)
    # the distinct per-record lines, each held once: 100k records written alike share one read-only mapping
    patterns: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = field(default_factory=dict)

    def note(self, rid: str, name: str, status: str, detail: str = "") -> None:
        """Field `name` of record `rid` was kept/carried/lost; the worst status of a field wins for a record."""
        fields = self._own(rid)
        previous = fields.get(name)
        if previous is None or STATUSES.index(status) > STATUSES.index(previous):
            fields[name] = status
            if not name.startswith("+"):
                self.tally[(name, status)] += 1
                if previous is not None:
                    self.tally[(name, previous)] -= 1
        if detail:
            self.details[(name, status)][detail] += 1

    def invent(self, rid: str, native: str, rule: str) -> None:
        self.invented[(native, rule)] += 1
        self._own(rid).setdefault(f"+{native}", "invented")

    def _own(self, rid: str) -> dict[str, str]:
        """The record's lines, writable: a shared pattern is copied back out before it changes."""
        fields = self.per_record[rid]
        if type(fields) is not dict:
            fields = self.per_record[rid] = dict(fields)
        return fields

    def share(self, rid: str) -> None:
        """The record is placed: its lines are held as the one shared copy of that pattern (a note made later
        copies it back out), so a ledger of 100k records costs its distinct patterns, not 100k dicts."""
        fields = self.per_record.get(rid)
        if type(fields) is dict:
            key = tuple(fields.items())
            self.per_record[rid] = self.patterns.setdefault(key, MappingProxyType(dict(fields)))

    def note_document(self, name: str, status: str, count: int, detail: str = "") -> None:
        if count:
            self.document[(name, status)] += count
            if detail and detail not in self.document_details[(name, status)]:
                self.document_details[(name, status)].append(detail)

    def map_id(self, source_id: str, target_id: str) -> None:
        self.id_map[source_id].append(target_id)

    def status(self, rid: str, name: str) -> str | None:
        return self.per_record.get(rid, {}).get(name)

    def counts(self) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for (name, status), n in self.tally.items():
            if n:
                out[name][status] += n
        return out

    def records_out(self) -> int:
        return len({t for ts in self.id_map.values() for t in ts})

    def lost_fields(self) -> list[str]:
        names = {n for n, c in self.counts().items() if c["lost"]}
        names |= {n for (n, s) in self.document if s == "lost"}
        return sorted(names)

    def to_json(self) -> dict[str, Any]:
        head = self.head()
        return {
            "ledger_version": LEDGER_VERSION, "from": self.source, "to": self.target,
            **{k: head[k] for k in ("refused", "records", "fields", "invented", "document")},
            "restored": {k: sorted(v) for k, v in sorted(self.restored.items())},
            "id_map": {k: list(v) for k, v in sorted(self.id_map.items())},
            "per_record": {k: dict(sorted(v.items())) for k, v in sorted(self.per_record.items())},
            "declared_in_target": list(self.declared_in_target),
            "warnings": list(self.warnings),
        }

    def head(self) -> dict[str, Any]:
        """to_json without the per-record parts (id_map, per_record): what summary() reads, cheap at 100k."""
        counts = self.counts()
        return {
            "refused": self.refused,
            "records": {"in": self.records_in, "out": self.records_out()},
            "fields": [
                {"field": name, "status": status, "count": n,
                 "details": dict(sorted(self.details.get((name, status), Counter()).items()))}
                for name in sorted(counts) for status in STATUSES if (n := counts[name][status])
            ],
            "invented": [{"native": native, "rule": rule, "count": n} for (native, rule), n in sorted(self.invented.items())],
            "document": [{"field": name, "status": status, "count": n,
                          "details": list(self.document_details.get((name, status), []))}
                         for (name, status), n in sorted(self.document.items())],
            "restored": self.restored,
            "declared_in_target": self.declared_in_target,
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        """The ledger for a reader: one line per field and status, then inventions and document losses."""
        doc = self.head()
        if doc["refused"]:
            return f"{self.source} -> {self.target}: refused: {doc['refused']}"
        lines = [f"{self.source} -> {self.target}: {doc['records']['in']} records in, {doc['records']['out']} out"]
        for row in doc["fields"]:
            more = "; ".join(f"{d} ({n})" for d, n in row["details"].items())
            lines.append(f"  {row['status']:<9} {row['field']:<16} {row['count']:>5}" + (f"   {more}" if more else ""))
        for row in doc["invented"]:
            lines.append(f"  invented {row['native']:<16} {row['count']:>5}   {row['rule']}")
        for row in doc["document"]:
            more = "; ".join(row["details"])
            lines.append(f"  {row['status']:<9} {row['field']:<16} {row['count']:>5}   (document-level)" + (f" {more}" if more else ""))
        restored = sorted({name for names in doc["restored"].values() for name in names})
        if restored:
            lines.append(f"  restored from the source's {HATCH_KEY} block: {', '.join(restored)} "
                         f"({len(doc['restored'])} {'record' if len(doc['restored']) == 1 else 'records'})")
        for line in doc["warnings"]:
            lines.append(f"  warning: {line}")
        if doc["declared_in_target"]:
            lines.append(f"  declared in the output: {', '.join(doc['declared_in_target'])}")
        return "\n".join(lines)
