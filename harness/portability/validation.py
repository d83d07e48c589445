"""A translation's output judged by memconform's own checks before it is written: the suite's document
checks, as `memconform validate` runs them (OMP: suites/omp/checks/export_document.py, the export envelope
and the §2.1 memory rules over every memory), and for OMP also that an embedding is number[]."""

from __future__ import annotations

from typing import Any

from memconform.core.profile import Profile
from memconform.core.results import Outcome


def problems(fmt: str, doc: Any) -> list[str]:
    """What makes the output not conformant: every errored check, and every failed check that decides a
    level (MUST, or listed in a conformance clause); empty when the document passes."""
    return judge(fmt, doc)[0]


def judge(fmt: str, doc: Any) -> tuple[list[str], list[str]]:
    """(blocking problems, warnings): a failed SHOULD check is a warning the ledger repeats, as `run` does."""
    from memconform.run.document_run import validate_document

    blocking: list[str] = omp_embedding_problems(doc) if fmt == "omp" else []
    warnings: list[str] = []
    for result in validate_document(doc, fmt, Profile.named("ci")):
        if result.outcome not in (Outcome.FAILED, Outcome.ERRORED):
            continue
        detail = "; ".join(f"{f.title} at {f.path}" for f in result.failures[:3]) or result.reason
        line = f"{result.check_id} {result.outcome.value}: {detail}"
        (blocking if result.outcome is Outcome.ERRORED or result.deciding else warnings).append(line)
    return blocking, warnings


def omp_embedding_problems(doc: Any) -> list[str]:
    """An embedding a translation writes into an OMP memory is number[] (§2.1 `embedding?: number[]`)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        return []
    return [f"$.memories[{i}].embedding is not number[]" for i, mem in enumerate(doc["memories"])
            if isinstance(mem, dict) and isinstance(mem.get("embedding"), list)
            and not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in mem["embedding"])]
