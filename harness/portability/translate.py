"""One translation: read a document of one format into canonical records, write them in another, and
judge the output with memconform's own checks before anyone sees it. A refused translation has no output,
only a ledger saying why."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.core.results import HarnessError

from . import fmt_amps, fmt_emp, fmt_memorizz, fmt_memoryai, fmt_omp
from .canonical import FORMATS, Document
from .ledger import Ledger
from .placement import Refused
from .validation import judge

Reader = Callable[[Any], Document]
Writer = Callable[[Document, Ledger], Any]
READERS: dict[str, Reader] = {"memoryai": fmt_memoryai.read, "omp": fmt_omp.read, "memorizz": fmt_memorizz.read,
                              "amps": fmt_amps.read, "emp": fmt_emp.read}
WRITERS: dict[str, Writer] = {"memoryai": fmt_memoryai.write, "omp": fmt_omp.write, "memorizz": fmt_memorizz.write,
                              "amps": fmt_amps.write, "emp": fmt_emp.write}


@dataclass
class Translation:
    source: str
    target: str
    canonical: Document  # what was read
    output: Any  # the written document (EMP: the file's text); None when refused
    ledger: Ledger

    @property
    def refused(self) -> str | None:
        return self.ledger.refused


def read(fmt: str, doc: Any) -> Document:
    if fmt not in READERS:
        raise HarnessError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    return READERS[fmt](doc)


def translate(doc: Any, source: str, target: str, validate: bool = True,
              writers: dict[str, Writer] | None = None) -> Translation:
    if validate:
        wrong, _ = judge(source, doc)
        if wrong:  # a translation of a document its own format refuses would only spread the fault
            ledger = Ledger(source, target)
            ledger.refused = f"the {source} source does not pass memconform's checks: " + " | ".join(wrong[:5])
            return Translation(source, target, Document(source), None, ledger)
    canonical = read(source, doc)
    ledger = Ledger(source, target, records_in=len(canonical.records))
    writer = (writers or {}).get(target) or WRITERS.get(target)
    if writer is None:
        raise HarnessError(f"unknown format {target!r}; formats: {', '.join(FORMATS)}")
    try:
        output = writer(copy.deepcopy(canonical), ledger)
    except Refused as exc:
        ledger.refused = str(exc)
        return Translation(source, target, canonical, None, ledger)
    if validate:
        found, warnings = judge(target, output)
        ledger.warnings += warnings
        if found:
            ledger.refused = f"the {target} output does not pass memconform's checks: " + " | ".join(found[:5])
            return Translation(source, target, canonical, None, ledger)
    return Translation(source, target, canonical, output, ledger)


def detect(doc: Any) -> str | None:
    """The format of a parsed document (EMP: the file's text), by the suites' own detectors."""
    from memconform.suites.amps import format as amps
    from memconform.suites.emp import format as emp
    from memconform.suites.memorizz import format as memorizz
    from memconform.suites.memoryai import format as memoryai

    if isinstance(doc, dict) and isinstance(doc.get("memories"), list) and "omp_version" in doc:
        return "omp"
    for name, detector in (("memoryai", memoryai.detect), ("memorizz", memorizz.detect), ("amps", amps.detect)):
        if detector(doc):
            return name
    return "emp" if isinstance(doc, (str, dict)) and emp.detect(doc) else None


def load(path: Path, fmt: str | None = None) -> tuple[str, Any]:
    """(format, document) of a file: JSON, or JSON Lines for EMP; a fixture case file gives its document."""
    from memconform.run.validate import MAX_DOCUMENT_BYTES, NotWellFormed, parse_json, read_all

    raw = read_all(path, MAX_DOCUMENT_BYTES)
    try:
        doc: Any = parse_json(raw)
    except NotWellFormed:
        doc = raw.decode("utf-8", "replace")
    if isinstance(doc, dict) and "document" in doc and "verdict" in doc:  # a fixture case
        doc = doc["document"]
    if isinstance(doc, dict) and fmt in (None, "emp") and detect(doc) == "emp":
        doc = raw.decode("utf-8")
    found = fmt or detect(doc)
    if found is None:
        raise HarnessError(f"{path}: no format recognises this document (formats: {', '.join(FORMATS)}); name one with --from")
    return found, doc


def dump(fmt: str, output: Any) -> str:
    return output if fmt == "emp" else json.dumps(output, ensure_ascii=False, indent=2) + "\n"
