"""Renderings of a report read back from report.jsonl: HTML, JUnit XML, Markdown, SVG badges.

Every renderer takes a `Report` (core/report.py), never runner state, so `memconform report` can
render any of them afterwards from the file alone. Target text is hostile: each renderer escapes
for its own format and drops what the format cannot carry (XML-invalid characters, lone surrogates).
"""

from __future__ import annotations

from .common import clean, outcome_label, spec_versions

__all__ = ["clean", "outcome_label", "spec_versions"]
