"""The deviations an OMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from memconform.core import established
from memconform.core.results import Failure

STORES_INVALID = "omp.import_stores_invalid"  # an import stored a memory §2.1 forbids
FILTERS_AFTER_PAGING = "omp.list_filters_after_paging"  # list filters applied to the page, not before paging
CONFLICT_FROM_BODY = "omp.conflict_from_body_only"  # the import strategy read from the body, not the query


@dataclass
class SentImports:
    """The run's record (ctx.state(SentImports)) of the import items the domain and failure-path checks sent
    (values over a limit, null, another offset, a short id among them), by id and by content. A memory of the target's export that is one of them, holding the very value memconform
    sent where the export check fails it, was stored as handed: explained by STORES_INVALID (the import
    that stored it), not blamed on the export."""

    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_content: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def sent_import(ctx: Any, item: Any) -> None:
    if not isinstance(item, dict):
        return
    record = ctx.state(SentImports)
    with record.lock:
        if isinstance(item.get("id"), str):
            record.by_id[item["id"]] = item
        if isinstance(item.get("content"), str):
            record.by_content[item["content"]] = item


def explained_if_stored_as_sent(ctx: Any, failure: Failure, mem: Any) -> Failure:
    """The failure of a memory an export holds (failure.path `$.memories[i].FIELD...`), explained by
    STORES_INVALID when that memory is an import item memconform sent and FIELD holds what was sent."""
    if not isinstance(mem, dict):
        return failure
    match = re.match(r"\$\.memories\[\d+\]\.([A-Za-z_]+)", failure.path or "")
    record = ctx.state(SentImports)
    with record.lock:
        sent = record.by_id.get(str(mem.get("id"))) or record.by_content.get(str(mem.get("content")))
    if sent is None or match is None:
        return failure
    name = match.group(1)
    if name in sent and sent[name] == mem.get(name) and type(sent[name]) is type(mem.get(name)):
        return established.explained(ctx, failure, STORES_INVALID)
    return failure
