"""The portability report in Markdown and HTML: the matrix of lost fields between every pair of formats, then each pair's fields."""

from __future__ import annotations

import html
from typing import Any

from .formats import formats
from .ledger import STATUSES
from .matrix import Cell, predicted_lost

LEGEND = ("Rows are the source format, columns the target. A cell lists the fields at least one record lost "
          "translating the row's sample documents (each format's document source), then how many native values "
          "were invented. Kept and carried fields are not listed; see each pair below.")


def _cell_text(c: Cell) -> str:
    lost = ", ".join(c.lost()) or "nothing"
    refused = f"; {len(c.refused)} refused" if c.refused else ""
    return f"lost: {lost}; invented: {sum(c.invented.values())}{refused}"


def markdown(cells: dict[tuple[str, str], Cell]) -> str:
    names = formats()
    out = ["# Portability between the formats", "", LEGEND, "",
           "| from \\ to | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for a in names:
        row = [("—" if a == b else _cell_text(cells[(a, b)])) for b in names]
        out.append(f"| **{a}** | " + " | ".join(row) + " |")
    out += ["", "## Each pair, field by field", ""]
    for (a, b), c in cells.items():
        out += [f"### {a} → {b} ({c.documents} documents)", "",
                f"By the tables: {', '.join(predicted_lost(a, b)) or 'nothing lost'}.", "",
                "| field | kept | carried | lost | invented |", "|---|---|---|---|---|"]
        for name, counts in sorted(c.fields.items()):
            out.append(f"| {name} | {counts['kept']} | {counts['carried']} | {counts['lost']} | {counts['invented']} |")
        if c.invented:
            out += ["", "Invented: " + "; ".join(f"`{k}` ×{n}" for k, n in sorted(c.invented.items()))]
        for line in c.refused:
            out.append(f"- refused: {line}")
        out.append("")
    return "\n".join(out)


def html_page(cells: dict[tuple[str, str], Cell]) -> str:
    esc = html.escape
    names = formats()
    head = "".join(f"<th>{esc(b)}</th>" for b in names)
    rows = []
    for a in names:
        tds = "".join("<td>—</td>" if a == b else
                      f"<td class='{'loss' if cells[(a, b)].lost() else 'ok'}'>{esc(_cell_text(cells[(a, b)]))}</td>"
                      for b in names)
        rows.append(f"<tr><th>{esc(a)}</th>{tds}</tr>")
    pairs = []
    for (a, b), c in cells.items():
        body = "".join(f"<tr><td>{esc(n)}</td>" + "".join(f"<td>{v[s]}</td>" for s in STATUSES)
                       + "</tr>" for n, v in sorted(c.fields.items()))
        pairs.append(f"<h3>{esc(a)} → {esc(b)} ({c.documents} documents)</h3>"
                     f"<p>By the tables: {esc(', '.join(predicted_lost(a, b)) or 'nothing lost')}.</p>"
                     "<div class='scroll'><table><tr><th>field</th>" + "".join(f"<th>{s}</th>" for s in STATUSES)
                     + f"</tr>{body}</table></div>")
    style = ("body{font-family:sans-serif;margin:2em}@media (max-width:600px){body{margin:.5em}}"
             ".scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}.loss{background:#fde8e8}.ok{background:#e8f8e8}")
    return ("<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'><title>memconform portability</title>"
            f"<style>{style}</style></head><body><h1>Portability between the formats</h1><p>{esc(LEGEND)}</p>"
            f"<div class='scroll'><table><tr><th>from \\ to</th>{head}</tr>{''.join(rows)}</table></div>"
            "<h2>Each pair, field by field</h2>"
            f"{''.join(pairs)}</body></html>\n")


def live_markdown(results: dict[tuple[str, str], Any]) -> str:
    """`portability --live`: each directed port between the embedded references, predicted or not."""
    out = ["## Live ports between the embedded references", "",
           "Each cell: `memconform port --from reference:ROW --to reference:COLUMN` (A -> B -> A).", "",
           "| from \\ to | " + " | ".join(formats()) + " |", "|---|" + "---|" * len(formats())]
    for a in formats():
        cells = []
        for b in formats():
            r = results.get((a, b))
            if r is None:
                cells.append("—")
                continue
            findings, notes = r.findings, r.notes
            text = "every loss predicted" if not findings else f"{len(findings)} unpredicted: " + ", ".join(
                sorted({f"{f.where}:{f.field}" for f in findings}))
            cells.append(text + (f" ({len(notes)} allowed by the consumer's spec)" if notes else ""))
        out.append(f"| **{a}** | " + " | ".join(cells) + " |")
    return "\n".join(out)
