"""The renderings of a run written beside its report.jsonl (junit.xml, summary.md, report.html, badges/), each
recorded in the run's ledger as written and never written through a symlink planted in the folder."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.report import Report
from .folder_ledger import Ledger


def write_rendered(report_dir: Path, report: Report, ledger: Ledger | None = None) -> None:
    """junit.xml, summary.md, report.html and badges/ (memconform.render), each recorded as written."""
    from ..render.badge import badges
    from ..render.html import render_html
    from ..render.junit import render_junit
    from ..render.markdown import render_markdown

    def write(path: Path, text: str) -> None:
        """Never through a symlink someone put in the folder (the folder check then names it)."""
        data = text.replace("\n", os.linesep).encode("utf-8")  # what write_text would write, as bytes
        if ledger is not None:
            ledger.record(path, data)
        if path.parent.is_symlink():
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError:
            if ledger is None or not path.is_symlink():
                raise
            return
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

    write(report_dir / "junit.xml", render_junit(report))
    write(report_dir / "summary.md", render_markdown(report))
    write(report_dir / "report.html", render_html(report))
    (report_dir / "badges").mkdir(parents=True, exist_ok=True)
    for name, svg in badges(report).items():
        write(report_dir / "badges" / name, svg)


def render_all(report_dir: Path) -> None:
    """junit.xml and summary.md from report.jsonl on disk (possibly truncated)."""
    write_rendered(report_dir, Report.from_path(report_dir / "report.jsonl", allow_truncated=True, allow_empty=True))
