"""What the MemoryAI domain checks share (checks/domain_imports.py, domain_records.py, domain_pairs.py): the
domain table and its ledger, a call that errs as a Failure, the markers and placeholders of written records.
Not a check module: the checks import it, never one another."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.kit import domain
from memconform.suites.memoryai import client, model
from memconform.targets.base import Reply


def table() -> domain.Domain:
    return domain.required("memoryai")


ledger = domain.ledger


def server_error(reply: Reply) -> bool:
    return reply.http_status is not None and reply.http_status >= 500


def call_or_failure(ctx: CheckContext, label: str, call: Callable[[], Reply]) -> Reply | Failure:
    """A server error answers nothing the spec allows: a failure naming the class sent (the HTTP seam raises
    it as the target's error, which every other check reports as errored)."""
    try:
        return call()
    except TargetError as exc:
        if "server error" not in str(exc):
            raise
        return Failure(f"{label}: a server error", str(exc)[:200], "an answer, or a refusal with a 4xx", "$")


def marked(ctx: CheckContext, label: str) -> tuple[str, dict[str, Any]]:
    """(marker, a valid chunk tagged with it)."""
    marker = ctx.unique(label)
    return marker, client.chunk(ctx, label, tags=["memconform", marker])


def placeholder(value: Any, names: dict[str, Any]) -> Any:
    """A class value naming a role ("{model}", "{hash}", ...) as what this run made; any other value as it is
    (a braced uuid is a value, not a placeholder)."""
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in names:
        return names[value[1:-1]]
    return value


def no_instant_observed(ctx: CheckContext, body: dict[str, Any], reply: Reply, doc: Any) -> bool:
    """E63: scope since without a since, served or refused (a bundle rejection): the answer seen is recorded.
    False when the request names an instant (or another scope): the caller judges it."""
    if not model.may_refuse_export(body.get("scope"), body.get("since")):
        return False
    answer = "served" if doc is not None else "refused" if client.is_bundle_rejection(reply) else "other"
    ctx.observe("E63", {"served": lambda a: a == "served", "refused": lambda a: a == "refused"}, answer,
                title="an export of scope since without since: neither a bundle nor a refusal")
    return answer != "other"
