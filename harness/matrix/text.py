"""Text from reports, shard records and implementations, made safe where the matrix shows it: the
terminal (no control character), Markdown (no HTML, no Markdown syntax). Everything such text holds
came from a target or a handed file."""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# every character that starts Markdown syntax (CommonMark's escapable ASCII punctuation that matters in a
# cell, a list or a paragraph), and the HTML metacharacters, which are replaced by entities instead
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def visible(text: Any) -> str:
    """One line for a terminal: C0, C1, DEL, ESC and line separators shown as \\xNN (\\uNNNN), never sent."""
    def shown(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(shown, _SURROGATE.sub("\ufffd", str(text)))


def md(text: Any) -> str:
    """Plain text inside Markdown (a table cell, a list item, a heading): one line, every Markdown
    metacharacter backslash-escaped, HTML metacharacters as entities, so nothing in it is markup."""
    one_line = visible(text)
    escaped = _MARKDOWN.sub(r"\\\1", one_line)
    return "".join(_HTML.get(ch, ch) for ch in escaped)


def md_href(href: str) -> str:
    """A link target the matrix made itself (a relative path and an anchor): spaces and brackets encoded."""
    from urllib.parse import quote

    return quote(visible(href), safe="/#._-~")
