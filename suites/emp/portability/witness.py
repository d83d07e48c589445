"""A reader of EMP memory.jsonl files apart from the translator (it must not import it): what a reader of the
format sees in a document, against which every ledger line is judged (harness/portability/ledger_truth.py, with the helpers of witness.py)."""

from __future__ import annotations

import json
from typing import Any

from memconform.portability.witness import Seen, Witness, outside, seen

# canonical name -> native path (a tuple walks objects)
NATIVE = {"text": ("content",), "type": ("type",), "origin_tool": ("src",), "tags": ("tags",), "embedding": ("emb",)}
LINE = {"v", "id", "ts", "src", "content", "type", "tags", "emb", "meta"}


def records(doc: Any) -> dict[str, Seen]:
    newest: dict[str, tuple[Any, int, dict[str, Any]]] = {}
    for n, line in enumerate(doc.split("\n") if isinstance(doc, str) else []):  # JSON Lines: \n alone ends a line
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or isinstance(entry.get("ts"), bool) \
                or not isinstance(entry.get("ts"), (int, float)):
            continue
        if entry["id"] not in newest or (entry["ts"], n) >= newest[entry["id"]][:2]:
            newest[entry["id"]] = (entry["ts"], n, entry)
    out = {}
    for key, (ts, _, entry) in newest.items():
        s = seen(NATIVE, key, entry, entry.get("meta"))
        meta = entry.get("meta")
        if entry.get("type") == "tombstone" or isinstance(meta, dict) and meta.get("deleted") is True:
            s.fields = {"deleted": True}
        else:
            s.fields["updated_at"] = ts
        if not s.fields.get("deleted"):
            outside(s, entry, LINE)
        out[key] = s
    return out


WITNESS = Witness(records, native=NATIVE)  # a file of lines: no envelope
