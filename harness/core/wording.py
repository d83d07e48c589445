"""Words every rendering shares: counted ("1 check", "2 checks", never "1 checks"), made visible, and a
value shown as itself."""

from __future__ import annotations

from typing import Any


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


# What a terminal or a rendering would act on rather than show: C0 controls (but line feed and tab),
# DEL, C1 controls (U+0080-U+009F, of which U+009B is CSI and U+009D is OSC on many terminals) and the
# bidirectional overrides and isolates that reorder what a reader sees (CVE-2021-42574).
_UNSEEN = "".join(chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0),
                                   *range(0x202A, 0x202F), *range(0x2066, 0x206A)))
# written as JSON writes them (`\\u001b`), so a JSON text stays one after visible()
_SHOWN = {ord(ch): f"\\u{ord(ch):04x}" for ch in _UNSEEN}


def visible(text: str) -> str:
    """`text` with every control character a terminal would act on written out as JSON would (ESC as `\\u001b`): what a
    target or a handed file says is shown, never obeyed. Line feeds and tabs are kept."""
    return text.translate(_SHOWN)


def shown_value(value: Any, limit: int | None = None) -> str:
    """A received or expected value for a reader: a string as itself (never a JSON string of JSON), anything
    else as compact JSON; cut at `limit` characters. (Here, not in render/: `validate` prints it without
    loading the renderers.)"""
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f" … ({len(text) - limit} more characters)"
    return text
