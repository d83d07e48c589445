"""Renderings of a report read back from report.jsonl: HTML, JUnit XML, Markdown, SVG badges.

Every renderer takes a `Report` (core/report.py), never runner state, so `memconform report` can
render any of them afterwards from the file alone. Target text is hostile: each renderer escapes
for its own format and drops what the format cannot carry (XML-invalid characters, lone surrogates).
"""

from __future__ import annotations

from pathlib import Path

from ..core.report import Report
from .common import clean, outcome_label, spec_versions

__all__ = ["clean", "outcome_label", "spec_versions", "write_rendered"]


def write_rendered(report_dir: Path, report: Report) -> None:
    """junit.xml, summary.md, report.html and the badges beside report.jsonl."""
    from .badge import write_badges
    from .html import render_html
    from .junit import render_junit
    from .markdown import render_markdown

    (report_dir / "junit.xml").write_text(render_junit(report), encoding="utf-8")
    (report_dir / "summary.md").write_text(render_markdown(report), encoding="utf-8")
    (report_dir / "report.html").write_text(render_html(report), encoding="utf-8")
    write_badges(report_dir / "badges", report)
