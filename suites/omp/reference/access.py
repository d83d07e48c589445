"""Who may do what in the OMP reference server: the §4 error reply, bearer authentication (§3.2),
per-key rate limiting (§7), ids and timestamps, per-tool access to a memory, the audit log, and
the §2.1 document shape. The base of OmpApi (api.py); each rule is a method a mutant overrides."""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memconform.suites.omp.reference.parts import (
    ID_ALPHABET,
    SUITE_RATE_LIMITS,
    ApiError,
    KeySet,
    Out,
    Principal,
    Provider,
    RateLimit,
    Req,
    SlidingWindow,
)
from memconform.suites.omp.reference.store import OmpStore, Scope, format_utc, sort_key
from memconform.suites.omp.reference.validate import OmpValidation


class OmpAccess(OmpValidation):
    """Authentication, rate limits and access; the endpoints are OmpApi's."""

    public_ops: frozenset[str] = frozenset({"health", "root"})

    def __init__(self, store: OmpStore, keys: KeySet, *, provider: Provider | None = None,
                 rate_limits: Mapping[str, RateLimit] | None = None) -> None:
        self.store = store
        self.keys = keys
        self.principals = keys.principals()
        self.provider = provider
        self.rate_limits = dict(SUITE_RATE_LIMITS if rate_limits is None else rate_limits)
        self.windows: dict[str, SlidingWindow] = {}
        self.windows_lock = threading.Lock()
        self.audit_file: Path | None = None  # where audit lines also go, one per write, when served (§7)
        self.audit_lock = threading.Lock()

    # --- errors, auth, rate limit --------------------------------------------------------------

    def error_body(self, err: ApiError) -> dict[str, Any]:
        return {"error": err.code, "message": err.message, "details": err.details}

    def error_status(self, err: ApiError) -> int:
        return err.status

    def error_out(self, err: ApiError) -> Out:
        return self.error_status(err), self.error_body(err), err.headers

    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            for key, principal in self.principals.items():
                if secrets.compare_digest(token.strip().encode(), key.encode()):
                    return principal
        raise ApiError("unauthorized", "missing or invalid API key: send Authorization: Bearer <api-key>",
                       headers={"WWW-Authenticate": "Bearer"})

    def check_rate(self, who: Principal) -> None:
        limit = self.rate_limits.get(who.name, self.rate_limits.get("*"))
        if limit is None:
            return
        with self.windows_lock:
            window = self.windows.setdefault(who.name, SlidingWindow(limit))
        wait = window.take()
        if wait:
            retry = max(1, math.ceil(wait))
            raise ApiError("rate_limited", f"over {limit.requests} requests per {limit.per_s:g} s for this key",
                           {"retry_after_s": retry}, headers={"Retry-After": str(retry)})

    def dispatch(self, op: str, handler: Callable[[Principal | None, Req], Out], req: Req) -> Out:
        try:
            who = None
            if op not in self.public_ops:
                who = self.authenticate(req.headers)
                self.check_rate(who)
            return handler(who, req)
        except ApiError as err:
            return self.error_out(err)
        except Exception as exc:  # never an HTML page or a dropped connection; content is not logged (§7)
            return self.error_out(ApiError("internal_error", f"the server failed: {type(exc).__name__}"))

    # --- identity, time, access ----------------------------------------------------------------

    def new_id(self) -> str:
        return "mem_" + "".join(secrets.choice(ID_ALPHABET) for _ in range(16))

    def fresh_id(self, user: str) -> str:
        while True:
            candidate = self.new_id()
            if not self.store.exists(user, candidate):
                return candidate

    def timestamp(self, micros: int) -> str:
        return format_utc(micros)

    def scope(self, who: Principal) -> Scope:
        return Scope(who.user, who.tool)

    def check_write_tool(self, who: Principal, tool: str) -> None:
        if who.tool is not None and tool != who.tool:
            raise ApiError("forbidden", f"this key may only write memories of tool {who.tool!r}", {"tool": tool})

    def visible(self, who: Principal, memory_id: str) -> dict[str, Any]:
        """The memory, or 404 (also for another user's: existence is not leaked) or 403 (another tool's)."""
        doc = self.store.get(who.user, memory_id)
        if doc is None:
            raise ApiError("memory_not_found", f"no memory with id {memory_id[:80]!r}", {"id": memory_id[:80]})
        if who.tool is not None and (doc.get("source") or {}).get("tool") != who.tool:
            raise ApiError("forbidden", f"this key may only read and write memories of tool {who.tool!r}")
        return doc

    def audit(self, who: Principal, op: str, memory_id: str | None) -> None:
        at = format_utc(int(time.time() * 1_000_000))
        self.store.audit(at, who.user, who.name, op, memory_id)
        if self.audit_file is not None:
            line = self.audit_line(at, who, op, memory_id)
            with self.audit_lock, open(self.audit_file, "a", encoding="utf-8") as log:
                log.write(line + "\n")

    def log_audit_to(self, folder: Path) -> Path:
        """Write audit lines to `audit.log` in `folder` from now on (created empty); its path."""
        self.audit_file = folder / "audit.log"
        self.audit_file.touch()
        return self.audit_file

    def audit_line(self, at: str, who: Principal, op: str, memory_id: str | None) -> str:
        """§7: who wrote what, when; never the memory's content."""
        return f"{at} audit user={who.user} key={who.name} op={op} id={memory_id or '-'}"

    @staticmethod
    def ordered(doc: dict[str, Any]) -> dict[str, Any]:
        """The §2.1 field order, optional fields only when set."""
        out: dict[str, Any] = {k: doc[k] for k in ("id", "content", "type", "source", "tags") if k in doc}
        if doc.get("namespace") is not None:
            out["namespace"] = doc["namespace"]
        out.update({k: doc.get(k) for k in ("created_at", "updated_at", "expires_at")})
        out["metadata"] = doc.get("metadata") or {}
        if doc.get("embedding") is not None:
            out["embedding"] = doc["embedding"]
        return out

    def new_doc(self, memory_id: str, fields: dict[str, Any], created: str | None = None, updated: str | None = None) -> dict[str, Any]:
        now = self.timestamp(self.store.next_micros()) if created is None or updated is None else ""
        return self.ordered({"tags": [], "expires_at": None, "metadata": {}, **fields, "id": memory_id,
                             "created_at": created or now, "updated_at": updated or now})

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """Only the given fields change; id and created_at never; updated_at strictly moves forward (O6, O8)."""
        updated = self.timestamp(self.store.next_micros(after=sort_key(doc.get("updated_at"))))
        return self.ordered({**doc, **fields, "updated_at": updated})
