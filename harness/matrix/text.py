"""Text from reports, shard records and implementations, made safe where the matrix shows it: the
terminal (no control character), Markdown (no HTML, no Markdown syntax). Everything such text holds
came from a target or a handed file."""

from __future__ import annotations

import re
from typing import Any

from ..core.wording import visible as core_visible

_SURROGATE = re.compile("[\ud800-\udfff]")
# the characters that make Markdown syntax anywhere in a line (emphasis, code, links and images: "](" needs
# a "]", table cells, strikethrough); those that do only at a line's start (a heading, a list item, an
# ordered list's "1." or "1)") are escaped there; the HTML metacharacters become entities (so a ">" that
# would open a quote is one too)
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
_LINE_START = re.compile(r"^(?:[#+\-=]|[0-9]+[.)])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def visible(text: Any) -> str:
    """One line for a terminal: core.wording.visible (nothing a terminal acts on is sent), with line breaks
    and tabs shown too and lone surrogates replaced (a UTF-8 terminal cannot take them)."""
    shown = core_visible(_SURROGATE.sub("\ufffd", str(text)))
    for ch, written in (("\n", "\\n"), ("\t", "\\t"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        shown = shown.replace(ch, written)
    return shown


def md(text: Any) -> str:
    """Plain text inside Markdown (a table cell, a list item, a heading): one line, every Markdown
    metacharacter backslash-escaped, HTML metacharacters as entities, so nothing in it is markup."""
    one_line = visible(text)
    # the escape goes before the marker's punctuation: "\\-", "1\\."
    escaped = _LINE_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], _MARKDOWN.sub(r"\\\1", one_line))
    return "".join(_HTML.get(ch, ch) for ch in escaped)


def md_href(href: str) -> str:
    """A link target the matrix made itself (a relative path and an anchor): spaces and brackets encoded."""
    from urllib.parse import quote

    return quote(visible(href), safe="/#._-~")
