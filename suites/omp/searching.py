"""POST /v1/memories/search as the search checks send it: a page read back, and the pair of memories only
similarity tells apart. Not a check module: the checks import it, never one another."""

from __future__ import annotations

from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import TargetError
from memconform.suites.omp import client


def search_body(ctx: CheckContext, query: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = client.search(ctx, query).accepted_json(dict, f"searching {query}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a search answer has no memories array: {body!r:.200}")
    return body


def overlap_pair(ctx: CheckContext) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """A memory sharing two of three query words and one sharing none: only similarity finds the first."""
    w = [client.word() for _ in range(6)]
    tag = f"sem-{client.word()}"
    near = client.created(ctx, client.memory(ctx, "sem-near", content=f"{ctx.unique('sem')} {w[0]} {w[1]} {w[2]}", tags=[tag]))
    far = client.created(ctx, client.memory(ctx, "sem-far", content=f"{ctx.unique('sem')} {w[3]} {w[4]}", tags=[tag]))
    return near, far, f"{w[0]} {w[1]} {w[5]}", tag
