"""Is this an OMP export (a GET /v1/export body, checks/export_document.py)? Answered without loading the
suite (`memconform validate` asks every suite before it loads the one named: core/detectors.py);
the SuiteSpec's `detect` is this function."""

from __future__ import annotations

from typing import Any

STREAMED = False  # the SuiteSpec has no `stream`
WINDOW_SECTIONS = ("memories",)  # windows.py's plan reads these in windows


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and "omp_version" in doc and isinstance(doc.get("memories"), list)
