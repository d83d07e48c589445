"""What the writer and crash checks share: the lines another writer appended, and whether lines kept their order.
Registers no check: check modules import it, never one another."""

from __future__ import annotations

import json

from memconform.core.check_context import CheckContext
from memconform.suites.emp.checks.common import (
    entry,
)


def foreign_lines(ctx: CheckContext) -> list[bytes]:
    """Other apps' lines, each spelled in a way a writer that re-serialises or re-decodes would change."""
    plain = entry(ctx, "plain")
    spaced = entry(ctx, "spaced", content=ctx.unique("caf\u00e9 \U0001F600 e\u0301"), tags=["ui"])
    return [
        json.dumps(plain, separators=(",", ":")).encode(),
        # spaces, key order, an escaped and a raw non-ASCII character
        b'{ "content" : ' + json.dumps(spaced["content"]).encode() + b', "id": "' + spaced["id"].encode()
        + b'", "v": "1.0", "ts": 1701234567890, "src": "com.example.spaced", "tags": ["ui"], "x": "\\u00e9\xc3\xa9" }',
        json.dumps(entry(ctx, "future", v="3.0", shape=[1])).encode(),
        json.dumps(entry(ctx, "extra", unknown={"a": 1.50}, type="x-other")).encode(),
        # not valid UTF-8: a writer that decodes with replacement and writes back changes it
        b'{"v":"1.0","id":"' + entry(ctx, "bytes")["id"].encode() + b'","ts":1701234567890,"src":"com.example.bytes",'
        b'"content":"latin-1 \xe9t\xe9"}',
    ]


def in_order(wanted: list[bytes], lines: list[bytes]) -> list[int]:
    """Indexes of `wanted` lines missing from `lines` (byte for byte, relative order kept)."""
    missing, pos = [], 0
    for i, want in enumerate(wanted):
        try:
            pos = lines.index(want, pos) + 1
        except ValueError:
            missing.append(i)
    return missing
