"""The per-pair part of harness/portability/errata.md, generated from the tables and the fixture translations:
for every directed pair, what is unavoidably lost and what must be invented, each with its sentences.
`memconform portability --errata FILE` writes it; a test keeps the committed file equal to it."""

from __future__ import annotations

from .formats import formats
from .matrix import Cell, matrix
from .tables import table

BEGIN = "<!-- generated: memconform portability --errata (do not edit below) -->"


def _quote(sentences: tuple[str, ...] | list[str], spec: str) -> str:
    return " ".join(f"“{s}” ({spec})" for s in sentences)


def pair_section(a: str, b: str, cell: Cell) -> list[str]:
    ta, tb = table(a), table(b)
    out = [f"### {a} → {b}", ""]
    lost = [f for f in cell.lost()]
    if not lost:
        out.append("- Lost: nothing, on the reference fixtures.")
    for name in lost:
        field = name.replace(" (document)", "")
        row = tb.document_rows.get(field) if name.endswith("(document)") else tb.rows.get(field)
        src = ta.document_rows.get(field) if name.endswith("(document)") else ta.rows.get(field)
        why = f" — {row.note}" if row is not None and row.note else ""
        quotes = []
        if src is not None:
            quotes.append(_quote(src.sentences[:1], ta.raw["spec_file"]))
        if row is not None:
            quotes.append(_quote(row.sentences[:1], tb.raw["spec_file"]))
        out.append(f"- Lost: `{name}` ({cell.fields[name]['lost']} on the fixtures){why}. " + " against ".join(quotes))
    for name in sorted(n for n, c in cell.fields.items() if c["invented"]):
        row = tb.rows.get(name)
        out.append(f"- Invented: `{name}` ×{cell.fields[name]['invented']}: a value the source never stated "
                   f"(the target's own rules derive it from another field, or the time of the translation)"
                   + (". " + _quote(row.sentences[:1], tb.raw["spec_file"]) if row is not None else "."))
    for native in sorted(cell.invented):
        rows = [r for r in tb.raw["invented"] if r["native"] == native]
        if rows:
            out.append(f"- Invented: `{native}` ×{cell.invented[native]}: {rows[0]['rule']}. "
                       + _quote(rows[0]["sentences"][:1], tb.raw["spec_file"]))
    out.append("")
    return out


def generated() -> str:
    cells = matrix()
    lines = [BEGIN, "", "## Every directed pair", "",
             "Measured on the sample documents of the source format (the document source its suite declares: its valid "
             "reference fixtures, or sample exports beside its translator in `suites/<spec>/portability/`). Kept and "
             "carried fields are left out; the ledger of each translation lists them.", ""]
    for a in formats():
        for b in formats():
            if a != b:
                lines += pair_section(a, b, cells[(a, b)])
    return "\n".join(lines)
