"""Text limits counted the strict way: a limit in "chars" holds under both readings (code points and
UTF-16 code units, errata O-char_unit), so a translation never depends on which one a reader uses."""

from __future__ import annotations


def units(text: str) -> int:
    """UTF-16 code units: never fewer than code points, so within it is within both readings."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # counted in C: an astral character is 4 bytes


def fits(text: str, limit: int) -> bool:
    return units(text) <= limit


def cut(text: str, limit: int) -> str:
    """The longest prefix within the limit (never half a surrogate pair)."""
    if units(text) <= limit:  # the common case, without a walk over every character
        return text
    out, used = [], 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > limit:
            break
        out.append(ch)
        used += size
    return "".join(out)


def pieces(text: str, limit: int) -> list[str]:
    """The text in consecutive pieces, each within the limit; joined they are the text."""
    out = []
    while text:
        head = cut(text, limit)
        out.append(head)
        text = text[len(head):]
    return out or [""]
