"""Counterfactual probes that name a list failure's root cause (core/established.py): a failure is explained
by a deviation another check established only when the target's own answers show that deviation alone
produced it (one or two more requests), never by a guess."""

from __future__ import annotations

from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING, SORT_IGNORED
from memconform.suites.omp.model import comma_tags


def ids(memories: list[Any]) -> list[Any]:
    return [mem.get("id") for mem in memories if isinstance(mem, dict)]


def tags_filtered_late(ctx: CheckContext, params: dict[str, str], answer: Any, key: Any = client.GLOBAL) -> bool:
    """Is this answer exactly the page the same request without `tags` serves, with the tags filter applied to
    that page afterwards (and its total the untagged one's or the page's own)? Then a failure it causes is
    the one fault list_filter_tags_and established, not the parameter under test: the untagged page must be
    full, and exactly the page its limit and offset ask for (paged_as_asked), so the other parameters are
    applied before paging and right. Asked only once that deviation is established by another check; one or two
    more requests."""
    if "tags" not in params or not established.explaining(ctx, FILTERS_AFTER_PAGING):
        return False
    body = answer.body if getattr(answer, "ok", False) and isinstance(answer.body, dict) else None
    if body is None or not isinstance(body.get("memories"), list):
        return False
    rest = {k: v for k, v in params.items() if k != "tags"}
    plain = client.list_(ctx, rest, key=key)
    untagged = plain.body if plain.ok and isinstance(plain.body, dict) and isinstance(plain.body.get("memories"), list) else None
    if untagged is None:
        return False
    if not full_page(untagged, params):
        return False  # the other parameters leave short pages too: not the tags alone
    if not paged_as_asked(ctx, untagged, rest, key):
        return False  # limit or offset is mishandled without the tags too: a fault beside the tags, not explained
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


def asked_limit(params: dict[str, str], body: dict[str, Any]) -> int | None:
    """The page size the untagged request asked for: its `limit` when a plain 1..100, the default 20 when absent,
    else (an odd value whose serving is an open point, or over 100: list_limit_max_100's to judge) the limit
    the page says it applied."""
    raw = params.get("limit")
    if raw is None:
        return omp.DEFAULT_LIMIT
    if raw.isdigit() and 1 <= int(raw) <= omp.MAX_LIMIT:
        return int(raw)
    echoed = body.get("limit")
    return echoed if rules.is_int(echoed) and echoed >= 1 else None


def paged_as_asked(ctx: CheckContext, untagged: dict[str, Any], params: dict[str, str], key: Any) -> bool:
    """Is the untagged page the one its limit and offset ask for (tags filtered late predicts the tagged answer
    from a right untagged page only)? Exactly min(limit, total - offset) memories, and at an offset inside the
    matches the same memories as that slice of a page from offset 0 (or of the page one earlier, when the
    slice would ask over 100): one more request. A server ignoring or misapplying offset fails this, so its
    offset fault is reported on its own account, not put on the tags."""
    limit, total, offset = asked_limit(params, untagged), untagged.get("total"), int(params.get("offset", "0"))
    served = ids(untagged["memories"])
    if limit is None or not rules.is_int(total):
        return False
    if params.get("limit", "1").isdigit() and len(served) != min(limit, max(0, total - offset)):
        return False  # more than asked, or memories at an offset past every match
    if offset == 0 or offset >= total:
        return True
    start, size = (0, offset + limit) if offset + limit <= omp.MAX_LIMIT else (offset - 1, limit + 1)
    if size > omp.MAX_LIMIT:
        return False  # no page within the cap overlaps it: not verifiable, so not explained
    wider = client.list_(ctx, {**params, "offset": str(start), "limit": str(size)}, key=key)
    body = wider.body if wider.ok and isinstance(wider.body, dict) and isinstance(wider.body.get("memories"), list) else None
    return body is not None and ids(body["memories"])[offset - start:offset - start + limit] == served


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
