"""Is this an AMPS export? Answered without loading the suite (`memconform validate` asks every suite
before it loads the one named: core/detectors.py); format/schema.py's `detect` answers with it."""

from __future__ import annotations

from typing import Any

STREAMED = False  # the SuiteSpec has no `stream`: a file is read whole or in windows
WINDOW_SECTIONS = ("atoms", "artifacts")  # format/windows.py's plan reads these in windows


def detect(doc: Any) -> bool:
    """An AMPS export by its top-level shape: export_version plus subject/atoms/artifacts."""
    return (isinstance(doc, dict) and "export_version" in doc
            and isinstance(doc.get("subject"), dict) and isinstance(doc.get("atoms"), list)
            and isinstance(doc.get("artifacts"), list))
