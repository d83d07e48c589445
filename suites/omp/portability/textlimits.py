"""Text limits counted the strict way: a limit in "chars" holds under both readings (code points and
UTF-16 code units, errata O-char_unit), so a translation never depends on which one a reader uses."""

from __future__ import annotations

import unicodedata

ZWJ = "\u200d"


def units(text: str) -> int:
    """UTF-16 code units: never fewer than code points, so within it is within both readings."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # counted in C: an astral character is 4 bytes


def fits(text: str, limit: int) -> bool:
    return units(text) <= limit


def _splits_pair(text: str, at: int) -> bool:
    """A cut at `at` would part a surrogate pair held as two code points (a reader joins them into one character)."""
    return 0 < at < len(text) and "\ud800" <= text[at - 1] <= "\udbff" and "\udc00" <= text[at] <= "\udfff"


def _continues(text: str, at: int) -> bool:
    """The character at `at` belongs to the one before it (a combining mark, a joiner or what a joiner joins,
    an emoji skin tone): a piece cut there would show a mark on nothing."""
    ch = text[at]
    return (unicodedata.category(ch).startswith("M") or ch == ZWJ or text[at - 1] == ZWJ
            or "\U0001f3fb" <= ch <= "\U0001f3ff")


def _hard_end(text: str, start: int, limit: int) -> int:
    """The end of the longest run from `start` within `limit` units, never inside a surrogate pair."""
    window = text[start:start + limit]
    if units(window) <= limit:  # the common case: `limit` code points, each one unit
        end = start + len(window)
    else:
        end, used = start, 0
        for ch in window:
            used += 2 if ord(ch) > 0xFFFF else 1
            if used > limit:
                break
            end += 1
    return end - 1 if _splits_pair(text, end) else end


def cut(text: str, limit: int) -> str:
    """The longest prefix within the limit (never half a surrogate pair)."""
    if units(text) <= limit:  # the common case, without a walk over every character
        return text
    return text[:_hard_end(text, 0, max(0, limit))]


def pieces(text: str, limit: int) -> list[str]:
    """The text in consecutive pieces, each within the limit and as long as it can be; joined they are the text.

    A piece ends where a character begins (never inside a surrogate pair), and before a combining mark or a
    joined character only when one such cluster is longer than the limit by itself. A limit below 1 (but for
    the empty text), or an astral character with a limit of 1, cannot be met: ValueError, naming where."""
    if limit < 0 or (limit == 0 and text):
        raise ValueError(f"a text limit must be at least 1 unit, not {limit}")
    out: list[str] = []
    start = 0
    while start < len(text):
        end = _hard_end(text, start, limit)
        if end == start:
            raise ValueError(f"the character U+{ord(text[start]):04X} at index {start} takes 2 UTF-16 units, "
                             f"more than the limit of {limit}")
        if end < len(text):
            soft = end
            while soft > start and (_continues(text, soft) or _splits_pair(text, soft)):
                soft -= 1
            if soft > start:
                end = soft  # else one cluster is longer than the limit: cut it where a character begins
        out.append(text[start:end])
        start = end
    return out or [""]
