"""orjson's output where it is the spec's canonical form, found out without walking the archive.

orjson sorts keys by code point (as the spec's codepoint order does), writes non-ASCII as UTF-8 and
escapes as json.dumps does. Its floats match the spec's numbers (ECMAScript Number.prototype.toString,
as in RFC 8785) except where it writes "<digits>.0" (an integral float, spec: no fraction) or an
exponent (spec: decimal from 1e-6 to below 1e21); it never writes a trailing zero otherwise, and always
signs an exponent. So when no number token of either shape is in its text, the text is canonical. The
search is at memory speed (substring searches on the text and on a translated copy); each hit is
confirmed as a number token in a small window, and a hit inside a string (`"v2.0, ok"`) only sends the
archive to the exact writers. orjson cannot write NaN or infinity (it would write null): only a value
known to hold none (read by orjson, or `exact` False) is given to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

# digits -> "0", e -> "e", signs -> "-", the bytes that end a number token -> ",", UTF-8 lead bytes of
# U+E000 and above -> "!", anything else -> " ": an exponent token reads "0e-0," (or "0e-00,", "0e-000,")
_SHAPE = bytes(0x30 if 0x30 <= b <= 0x39 else 0x65 if b == 0x65 else 0x2D if b in (0x2B, 0x2D) else
               0x2C if b in (0x2C, 0x5D, 0x7D) else 0x21 if 0xEE <= b <= 0xF4 else 0x20 for b in range(256))
# a double's exponent has one to three digits; one search (a substring search per length costs three)
_EXPONENT_END = re.compile(rb"0e-0{1,3},")
_INTEGRAL_END = re.compile(rb"\.0[,\]}]")
_TOKEN = re.compile(rb"[:,\[]-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+|(?<=\.0))(?=[,\]}])")
_BYTES_PER_HIT = 64  # past one unconfirmed hit per this many bytes, the exact writers are cheaper
_WINDOW = 40  # a number token orjson writes is at most ~25 bytes
LONG_DIGITS = 16  # an integer beyond 2**53 - 1 has at least this many digits


@dataclass(frozen=True)
class TextFacts:
    """What one look at a JSON text says. `number_rules`: a number token the spec writes differently
    may be there (True also when unsure); `long_digits`: LONG_DIGITS digits in a row somewhere;
    `order_sensitive`: a character at or above U+E000 (where code point and UTF-16 orders differ)."""

    number_rules: bool
    long_digits: bool
    order_sensitive: bool


def plain_canonical(value: Any) -> bytes | None:
    """The canonical bytes, or None: a float may need the number rules, or orjson cannot write the value
    (an integer past 64 bits, a lone surrogate, a key that is not a string)."""
    found = plain_canonical_facts(value)
    return None if found is None else found[0]


def plain_canonical_facts(value: Any) -> tuple[bytes, TextFacts] | None:
    """plain_canonical, with what the one look at its text found (for the checks that need it later)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    facts = text_facts(text)
    return None if facts.number_rules else (text, facts)


def needs_number_rules(text: bytes) -> bool:
    """Does orjson's text hold a number token the spec writes differently? (True also when unsure.)"""
    return text_facts(text).number_rules


def text_facts(text: bytes) -> TextFacts:
    """One translation of the text, then substring searches at memory speed; each number-shaped hit is
    confirmed as a number token in a small window (a hit inside a string, `"v2.0, ok"`, counts as one)."""
    shape = text.translate(_SHAPE)
    return TextFacts(_number_rules(text, shape), b"0" * LONG_DIGITS in shape, b"!" in shape)


def _number_rules(text: bytes, shape: bytes) -> bool:
    hits, most = 0, max(1000, len(text) // _BYTES_PER_HIT)
    for end in _INTEGRAL_END.finditer(text):  # a literal prefix: the engine skips ahead at memory speed
        hits += 1
        if hits > most or _is_token_at(text, end.start()):
            return True
    for found in _EXPONENT_END.finditer(shape):
        hits += 1
        if hits > most or _is_token_at(text, found.start()):
            return True
    return False


def _is_token_at(text: bytes, at: int) -> bool:
    for token in _TOKEN.finditer(text, max(0, at - _WINDOW), at + _WINDOW):
        if token.start() <= at < token.end():
            return True
    return False
