"""Reference Open Memory Protocol v0.1 (+0.2 extract/compress) server, declaring OMP-Full.

SQLite storage (store.py), Starlette over uvicorn on loopback. Every endpoint of §3.3, bearer
auth (§3.2) on all but health, the §4 error envelope on every error, per-tool keys, a second user,
namespaces, keyword (FTS5), semantic and hybrid search on a local lexical embedding, per-key rate
limiting (§7), an audit log of writes without content, and extract/compress through a pluggable
Provider (none by default: 422 no_api_key). Readings of ambiguous text: suites/omp/errata.md (O1..O14).

Each rule sits in a small overridable method or class attribute so that a mutant
(suites/omp/mutants) breaks exactly one of them. This module holds the endpoints of §3.3;
authentication, rate limits and access are access.py's, extract/compress ai.py's.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from memconform.suites.omp.format import (
    CONFLICTS,
    DEFAULT_LIMIT,
    MAX_CONTENT,
    MAX_LIMIT,
    SEARCH_MODES,
    SORTS,
    TYPES,
    VERSION,
)
from memconform.suites.omp.reference.ai import OmpAiEndpoints
from memconform.suites.omp.reference.parts import SERVER_NAME, ApiError, Out, Principal, Req
from memconform.suites.omp.reference.store import EMBED_LABEL, Filters, Scope


class OmpApi(OmpAiEndpoints):
    """The protocol's endpoints. Authentication and access are OmpAccess's (access.py),
    extract/compress OmpAiEndpoints's (ai.py), validation OmpValidation's, storage the OmpStore's."""

    compliance = "OMP-Full"
    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT
    tags_match = "all"
    enforce_limits = True

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


# serving lives in serve.py (not re-exported here: it imports OmpApi from this module)
