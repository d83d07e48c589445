"""Reference Open Memory Protocol v0.1 (+0.2 extract/compress) server, declaring OMP-Full.

SQLite storage (omp_store.py), Starlette over uvicorn on loopback. Every endpoint of §3.3, bearer
auth (§3.2) on all but health, the §4 error envelope on every error, per-tool keys, a second user,
namespaces, keyword (FTS5), semantic and hybrid search on a local lexical embedding, per-key rate
limiting (§7), an audit log of writes without content, and extract/compress through a pluggable
Provider (none by default: 422 no_api_key). Readings of ambiguous text: errata/omp.md (O1..O14).

Each rule sits in a small overridable method or class attribute so that a mutant
(harness/mutants/omp.py) breaks exactly one of them.
"""

from __future__ import annotations

import math
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from memconform.formats.omp import (
    CONFLICTS,
    DEFAULT_LIMIT,
    MAX_CONTENT,
    MAX_LIMIT,
    SEARCH_MODES,
    SORTS,
    TYPES,
    VERSION,
)

from .omp_parts import *  # noqa: F403  (re-exported: the mutants and tests import them from here)
from .omp_parts import (
    ID_ALPHABET,
    MAX_TRANSCRIPT,
    SERVER_NAME,
    SUITE_RATE_LIMITS,
    ApiError,
    KeySet,
    Out,
    Principal,
    Provider,
    ProviderError,
    RateLimit,
    Req,
    SlidingWindow,
)
from .omp_store import EMBED_LABEL, Filters, OmpStore, Scope, format_utc, sort_key
from .omp_validate import OmpValidation


class OmpApi(OmpValidation):
    """The protocol: authentication, validation, the endpoints. Storage is the OmpStore's."""

    compliance = "OMP-Full"
    public_ops: frozenset[str] = frozenset({"health", "root"})
    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT
    tags_match = "all"
    enforce_limits = True

    def __init__(self, store: OmpStore, keys: KeySet, *, provider: Provider | None = None,
                 rate_limits: Mapping[str, RateLimit] | None = None) -> None:
        self.store = store
        self.keys = keys
        self.principals = keys.principals()
        self.provider = provider
        self.rate_limits = dict(SUITE_RATE_LIMITS if rate_limits is None else rate_limits)
        self.windows: dict[str, SlidingWindow] = {}
        self.windows_lock = threading.Lock()

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
        self.store.audit(format_utc(int(time.time() * 1_000_000)), who.user, who.name, op, memory_id)

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

    # --- endpoints -----------------------------------------------------------------------------

    def op_root(self, who: Principal | None, req: Req) -> Out:
        return 200, {"service": SERVER_NAME, "protocol": "Open Memory Protocol", "base": "/v1", "health": "/v1/health"}, {}

    def op_health(self, who: Principal | None, req: Req) -> Out:
        return 200, {"status": "ok", "version": VERSION, "memories_count": self.store.count(),
                     "compliance": self.compliance, "semantic_search": EMBED_LABEL}, {}

    def op_create(self, who: Principal, req: Req) -> Out:
        fields = self.validate_memory(self.json_object(req), partial=False)
        self.check_write_tool(who, fields["source"]["tool"])
        with self.store.transaction():
            doc = self.new_doc(self.fresh_id(who.user), fields)
            self.store.insert(who.user, doc)
        self.audit(who, "create", doc["id"])
        return 201, doc, {"Location": f"/v1/memories/{doc['id']}"}

    def list_filters(self, params: Mapping[str, str]) -> Filters:
        kind = params.get("type")
        if kind is not None and kind not in TYPES:
            raise self.invalid("value", "type", f"unknown type filter {kind[:40]!r}; one of {', '.join(TYPES)}")
        tags = tuple(t.strip() for t in params.get("tags", "").split(",") if t.strip())
        return Filters(type=kind, tool=params.get("tool") or None, tags=tags, tags_match=self.tags_match,
                       namespace=params.get("namespace") or None)

    def list_sort(self, params: Mapping[str, str]) -> str:
        sort = params.get("sort", "created_at_desc")
        if sort not in SORTS:
            raise self.invalid("value", "sort", f"unknown sort {sort[:40]!r}; one of {', '.join(SORTS)}")
        return sort

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        return self.store.page(self.scope(who), filters, sort, limit, min(offset, 2**62))

    def op_list(self, who: Principal, req: Req) -> Out:
        limit = self.int_param(req.params, "limit", self.default_limit, 1, self.max_limit)
        offset = self.int_param(req.params, "offset", 0, 0, None)
        filters, sort = self.list_filters(req.params), self.list_sort(req.params)
        docs, total = self.list_page(who, filters, sort, limit, offset)
        return 200, {"memories": docs, "total": total, "limit": limit, "offset": offset}, {}

    def op_get(self, who: Principal, req: Req) -> Out:
        return 200, self.visible(who, req.path["memory_id"]), {}

    def op_update(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        with self.store.transaction():
            doc = self.visible(who, req.path["memory_id"])
            fields = self.validate_memory(body, partial=True)
            if "source" in fields:
                self.check_write_tool(who, fields["source"]["tool"])
            new = self.apply_update(doc, fields, body)
            self.store.replace(who.user, doc["id"], new)
        self.audit(who, "update", new["id"])
        return 200, new, {}

    def op_delete(self, who: Principal, req: Req) -> Out:
        with self.store.transaction():
            doc = self.visible(who, req.path["memory_id"])
            self.store.delete(who.user, doc["id"])
        self.audit(who, "delete", doc["id"])
        return 204, None, {}

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        """Ranked matches and the mode really used (errata O2, O13)."""
        if mode == "keyword":
            return self.store.keyword(scope, filters, q), "keyword"
        scored = self.store.scored(scope, filters, q)
        if mode == "semantic":
            return [doc for score, doc in scored if score > 0], "semantic"
        keyword_ids = {d["id"] for d in self.store.keyword(scope, filters, q)}
        merged = [(0.5 * (doc["id"] in keyword_ids) + 0.5 * score, doc) for score, doc in scored]
        return [doc for score, doc in sorted(merged, key=lambda p: -p[0]) if score > 0], "hybrid"

    def op_search(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        q = self.check_string(body.get("q"), "q", MAX_CONTENT)
        mode = body.get("mode", "keyword")
        if mode not in SEARCH_MODES:
            raise self.invalid("value", "mode", f"unknown mode {str(mode)[:40]!r}; one of {', '.join(SEARCH_MODES)}")
        kind = body.get("type")
        if kind is not None and kind not in TYPES:
            raise self.invalid("value", "type", f"unknown type filter {str(kind)[:40]!r}; one of {', '.join(TYPES)}")
        tags = tuple(self.check_tags(body["tags"], "tags")) if body.get("tags") is not None else ()
        namespace = self.check_string(body["namespace"], "namespace") if body.get("namespace") is not None else None
        tool = self.check_string(body["tool"], "tool") if body.get("tool") is not None else None
        limit = self.body_limit(body.get("limit"))
        filters = Filters(type=kind, tool=tool, tags=tags, tags_match=self.tags_match, namespace=namespace)
        found, mode_used = self.search_memories(self.scope(who), filters, q, mode)
        return 200, {"memories": found[:limit], "total": len(found), "mode_used": mode_used}, {}

    def export_envelope(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        return {"omp_version": VERSION, "exported_at": self.timestamp(int(time.time() * 1000) * 1000),
                "server": SERVER_NAME, "memories": docs}

    def op_export(self, who: Principal, req: Req) -> Out:
        return 200, self.export_envelope(self.store.all(self.scope(who))), {}

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        """The query parameter `conflict` (§3.3), else a body field `conflict` (errata O1), else skip."""
        strategy = req.params.get("conflict", body.get("conflict", "skip"))
        if strategy not in CONFLICTS:
            raise self.invalid("value", "conflict", f"unknown conflict strategy {str(strategy)[:40]!r}; one of {', '.join(CONFLICTS)}")
        return str(strategy)

    def import_id(self, strategy: str, given: Any, user: str) -> str:
        if strategy == "duplicate" or given is None:
            return self.fresh_id(user)
        if not isinstance(given, str) or not re.fullmatch(r"mem_[A-Za-z0-9]{16}", given):
            raise self.invalid("value", "id", f"id must be 'mem_' and 16 letters or digits, got {str(given)[:40]!r}")
        return given

    def import_failed(self, errors: list[dict[str, Any]], index: int, given: Any, err: ApiError) -> None:
        """One invalid memory is reported and skipped; the rest go on (errata O7)."""
        errors.append({"index": index, "id": given if isinstance(given, str) else None, "error": err.code, "message": err.message})

    def before_import(self, who: Principal, strategy: str) -> None:
        """Nothing happens to existing memories before an import."""

    def import_one(self, who: Principal, item: Any, strategy: str) -> str:
        """Import one memory atomically; "imported" or "skipped"; ApiError when it is refused."""
        if not isinstance(item, dict):
            raise self.invalid("type", "memory", "each memory must be a JSON object")
        fields = self.validate_memory(item, partial=False)
        self.check_write_tool(who, fields["source"]["tool"])
        created = self.check_utc(item["created_at"], "created_at") if item.get("created_at") is not None else None
        updated = self.check_utc(item["updated_at"], "updated_at") if item.get("updated_at") is not None else None
        with self.store.transaction():
            memory_id = self.import_id(strategy, item.get("id"), who.user)
            existing = self.store.get(who.user, memory_id)
            if existing is not None and strategy == "skip":
                return "skipped"
            if existing is not None and who.tool is not None and (existing.get("source") or {}).get("tool") != who.tool:
                raise ApiError("forbidden", f"id {memory_id} belongs to another tool; this key may not overwrite it")
            if created is None or updated is None:
                now = self.timestamp(self.store.next_micros())
                created, updated = created or now, updated or now
            doc = self.new_doc(memory_id, fields, created, updated)
            if existing is None:
                self.store.insert(who.user, doc)
            else:
                self.store.replace(who.user, memory_id, doc)
        self.audit(who, f"import:{strategy}", memory_id)
        return "imported"

    def op_import(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        strategy = self.conflict_strategy(req, body)
        memories = body.get("memories")
        if not isinstance(memories, list):
            raise self.invalid("type", "memories", "the body must be an OMP export object with a memories array")
        if body.get("omp_version") is not None and not isinstance(body["omp_version"], str):
            raise self.invalid("type", "omp_version", "omp_version must be a string")
        self.before_import(who, strategy)
        counts = {"imported": 0, "skipped": 0}
        errors: list[dict[str, Any]] = []
        for index, item in enumerate(memories):
            given = item.get("id") if isinstance(item, dict) else None
            try:
                counts[self.import_one(who, item, strategy)] += 1
            except ApiError as err:
                self.import_failed(errors, index, given, err)
        return 200, {**counts, "errors": errors}, {}

    def provider_for(self, body: dict[str, Any]) -> Provider:
        """The configured provider; never a real AI call the operator did not configure (errata O11)."""
        if self.provider is not None:
            return self.provider
        if body.get("api_key"):
            raise ApiError("ai_error", "this reference server calls no external AI provider; configure a Provider", status=502)
        raise ApiError("no_api_key", "no AI API key is configured for extract/compress; nothing was stored")

    def ai_request(self, who: Principal, body: dict[str, Any]) -> tuple[str, str]:
        transcript = self.check_string(body.get("transcript"), "transcript", MAX_TRANSCRIPT)
        for name in ("provider", "api_key"):
            if body.get(name) is not None and not isinstance(body[name], str):
                raise self.invalid("type", name, f"{name} must be a string")
        default_tool = who.tool or "omp-extract"
        tool = self.check_string(body["source_tool"], "source_tool") if body.get("source_tool") is not None else default_tool
        self.check_write_tool(who, tool)
        return transcript, tool

    def generated_doc(self, who: Principal, item: dict[str, Any], tool: str) -> dict[str, Any]:
        now = self.timestamp(self.store.next_micros())
        try:
            fields = self.validate_memory({**item, "source": {"tool": tool, "timestamp": now}}, partial=False)
        except ApiError as err:
            raise ApiError("ai_error", f"the AI provider returned an unusable memory: {err.message}", status=502) from None
        return self.new_doc(self.fresh_id(who.user), fields)

    def call_provider(self, fn: Callable[[str], Any], transcript: str) -> Any:
        try:
            return fn(transcript)
        except ProviderError as exc:
            raise ApiError("ai_error", f"the AI provider returned an error: {exc}", status=502) from None

    def extracted(self, who: Principal, docs: list[dict[str, Any]]) -> Out:
        return 201, {"extracted": len(docs), "memories": docs}, {}

    def compressed(self, who: Principal, doc: dict[str, Any]) -> Out:
        return 201, {"memory": doc}, {}

    def op_extract(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        transcript, tool = self.ai_request(who, body)
        provider = self.provider_for(body)
        items = self.call_provider(provider.extract, transcript)
        with self.store.transaction():
            docs = [self.generated_doc(who, item, tool) for item in items]
            for doc in docs:
                self.store.insert(who.user, doc)
        for doc in docs:
            self.audit(who, "extract", doc["id"])
        return self.extracted(who, docs)

    def op_compress(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        transcript, tool = self.ai_request(who, body)
        provider = self.provider_for(body)
        summary = self.call_provider(provider.compress, transcript)
        with self.store.transaction():
            doc = self.generated_doc(who, {"content": summary, "type": "episodic", "tags": ["session-summary"]}, tool)
            self.store.insert(who.user, doc)
        self.audit(who, "compress", doc["id"])
        return self.compressed(who, doc)

    # --- HTTP ----------------------------------------------------------------------------------

    ROUTES: tuple[tuple[str, str, str], ...] = (
        ("/", "GET", "root"),
        ("/v1/health", "GET", "health"),
        ("/v1/memories", "POST", "create"),
        ("/v1/memories", "GET", "list"),
        ("/v1/memories/search", "POST", "search"),
        ("/v1/memories/{memory_id}", "GET", "get"),
        ("/v1/memories/{memory_id}", "PUT", "update"),
        ("/v1/memories/{memory_id}", "DELETE", "delete"),
        ("/v1/export", "GET", "export"),
        ("/v1/import", "POST", "import"),
        ("/v1/extract", "POST", "extract"),
        ("/v1/compress", "POST", "compress"),
    )

    def asgi(self, app: Any) -> Any:
        """The ASGI app actually served (a mutant may wrap it)."""
        return app


# serving lives in omp_serve.py (not re-exported here: it imports OmpApi from this module)
