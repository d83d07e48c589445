"""Counterfactual probes that name a list failure's root cause (core/established.py): a failure is explained
by a deviation another check established only when the target's own answers show that deviation alone
produced it (one or two more requests), never by a guess."""

from __future__ import annotations

from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, rules
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING, SORT_IGNORED
from memconform.suites.omp.model import comma_tags


def ids(memories: list[Any]) -> list[Any]:
    return [mem.get("id") for mem in memories if isinstance(mem, dict)]


def tags_filtered_late(ctx: CheckContext, params: dict[str, str], answer: Any, key: Any = client.GLOBAL) -> bool:
    """Is this answer exactly the page the same request without `tags` serves, with the tags filter applied to
    that page afterwards (and its total the untagged one's or the page's own)? Then a failure it causes is
    the one fault list_filter_tags_and established, not the parameter under test: the untagged page must be
    full, so the other parameters are applied before paging. Asked only once that deviation is established by
    another check; one more request."""
    if "tags" not in params or not established.explaining(ctx, FILTERS_AFTER_PAGING):
        return False
    body = answer.body if getattr(answer, "ok", False) and isinstance(answer.body, dict) else None
    if body is None or not isinstance(body.get("memories"), list):
        return False
    plain = client.list_(ctx, {k: v for k, v in params.items() if k != "tags"}, key=key)
    untagged = plain.body if plain.ok and isinstance(plain.body, dict) and isinstance(plain.body.get("memories"), list) else None
    if untagged is None:
        return False
    if not full_page(untagged, params):
        return False  # the other parameters leave short pages too: not the tags alone
    wanted = comma_tags(params["tags"])
    late = [mem for mem in untagged["memories"] if isinstance(mem, dict) and isinstance(mem.get("tags"), list)
            and all(t in mem["tags"] for t in wanted)]
    return ids(body["memories"]) == ids(late) and body.get("total") in (untagged.get("total"), len(late))


def full_page(body: dict[str, Any], params: dict[str, str]) -> bool:
    """Does the page hold as many memories as its limit and total leave room for?"""
    total, limit = body.get("total"), body.get("limit")
    offset = params.get("offset", "0")
    if not rules.is_int(total) or not rules.is_int(limit) or not offset.isdigit():
        return False
    return len(body["memories"]) >= min(limit, max(0, total - int(offset)))


def explained_if_tags_late(ctx: CheckContext, failure: Failure, params: dict[str, str], answer: Any) -> Failure:
    return established.explained(ctx, failure, FILTERS_AFTER_PAGING) if tags_filtered_late(ctx, params, answer) else failure


def explained_if_sort_ignored(ctx: CheckContext, failure: Failure, pairs: list[tuple[str, str]], answer: Any,
                              judge: Any) -> Failure:
    """A page asked in another order, explained by SORT_IGNORED (list_sort_orders saw every list come in
    created_at_desc) when `judge` finds nothing wrong with the same answer asked in that order."""
    if not established.explaining(ctx, SORT_IGNORED) or not any(k == "sort" and v != "created_at_desc" for k, v in pairs):
        return failure
    as_served = [(k, "created_at_desc" if k == "sort" else v) for k, v in pairs]
    return failure if list(judge(as_served, answer)) else established.explained(ctx, failure, SORT_IGNORED)


def explained_if_order_from_sort_ignored(ctx: CheckContext, failure: Failure, pairs: list[tuple[str, str]],
                                         answer: Any) -> Failure:
    """A page "not in the order asked", explained by SORT_IGNORED (list_sort_orders saw every list come in
    created_at_desc) when the page served is in created_at_desc order: its order is that deviation's, whatever
    else (tags filtered after paging) made the page short."""
    wanted = [v for k, v in pairs if k == "sort"]
    if not wanted or wanted[-1] == "created_at_desc" or f"is not in {wanted[-1]} order" not in failure.title \
            or not established.explaining(ctx, SORT_IGNORED):
        return failure
    body = answer.body if getattr(answer, "ok", False) and isinstance(answer.body, dict) else None
    memories = body.get("memories") if body is not None else None
    if not isinstance(memories, list) or not all(isinstance(m, dict) for m in memories):
        return failure
    moments = [rules.instant(m.get("created_at")) for m in memories]
    known = [m for m in moments if m is not None]
    if len(known) != len(moments) or any(a < b for a, b in zip(known, known[1:], strict=False)):
        return failure
    return established.explained(ctx, failure, SORT_IGNORED)
