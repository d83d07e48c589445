"""A translation's output judged by memconform's own checks before it is written: the suite's document
checks for the four document formats; for OMP (an API, with no document suite) the §2.1 memory rules the
OMP suite applies to what a server returns, over every memory of the export."""

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
    if fmt == "omp":
        return omp_export_problems(doc), []
    from memconform.run.document_run import validate_document

    blocking: list[str] = []
    warnings: list[str] = []
    for result in validate_document(doc, fmt, Profile.named("ci")):
        if result.outcome not in (Outcome.FAILED, Outcome.ERRORED):
            continue
        detail = "; ".join(f"{f.title} at {f.path}" for f in result.failures[:3]) or result.reason
        line = f"{result.check_id} {result.outcome.value}: {detail}"
        (blocking if result.outcome is Outcome.ERRORED or result.deciding else warnings).append(line)
    return blocking, warnings


def omp_export_problems(doc: Any) -> list[str]:
    from memconform.suites.omp import format as omp
    from memconform.suites.omp import rules

    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        return ["the export is not an object with a memories array (§3.3 GET /v1/export)"]
    out = []
    for name in ("omp_version", "exported_at"):
        if not isinstance(doc.get(name), str):
            out.append(f"export.{name} is missing or not a string (§3.3 GET /v1/export)")
    if isinstance(doc.get("exported_at"), str) and rules.instant(doc["exported_at"]) is None:
        out.append("export.exported_at is not an ISO 8601 UTC timestamp")
    seen: set[Any] = set()
    for i, mem in enumerate(doc["memories"]):
        where = f"$.memories[{i}]"
        if not isinstance(mem, dict):
            out.append(f"{where} is not a Memory object")
            continue
        for check in (rules.id_failures, rules.content_type_failures, rules.organisation_failures,
                      rules.timestamp_failures, rules.source_failures):
            out += [f"{f.title} at {f.path}" for f in check(mem, where)]
        if mem.get("id") in seen:
            out.append(f"{where}.id {mem.get('id')!r} is used twice")
        seen.add(mem.get("id"))
        if isinstance(mem.get("embedding"), list) and not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in mem["embedding"]):
            out.append(f"{where}.embedding is not number[]")
    del omp  # imported for its side effect: the suite's options are declared before its rules run
    return out
