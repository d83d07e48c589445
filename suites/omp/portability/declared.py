"""OMP's part in portability (harness/portability/formats.py): its mapping table, translator and witness, its
sample export, and its export and import through the suite's client (GET /v1/export, POST /v1/import)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core.suite import Later
from memconform.portability.formats import Endpoint, Portable, refused

from . import translator, witness

STRATEGIES = "memconform.suites.omp.portability.strategies"  # imported when a property asks: hypothesis


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("memories"), list) and "omp_version" in doc


def samples() -> list[Path]:
    """The OMP row of the loss matrix: the sample exports beside this file (OMP has no document fixtures)."""
    return sorted(Path(__file__).parent.glob("omp-*.json"))


def export(end: Endpoint) -> Any:
    from memconform.suites.omp import client

    return client.export(end.ctx, record=False).accepted_json(dict, "omp export")


def import_(end: Endpoint, doc: Any) -> None:
    from memconform.suites.omp import client

    refused(end, client.import_(end.ctx, doc))


def portable() -> Portable:
    return Portable(
        name="omp", mapping=Path(__file__).with_name("mapping.json"), read=translator.read, write=translator.write,
        detect=detect, samples=samples, seed="omp-export.json", export=export, import_=import_,
        witness=witness.WITNESS, documents=Later(f"{STRATEGIES}:documents"), edge=Later(f"{STRATEGIES}:edge"), order=2,
        reading=translator.READING, one_pass=True,  # an embedding not number[]: refused by export_document_embedding
        detect_by_shape=True)  # detect: memories an array, omp_version present
