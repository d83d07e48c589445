"""Whether the 0.2 AI endpoints (extract, compress) may be called: memconform never reaches a real AI
provider (option omp.ai_endpoints, errata O11). Not a check module: the checks import it."""

from __future__ import annotations

from memconform.core.check_context import CheckContext
from memconform.suites.omp import client


def ai_reason(ctx: CheckContext) -> str | None:
    """Why extract/compress must not be called (None: the target has no AI key, calling is safe)."""
    mode = ctx.option("ai_endpoints")
    if mode == "skip":
        return "option omp.ai_endpoints=skip: extract and compress are never called"
    if mode == "no-key":
        return None
    configured = client.facts(ctx).ai_key_configured
    if configured is False:
        return None
    if configured:
        return "the target states it has an AI key configured: calling extract/compress would reach a real AI provider"
    return ("unknown whether the target has an AI key; a call could reach a real AI provider. "
            "Pass --option omp.ai_endpoints=no-key if it has none")
