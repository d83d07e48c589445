"""A translation's output judged by memconform's own checks before it is written: the suite's document
checks, as `memconform validate` runs them, and what the format's Portable adds as `output_problems` (a rule
its document checks leave to the API, such as an embedding's element type)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memconform.core.profile import Profile
from memconform.core.results import Outcome, Result

from .formats import portable


def problems(fmt: str, doc: Any) -> list[str]:
    """What makes the output not conformant: every errored check, and every failed check that decides a
    level (MUST, or listed in a conformance clause); empty when the document passes."""
    return judge(fmt, doc)[0]


def judge(fmt: str, doc: Any) -> tuple[list[str], list[str]]:
    """(blocking problems, warnings): a failed SHOULD check is a warning the ledger repeats, as `run` does."""
    from memconform.run.document_run import validate_document

    extra = portable(fmt).output_problems
    blocking, warnings = classify(validate_document(doc, fmt, Profile.named("ci")))
    return (extra(doc) if extra is not None else []) + blocking, warnings


def classify(results: Iterable[Result]) -> tuple[list[str], list[str]]:
    """(blocking, warnings) of a document's check results: an errored check, or a failed one that decides a level,
    blocks; any other failed check is a warning (written.py judges a file's results the same way)."""
    blocking: list[str] = []
    warnings: list[str] = []
    for result in results:
        if result.outcome not in (Outcome.FAILED, Outcome.ERRORED):
            continue
        detail = "; ".join(f"{f.title} at {f.path}" for f in result.failures[:3]) or result.reason
        line = f"{result.check_id} {result.outcome.value}: {detail}"
        (blocking if result.outcome is Outcome.ERRORED or result.deciding else warnings).append(line)
    return blocking, warnings

