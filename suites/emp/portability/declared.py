"""EMP's part in portability (harness/portability/formats.py): its mapping table, translator and witness, its
sample documents, and its export and import by the suite's operation names (`append` each line to a
memory.jsonl file prepared for the port, `resolve` it back)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from memconform.core.results import TargetError
from memconform.core.suite import Later
from memconform.kit.fixtures_loader import fixture_root
from memconform.portability.formats import Endpoint, Portable
from memconform.suites.emp import format as emp
from memconform.suites.emp.detect import LINES_LOOKED_AT

from . import translator, witness

STRATEGIES = "memconform.suites.emp.portability.strategies"  # imported when a property asks: hypothesis


def detect(doc: Any) -> bool:
    """The file's text (or one line of it read as JSON) is EMP's."""
    return isinstance(doc, (str, dict)) and emp.detect(doc)


def samples() -> list[Path]:
    return sorted((fixture_root() / "emp" / "valid").glob("*.json"))


def prepare(end: Endpoint) -> None:
    """An empty memory.jsonl of the port's own: the file the target appends to and resolves."""
    end.held["path"] = os.path.join(tempfile.mkdtemp(prefix="memconform-port-"), "memory.jsonl")
    open(end.held["path"], "wb").close()


def export(end: Endpoint) -> str:
    entries = end.ctx.target.call("resolve", {"path": end.held["path"]}).accepted_json(list, "emp resolve")
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)


def import_(end: Endpoint, doc: Any) -> None:
    for line in doc.splitlines():
        if line.strip():
            reply = end.ctx.target.call("append", {"path": end.held["path"], "entry": json.loads(line)})
            if not reply.ok:
                raise TargetError(f"emp append was refused: {reply.raw[:300]!r}")


def narrow(exported: str, drop: set[str]) -> str:
    """The file without the lines of the records in `drop`."""
    return "".join(line + "\n" for line in exported.splitlines() if line.strip() and json.loads(line).get("id") not in drop)


def consistent(name: str, shown: Any, value: Any) -> bool | None:
    """What the EMP writer rewrites on purpose: a time before 1970 is written as 0 (ts counts from 1970), a live
    record typed `tombstone` as `note`; anything else is left to the common rule (None)."""
    from memconform.portability.canonical import instant
    from memconform.portability.hatch import TIMES

    if name in TIMES:
        exact, seen = instant(value), instant(shown)
        if exact is not None and seen is not None and exact < "1970":
            return seen.startswith("1970-01-01T00:00:00.000")
        return None
    if name == "type" and value == "tombstone":
        return shown == "note"
    return None


def portable() -> Portable:
    return Portable(
        name="emp", mapping=Path(__file__).with_name("mapping.json"), read=translator.read, write=translator.write,
        detect=detect, samples=samples, seed="spec-examples.json", export=export, import_=import_,
        witness=witness.WITNESS, documents=Later(f"{STRATEGIES}:documents"), edge=Later(f"{STRATEGIES}:edge"), prepare=prepare,
        narrow=narrow, text=True, order=5, consistent=consistent, one_pass=True, lines=translator.LINES,
        # detect: an object by its v, id and ts members; a text by its first lines (suites/emp/detect.py)
        detect_by_shape=True, detect_lines=LINES_LOOKED_AT)
