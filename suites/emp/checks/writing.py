"""What the writer and crash checks share: the lines another writer appended, and whether lines kept their order.
Registers no check: check modules import it, never one another."""

from __future__ import annotations

import json
from collections.abc import Iterable

from memconform.core.check_context import CheckContext
from memconform.suites.emp import format as emp
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


MARKER_CHARS = 16  # an id or content this long is the harness's own (a UUID, ctx.unique): no other line holds it


def markers(raw: bytes, fields: Iterable[str] = ("id", "content")) -> list[str]:
    """What of another app's line a writer that changed it (re-encoded, re-serialised, moved) would keep: its
    `fields` that are strings unique to it; the line's own text when it is no JSON object."""
    parsed = emp.parse_line(emp.decode(raw))
    if not isinstance(parsed, dict):
        text = emp.decode(raw).strip()
        return [text] if len(text) >= MARKER_CHARS else []
    return [v for v in (parsed.get(f) for f in fields) if isinstance(v, str) and len(v) >= MARKER_CHARS]


def dropped(raw: bytes, lines: list[bytes], fields: Iterable[str] = ("id", "content")) -> bool:
    """Is another app's line gone without a trace from `lines` (not changed): no line holds its markers, as
    text or JSON-escaped? A line without markers is never taken as dropped (nothing tells it from a changed one)."""
    wanted = markers(raw, fields)
    forms = {m for w in wanted for m in (w, json.dumps(w)[1:-1], json.dumps(w, ensure_ascii=False)[1:-1])}
    return bool(wanted) and not any(form in emp.decode(line) for line in lines for form in forms)
