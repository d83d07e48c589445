"""SVG badges, one per spec and level: conformant, not conformant, not assessed (or not applicable).

A level with no verdict (a truncated run, a level the run did not reach) is "not assessed": a badge
never says more than the footer does.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

from ..core.report import Report
from ..core.wording import visible
from .common import clean

COLORS = {"conformant": "#1a7f37", "not conformant": "#cf222e", "not assessed": "#9a6700", "not applicable": "#6e7781", "not claimed": "#6e7781"}
_QUOTES = {'"': "&quot;", "'": "&#39;"}
_CHAR_W = 6.6  # Verdana 11px, roughly: badges need no font metrics to be readable


def _width(text: str) -> int:
    return int(len(text) * _CHAR_W) + 12


def badge_svg(label: str, status: str) -> str:
    label, status = visible(clean(label)), visible(clean(status))
    lw, rw = _width(label), _width(status)
    color = COLORS.get(status, COLORS["not assessed"])
    # escaped for an attribute value as for text: a quote cannot end aria-label, no "<" opens an element
    el, es = escape(label, _QUOTES), escape(status, _QUOTES)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + rw}" height="20" role="img" aria-label="{el}: {es}">'
            f"<title>{el}: {es}</title>"
            f'<rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{rw}" height="20" fill="{color}"/>'
            '<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
            f'<text x="{lw / 2:.1f}" y="14">{el}</text><text x="{lw + rw / 2:.1f}" y="14">{es}</text></g></svg>\n')


def badge_name(suite: str, level: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{suite}-{level}").strip("-") + ".svg"


def badges(report: Report) -> dict[str, str]:
    """file name -> SVG, for every level of every suite the report knows (verdict or not)."""
    out: dict[str, str] = {}
    if report.footer is not None:
        for lv in report.footer["levels"]:
            out[badge_name(lv["suite"], lv["level"])] = badge_svg(f"{lv['suite']} {lv['title']}", lv["status"])
    known = {lv["suite"] for lv in (report.footer or {}).get("levels", [])}
    for suite in report.header.get("suites", []):
        if suite in known:
            continue
        levels = _suite_levels(suite) or sorted({r["level"] for r in report.results if r["suite"] == suite})
        for key, title in ((lv, lv) if isinstance(lv, str) else lv for lv in levels):
            out[badge_name(suite, key)] = badge_svg(f"{suite} {title}", "not assessed")
    return out


def _suite_levels(suite: str) -> list[tuple[str, str]]:
    try:
        from ..core.suite import get_suite

        return [(lv.key, lv.title) for lv in get_suite(suite).levels]
    except Exception:  # noqa: BLE001 - a report from another installation: the levels its results name
        return []


def write_badges(folder: Path, report: Report) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, svg in badges(report).items():
        path = folder / name
        path.write_text(svg, encoding="utf-8")
        written.append(path)
    return written
