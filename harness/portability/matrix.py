"""The loss matrix: every directed pair of formats, what the mapping tables say is lost, and what translating
each format's sample documents (its Portable's `samples`) actually lost, per field."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonical import FIELDS
from .formats import formats, portable
from .tables import table
from .translate import load, translate


def sample_files(fmt: str) -> list[Path]:
    """The documents a format's row of the matrix is measured on: what its suite declares (its valid reference
    fixtures, or sample exports beside its translator)."""
    return portable(fmt).samples()


def predicted_lost(a: str, b: str) -> list[str]:
    """By the tables alone: fields A holds in a field of its own that B neither keeps nor carries."""
    ta, tb = table(a), table(b)
    record = [f for f in FIELDS if ta.into(f) == "kept" and tb.into(f) == "lost"]
    document = [f for f, row in ta.document_rows.items() if row.into == "kept" and tb.document_rows[f].into == "lost"]
    return record + [f"{d} (document)" for d in document]


@dataclass
class Cell:
    source: str
    target: str
    documents: int = 0
    refused: list[str] = field(default_factory=list)
    fields: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    invented: Counter[str] = field(default_factory=Counter)

    def lost(self) -> list[str]:
        return sorted(f for f, c in self.fields.items() if c["lost"])

    def carried(self) -> list[str]:
        return sorted(f for f, c in self.fields.items() if c["carried"])


def measure(a: str, b: str, files: list[Path] | None = None) -> Cell:
    cell = Cell(a, b)
    for path in files if files is not None else sample_files(a):
        fmt, doc = load(path, a)
        tr = translate(doc, fmt, b)
        cell.documents += 1
        if tr.refused:
            cell.refused.append(f"{path.name}: {tr.refused}")
            continue
        for name, counts in tr.ledger.counts().items():
            cell.fields[name].update(counts)
        for (name, status), n in tr.ledger.document.items():
            cell.fields[f"{name} (document)"][status] += n
        for (native, _), n in tr.ledger.invented.items():
            cell.invented[native] += n
    return cell


def matrix() -> dict[tuple[str, str], Cell]:
    return {(a, b): measure(a, b) for a in formats() for b in formats() if a != b}


def as_json(cells: dict[tuple[str, str], Cell]) -> dict[str, Any]:
    return {f"{a}->{b}": {"documents": c.documents, "refused": c.refused, "lost": c.lost(), "carried": c.carried(),
                          "predicted_lost": predicted_lost(a, b), "invented": dict(sorted(c.invented.items())),
                          "fields": {k: dict(v) for k, v in sorted(c.fields.items())}}
            for (a, b), c in cells.items()}
