"""Is this a MemoRizz archive? Answered without loading the suite (`memconform validate` asks every suite
before it loads the one named: core/detectors.py), for a file's head or a parsed document; the
format's `detect` (format/reader.py) answers an Archive its reader made itself, and everything else with this."""

from __future__ import annotations

import re
from typing import Any

STREAMED = True  # the SuiteSpec's `stream` reads the file itself (format/reader.py open_file)
FORMAT = "memorizz.memory"  # format/constants.py FORMAT (tests/test_light_detect.py holds them equal)
_FORMAT_MEMBER = re.compile(rb'"format"\s*:\s*"memorizz\.memory"')


def sniff(head: bytes) -> bool:
    """Does the start of a file name this format? (memorizz and canonical writers put format first)"""
    return _FORMAT_MEMBER.search(head) is not None


def detect(doc: Any) -> bool:
    if isinstance(doc, bytes):
        return sniff(doc)  # the head of a file
    return isinstance(doc, dict) and doc.get("format") == FORMAT
