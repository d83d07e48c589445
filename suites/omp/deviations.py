"""The deviations an OMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from memconform.core import established
from memconform.core.results import Failure

STORES_INVALID = "omp.import_stores_invalid"  # an import stored a memory §2.1 forbids
FILTERS_AFTER_PAGING = "omp.list_filters_after_paging"  # list filters applied to the page, not before paging
SORT_IGNORED = "omp.sort_ignored"  # every list served in created_at_desc order whatever `sort` asks
CONFLICT_FROM_BODY = "omp.conflict_from_body_only"  # the import strategy read from the body, not the query
LIMIT_UNCAPPED = "omp.limit_uncapped"  # a list limit over 100 served as asked: neither capped nor refused
BELOW_ONE_SERVES_ALL = "omp.limit_below_one_serves_all"  # a list limit below 1 served with more than 100 memories
MAX_LIMIT = 100  # §3.3 GET /v1/memories: "limit integer Max results (default 20, max 100)"


CREATE_STORES_INVALID = "omp.create_stores_invalid"  # a create stored a memory §2.1 forbids (+ ":" and the rule's label)
UPDATE_STORES_INVALID = "omp.update_stores_invalid"  # an update stored a value §2.1 forbids


@dataclass
class SentItems:
    """The run's record (ctx.state(SentItems)) of the memories the domain, failure-path and refused-create
    checks sent (values over a limit, null, another offset, a short id among them), by id and by content,
    each with the deviation that stores it as sent. A memory of the target's export that is one of them,
    holding the very value memconform sent where the export check fails it, was stored as handed: explained
    by that deviation (the import or create that stored it), not blamed on the export."""

    by_id: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    by_content: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def sent_import(ctx: Any, item: Any) -> None:
    """An import item memconform sends: stored as sent, it is explained by STORES_INVALID."""
    sent_item(ctx, item, STORES_INVALID)


def sent_item(ctx: Any, item: Any, key: str) -> None:
    if not isinstance(item, dict):
        return
    record = ctx.state(SentItems)
    with record.lock:
        if isinstance(item.get("id"), str):  # a later patch of the same memory adds its fields
            record.by_id[item["id"]] = ({**record.by_id.get(item["id"], ({}, key))[0], **item}, key)
        if isinstance(item.get("content"), str):
            record.by_content[item["content"]] = (item, key)


def explained_if_stored_as_sent(ctx: Any, failure: Failure, mem: Any) -> Failure:
    """The failure of a memory an export holds (failure.path `$.memories[i].FIELD...`), explained by the
    deviation that stored it when that memory is one memconform sent and FIELD holds what was sent."""
    key = stored_as_sent(ctx, failure.path or "", mem)
    return established.explained(ctx, failure, key) if key is not None else failure


def stored_as_sent(ctx: Any, path: str, mem: Any) -> str | None:
    """The deviation a memory's value at `path` (`$.memories[i].FIELD...`) is, when the memory is one memconform
    sent and FIELD holds exactly what was sent (None otherwise; whether it was established is asked later)."""
    if not isinstance(mem, dict):
        return None
    match = re.match(r"\$\.memories\[\d+\]\.([A-Za-z_]+)", path)
    record = ctx.state(SentItems)
    with record.lock:
        found = record.by_id.get(str(mem.get("id"))) or record.by_content.get(str(mem.get("content")))
    if found is None or match is None:
        return None
    sent, key = found
    name = match.group(1)
    if name in sent and sent[name] == mem.get(name) and type(sent[name]) is type(mem.get(name)):
        return key
    return None


def limit_served_uncapped(ctx: Any, found: Any, content: bytes) -> str:
    """LIMIT_UNCAPPED when a schema failure is at a list answer's `limit` (or at its `memories`, more than 100 of
    them) and that `limit` holds a number over 100 (the limit asked, served as asked), and another check of the
    run established that the server serves such a limit; BELOW_ONE_SERVES_ALL when it holds a number below 1 on
    a page of more than 100 memories and another check established that; "" otherwise (the answer's own)."""
    at = list(getattr(found, "instance_path", None) or ())
    if at not in (["limit"], ["memories"]):  # the echoed limit, or the page holding more than 100 for it
        return ""
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    limit = body.get("limit") if isinstance(body, dict) else None
    if not isinstance(limit, int) or isinstance(limit, bool) or 1 <= limit <= MAX_LIMIT:
        return ""
    memories = body.get("memories")
    over_cap = isinstance(memories, list) and len(memories) > MAX_LIMIT
    if at == ["memories"] and not over_cap:
        return ""
    if limit < 1:  # a limit below 1 echoed: the fault is the page served for it, when it holds more than the cap
        return BELOW_ONE_SERVES_ALL if over_cap and established.explaining(ctx, BELOW_ONE_SERVES_ALL) else ""
    return LIMIT_UNCAPPED if established.explaining(ctx, LIMIT_UNCAPPED) else ""


def below_one_asked_over_cap(ctx: Any, query: Any, content: bytes) -> str:
    """BELOW_ONE_SERVES_ALL when a list asked with an integer `limit` below 1 was answered with more than 100
    memories and another check established that fault (what a fuzzed request the negative phase made meets)."""
    raw = query.get("limit") if isinstance(query, dict) else None
    try:
        limit = int(str(raw))
    except ValueError:
        return ""
    if limit >= 1:
        return ""
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    memories = body.get("memories") if isinstance(body, dict) else None
    over_cap = isinstance(memories, list) and len(memories) > MAX_LIMIT
    return BELOW_ONE_SERVES_ALL if over_cap and established.explaining(ctx, BELOW_ONE_SERVES_ALL) else ""
