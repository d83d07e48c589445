"""The OMP mutant servers themselves, one broken rule each (the docstring of each class is the rule it breaks):
auth, errors, list paging and filters, sort, a racy store, Nagle's stall, lone surrogates. mutants/table.py
makes each a factory in MUTANTS and names the checks that must fail."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from memconform.suites.omp.mutants.paths import EXPECTED_TITLES as EXPECTED_TITLES
from memconform.suites.omp.reference.api import (
    ApiError,
    OmpApi,
    Principal,
)
from memconform.suites.omp.reference.store import Filters, OmpStore


class AuthSkipped(OmpApi):
    """§3.2: any key, or none at all, is accepted as the global key."""

    def authenticate(self, headers: Any) -> Principal:
        try:
            return super().authenticate(headers)
        except ApiError:
            return self.principals[self.keys.global_key]


class HealthRequiresAuth(OmpApi):
    """§3.3 health: "No authentication required", yet health answers 401 without a key."""

    public_ops = frozenset({"root"})


class WrongErrorEnvelope(OmpApi):
    """§4: errors answer {"detail": ...} instead of {"error", "message", "details"}."""

    def error_body(self, err: ApiError) -> dict[str, Any]:
        return {"detail": err.message}


class ErrorWithoutMessage(OmpApi):
    """§4: errors answer {"error": code} alone, as the §3.3 404 example shows (allowed by default, errata O15)."""

    def error_body(self, err: ApiError) -> dict[str, Any]:
        return {"error": super().error_body(err)["error"]}


class NotFoundAs200(OmpApi):
    """§3.3 get/update/delete: an unknown id answers 200 (with the error body) instead of 404."""

    def error_status(self, err: ApiError) -> int:
        return 200 if err.code == "memory_not_found" else err.status


class LimitNotCapped(OmpApi):
    """§3.3 list: limit has max 100, yet limit=101 is accepted and 101 memories served."""

    max_limit = 1000


class LimitDefault50(OmpApi):
    """§3.3 list: limit defaults to 20, yet 50 are served when no limit is given."""

    default_limit = 50


class OffsetIgnored(OmpApi):
    """§3.3 list: offset is echoed but every page starts at the first memory."""

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        return super().list_page(who, filters, sort, limit, 0)


class TagsOr(OmpApi):
    """§3.3 list: tags use AND logic, yet a memory with any one of the tags matches."""

    tags_match = "any"


class TypeFilterIgnored(OmpApi):
    """§3.3 list: the type filter is validated but not applied."""

    def list_filters(self, params: Any) -> Filters:
        filters = super().list_filters(params)
        filters.type = None
        return filters


class NamespaceFilterIgnored(OmpApi):
    """§3.3 list: the namespace filter is not applied."""

    def list_filters(self, params: Any) -> Filters:
        filters = super().list_filters(params)
        filters.namespace = None
        return filters


class SortIgnored(OmpApi):
    """§3.3 list: sort is validated but every list comes in created_at_desc order."""

    def list_sort(self, params: Any) -> str:
        super().list_sort(params)
        return "created_at_desc"


class TotalIsPageSize(OmpApi):
    """§3.3 list: total is the size of the page served, not the number of memories matching."""

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, _ = super().list_page(who, filters, sort, limit, offset)
        return docs, len(docs)


class RacyStore(OmpStore):
    """A store that rewrites a user's whole set of memories on every write, from a snapshot read
    without the lock and a short pause before writing it back (a JSON file rewritten per request)."""

    pause_s = 0.02

    def transaction(self) -> Any:
        import contextlib

        return contextlib.nullcontext()

    def _racy(self, user: str, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
        snapshot = self.user_docs(user)
        time.sleep(self.pause_s)
        self.rewrite_user(user, change(snapshot))

    def insert(self, user: str, doc: dict[str, Any]) -> None:
        self._racy(user, lambda docs: [*docs, doc])

    def replace(self, user: str, memory_id: str, doc: dict[str, Any]) -> None:
        self._racy(user, lambda docs: [doc if d["id"] == memory_id else d for d in docs])

    def delete(self, user: str, memory_id: str) -> bool:
        found = self.exists(user, memory_id)
        self._racy(user, lambda docs: [d for d in docs if d["id"] != memory_id])
        return found

    def rewrite_user(self, user: str, docs: list[dict[str, Any]]) -> None:
        with self.lock:
            self.db.execute("DELETE FROM memories WHERE user = ?", (user,))
            for doc in docs:
                OmpStore.insert(self, user, doc)


class NagleStall(OmpApi):
    """Not a spec rule: every small response goes out ~40 ms after its request arrived, as when small
    writes wait for a delayed ACK without TCP_NODELAY. The benchmark's and report's stall detector must name it."""

    stall_s = 0.036  # the client sees ~40 ms with its own overhead (measured: +2 to +5 ms)
    small_bytes = 1024

    def asgi(self, app: Any) -> Any:
        stall_s, small = self.stall_s, self.small_bytes

        async def stalled(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            held: list[dict[str, Any]] = []
            started = time.monotonic()

            async def hold(message: dict[str, Any]) -> None:
                held.append(message)

            await app(scope, receive, hold)
            if sum(len(m.get("body", b"")) for m in held) < small:  # like a delayed-ACK timer: ~40 ms from arrival
                await asyncio.sleep(max(0.0, stall_s - (time.monotonic() - started)))
            for message in held:
                await send(message)

        return stalled


class SurrogateKeepingStore(OmpStore):
    """Stores what a lenient reader handed it: a lone surrogate kept through SQLite as an ASCII escape."""

    def _columns(self, doc: dict[str, Any]) -> tuple[Any, ...]:
        columns = list(super()._columns(doc))
        columns[1] = columns[1].encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        columns[-1] = json.dumps(doc)
        return tuple(columns)


class StoresLoneSurrogates(OmpApi):
    """§8 export: a plain json.loads reader takes an escaped lone surrogate (RFC 8259 lets it), the memory
    is stored, and from then on the export cannot be encoded as UTF-8 (500): the user's memories are stuck."""

    def parse_json(self, raw: bytes) -> Any:
        if not raw.strip():
            raise self.invalid("type", "body", "the request body is empty; expected a JSON object")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise self.invalid("type", "body", f"the request body is not JSON: {exc}") from None
