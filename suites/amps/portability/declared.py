"""AMPS's part in portability (harness/portability/formats.py): its mapping table, translator and witness, its
sample documents, and its export and import by the suite's operation names (`import_export`, `export` of the
subject imported)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core.results import TargetError
from memconform.core.suite import Later
from memconform.kit.fixtures_loader import fixture_root
from memconform.portability.formats import Endpoint, Portable, refused
from memconform.suites.amps import format as amps

from . import translator, witness

STRATEGIES = "memconform.suites.amps.portability.strategies"  # imported when a property asks: hypothesis


def samples() -> list[Path]:
    return sorted((fixture_root() / "amps" / "valid").glob("*.json"))


def export(end: Endpoint) -> Any:
    """The export of the first subject this endpoint was given (an export is per subject)."""
    subjects = end.held.get("subjects") or []
    if not subjects:
        raise TargetError("nothing was imported into the AMPS target, so there is no subject to export")
    return end.ctx.target.call("export", {"subject_id": subjects[0]}).accepted_json(dict, "amps export")


def import_(end: Endpoint, doc: Any) -> None:
    end.held.setdefault("subjects", []).append(doc["subject"]["subject_id"])
    refused(end, end.ctx.target.call("import_export", doc))


def portable() -> Portable:
    return Portable(
        name="amps", mapping=Path(__file__).with_name("mapping.json"), read=translator.read, write=translator.write,
        detect=amps.detect, samples=samples, seed="linked-complete.json", export=export, import_=import_,
        witness=witness.WITNESS, documents=Later(f"{STRATEGIES}:documents"), edge=Later(f"{STRATEGIES}:edge"), order=4,
        reading=translator.READING, one_pass=True, detect_by_shape=True)  # detect.py: export_version, subject/atoms/artifacts kinds
