"""orjson's output where it is the spec's canonical form, found out without walking the archive.

orjson sorts keys by code point (as the spec's codepoint order does), writes non-ASCII as UTF-8 and
escapes as json.dumps does. Its floats match the spec's numbers (ECMAScript Number.prototype.toString,
as in RFC 8785) except where it writes "<digits>.0" (an integral float, spec: no fraction) or an
exponent (spec: decimal from 1e-6 to below 1e21). So when its text holds neither shape after a digit
anywhere, it is the canonical text; when it does (perhaps only inside a string), the exact writers
decide. It cannot write NaN or infinity (it would write null): only a value known to hold none
(read by orjson, or `exact` False) is given to it.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

_NEEDS_NUMBER_RULES = re.compile(rb"[0-9]\.0[,\]}]|[0-9]e[-+]")


def plain_canonical(value: Any) -> bytes | None:
    """The canonical bytes, or None: a float may need the number rules, or orjson cannot write the value
    (an integer past 64 bits, a lone surrogate, a key that is not a string)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    return None if _NEEDS_NUMBER_RULES.search(text) else text
