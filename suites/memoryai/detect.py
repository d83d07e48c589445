"""Is this a MemoryAI bundle? Answered without loading the suite (`memconform validate` asks every suite
before it loads the one named: core/detectors.py); format/bundle.py's `detect` answers with it."""

from __future__ import annotations

from typing import Any

STREAMED = False  # the SuiteSpec has no `stream`: a file is read whole or in windows
# format/windows.py's plan reads these in windows (the bundle's record sections)
WINDOW_SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
FORMAT = "memoryai-bundle"  # format/bundle.py FORMAT (tests/test_light_detect.py holds them equal)


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT
