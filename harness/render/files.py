"""The report folder's renderings written beside report.jsonl, each from the Report read back."""

from __future__ import annotations

from pathlib import Path

from ..core.report import Report


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
