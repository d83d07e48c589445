"""A MemoryAI bundle reassembled from its NDJSON stream (errata E3: every line shape that says what it is). Not a
check module: the profile and producer checks import it."""

from __future__ import annotations

import json
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai import reading_kinds, readings


def parse_stream(ctx: CheckContext, raw: bytes) -> tuple[dict[str, Any], list[Failure]]:
    """Reassemble a bundle from the NDJSON stream. Errata E3 accepts every line shape that says what it
    is: the bundle envelope (`format`, with record arrays absent, empty or full), and lines naming their
    section or kind under one of STREAM_KIND_KEYS (`{"section": "chunks", "record": {...}}`,
    `{"_kind": "chunk", ...fields}`, `{"kind": "header", "format": ...}`, `{"type": "end"}`), the
    record under `record`/`data` or inline."""
    failures: list[Failure] = []
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    doc: dict[str, Any] = {s: [] for s in memoryai.RECORD_SECTIONS}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            failures.append(Failure("a stream line is not JSON", line[:200].decode("utf-8", "replace"), "one JSON object per line", f"line {n}"))
            continue
        if not isinstance(item, dict):
            failures.append(Failure("a stream line is not a JSON object", item, "object", f"line {n}"))
            continue
        key = readings.line_kind_key(item)
        section = memoryai.STREAM_KINDS[item[key]] if key else None
        if item.get("format") == memoryai.FORMAT and section in (None, "envelope"):
            doc.update({k: v for k, v in item.items() if k not in memoryai.RECORD_SECTIONS and k != key})
            for s in memoryai.RECORD_SECTIONS:
                records = item.get(s)
                if isinstance(records, list):
                    doc[s].extend(records)
                elif records is not None:  # a number, string, object: no records (null, as before, is none)
                    failures.append(Failure(f"the stream envelope's {s} is not an array", type(records).__name__, "array",
                                            f"line {n}: $.{s}"))
            continue
        if section is None:
            failures.append(Failure("a stream line says neither that it is the envelope nor which section it belongs to",
                                    item, f"the envelope, or a line naming its kind under one of {list(readings.STREAM_KIND_KEYS)}",
                                    f"line {n}"))
            continue
        wrapped = readings.line_record_key(item)
        readings.observe(ctx, "E3", reading_kinds.StreamLine(), item)
        fields = item[wrapped] if wrapped else {k: v for k, v in item.items() if k != key}
        if section in memoryai.RECORD_SECTIONS:
            doc[section].append(fields)
        elif section == "envelope":
            doc.update({k: v for k, v in fields.items() if k not in memoryai.RECORD_SECTIONS})
    if doc.get("format") != memoryai.FORMAT and not failures:
        failures.append(Failure("the stream carries no bundle envelope", sorted(doc)[:8], "{format, version, manifest, ...}", "line 1"))
    return doc, failures
