"""Known-broken OMP servers that answer with the wrong shape or skip one rule (create status, limits,
report fields, filters, types, keys); registered in table.py."""

from __future__ import annotations

import secrets
import string
from typing import Any

from memconform.suites.omp.reference.api import ApiError, OmpApi, Out, Principal, Req
from memconform.suites.omp.reference.parts import KeySet
from memconform.suites.omp.reference.store import Filters, Scope


class CreateReturns200(OmpApi):
    """§3.3 create: answers 200 instead of 201 Created."""

    def op_create(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_create(who, req)
        return 200, body, headers


class LimitsOffByOne(OmpApi):
    """§2.1: a value at its limit (10,000 chars, 50-char tag, 100-char namespace) is refused."""

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        return super().check_string(value, name, None if max_len is None else max_len - 1, limit_kind)


class ImportReportWithoutErrors(OmpApi):
    """§3.3 import: the report has no errors array."""

    def op_import(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_import(who, req)
        return status, {k: v for k, v in body.items() if k != "errors"}, headers


class ToolFilterIgnored(OmpApi):
    """§3.3 list: the tool filter is not applied."""

    def list_filters(self, params: Any) -> Filters:
        filters = super().list_filters(params)
        filters.tool = None
        return filters


class ListWithoutPaging(OmpApi):
    """§3.3 list: the page says neither limit nor offset."""

    def op_list(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_list(who, req)
        return status, {"memories": body["memories"], "total": body["total"]}, headers


class TypeCapitalised(OmpApi):
    """§2.2: type comes back capitalised ("Semantic"), not a MemoryType."""

    @staticmethod
    def ordered(doc: dict[str, Any]) -> dict[str, Any]:
        out = OmpApi.ordered(doc)
        out["type"] = str(out.get("type", "")).capitalize()
        return out


class TagsAsString(OmpApi):
    """§2.1: tags come back as one comma-separated string, not string[]."""

    @staticmethod
    def ordered(doc: dict[str, Any]) -> dict[str, Any]:
        out = OmpApi.ordered(doc)
        out["tags"] = ",".join(out.get("tags") or [])
        return out


class SourceWithoutTimestamp(OmpApi):
    """§2.3: source comes back without its timestamp."""

    @staticmethod
    def ordered(doc: dict[str, Any]) -> dict[str, Any]:
        out = OmpApi.ordered(doc)
        out["source"] = {k: v for k, v in (out.get("source") or {}).items() if k != "timestamp"}
        return out


class ReadsDropMetadata(OmpApi):
    """§3.3: get, list, search and export serve metadata empty, whatever was written."""

    def op_get(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_get(who, req)
        return status, dict(body, metadata={}), headers


class SearchWithoutModeUsed(OmpApi):
    """§3.3 search: the answer has no mode_used."""

    def op_search(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_search(who, req)
        return status, {k: v for k, v in body.items() if k != "mode_used"}, headers


class KeywordAnyWord(OmpApi):
    """§3.3 search (errata O2): a memory holding any one word of q matches."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        if mode != "keyword":
            return super().search_memories(scope, filters, q, mode)
        hits: dict[str, dict[str, Any]] = {}
        for word in q.split():
            hits.update({d["id"]: d for d in self.store.keyword(scope, filters, word)})
        return list(hits.values()), "keyword"


class OverwriteKeepsExisting(OmpApi):
    """§3.3 import: conflict=overwrite keeps the existing memory, like skip."""

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        strategy = super().conflict_strategy(req, body)
        return "skip" if strategy == "overwrite" else strategy


class UnknownConflictAsSkip(OmpApi):
    """§3.3 import (errata O7): an unknown conflict strategy is taken as skip instead of refused."""

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        try:
            return super().conflict_strategy(req, body)
        except ApiError:
            return "skip"


class SearchNamespaceIgnored(OmpApi):
    """§5 OMP-Full namespacing: search ignores its namespace filter."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        filters.namespace = None
        return super().search_memories(scope, filters, q, mode)


def sixteen_char_keys() -> KeySet:
    sixteen = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(16))
    return KeySet(sixteen, {"memconform-tool-a": secrets.token_urlsafe(32), "memconform-tool-b": secrets.token_urlsafe(32)},
                  secrets.token_urlsafe(32))


class ShortKeys(OmpApi):
    """§7: the global API key has 16 characters, not at least 32."""

    def __init__(self, store: Any, keys: KeySet, **kw: Any) -> None:
        super().__init__(store, sixteen_char_keys(), **kw)
