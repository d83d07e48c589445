"""`memconform replay` of a saved OMP fuzz example (saved.py writes it): the comparator that judges the saved
request's new answer by the same schemathesis checks, chosen from saved.py's allow-list. Imported by the
fuzz checks (checks/fuzz.py), so replay finds the comparator once the suite's checks are loaded."""

from __future__ import annotations

from typing import Any

from memconform.core.sequence import comparator
from memconform.suites.omp.fuzzing.saved import COMPARATOR, RESPONSE_CHECKS


def _checks(names: Any) -> list[Any]:
    """The named checks, from the allow-list only: a file chooses among them, never a module to import."""
    import importlib

    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in RESPONSE_CHECKS for n in names):
        raise ValueError(f"the file names checks {names!r}; replay judges by {sorted(RESPONSE_CHECKS)}")
    return [getattr(importlib.import_module(RESPONSE_CHECKS[n]), n) for n in names]


@comparator(COMPARATOR)
def fuzz_reply_differs(ctx: Any, reply: Any, expected: Any) -> str | None:
    """The saved request's new answer judged by the checks that failed on the old one (None: it passes now)."""
    from memconform.core.results import HarnessError
    from memconform.suites.omp.fuzzing.accepted import excused
    from memconform.suites.omp.fuzzing.fuzzer import fuzzer
    from memconform.suites.omp.fuzzing.phases import Exchange
    from memconform.suites.omp.fuzzing.wire import as_schemathesis_response
    from schemathesis.core import NOT_SET
    from schemathesis.core.failures import FailureGroup

    if reply is None:
        return "no reply to judge (the request was not sent)"
    try:
        checks = _checks(expected.get("checks"))
        method, template = expected["operation"]
        shape = expected["case"]
        fuzz = fuzzer(ctx)
        operation = fuzz.schema[template][method]
        case = operation.Case(method=method, path_parameters=shape.get("path_parameters") or {},
                              query=shape.get("query") or {}, body=shape.get("body", NOT_SET),
                              media_type=shape.get("media_type"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise HarnessError(f"the saved fuzz request cannot be judged again: {type(exc).__name__}: {exc}") from None
    url = fuzz.target.base_url.rstrip("/") + case.formatted_path
    response = as_schemathesis_response(reply, method, url, {}, dict(case.query or {}), None)
    try:
        case.validate_response(response, checks=checks, headers=dict(fuzz.auth), transport_kwargs=fuzz.transport_kwargs())
    except FailureGroup as group:
        if expected.get("accept_readings") and excused(ctx, Exchange(case, response, bool(expected.get("negative")))):
            return None  # an answer an accepted reading allows, as the run excused it
        return "; ".join(str(getattr(f, "title", "") or type(f).__name__) for f in group.exceptions)[:1000]
    return None
