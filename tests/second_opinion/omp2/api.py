"""The endpoints of §3.3 as plain functions: (Call) -> Reply, or an ApiError for the §4 envelope."""

import hashlib
import os
import re
import sys
import threading
from dataclasses import dataclass, field

import search
from model import (
    ID_PATTERN,
    MEMORY_TYPES,
    Invalid,
    changes_from_request,
    format_timestamp,
    memory_from_request,
    now_utc,
    parse_timestamp,
)
from store import Principal, Record, Store, visible_to

SORTS = {
    "created_at_desc": (lambda r: r.created_order, True),
    "created_at_asc": (lambda r: r.created_order, False),
    "updated_at_desc": (lambda r: r.updated_order, True),
}
SEARCH_MODES = ("keyword", "semantic", "hybrid")
MAX_IMPORT = 10_000


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details or {}


def invalid(error: Invalid) -> ApiError:
    return ApiError(422, "validation_error", str(error), {"field": error.field})


@dataclass
class Call:
    method: str
    path: str
    query: dict
    body: object
    principal: Principal


@dataclass
class Reply:
    status: int
    body: object = None
    headers: dict = field(default_factory=dict)


class Api:
    def __init__(self, store: Store, bugs: frozenset, environ=None, log=None):
        self.store = store
        self.bugs = bugs
        self.environ = os.environ if environ is None else environ
        self.log = log or sys.stderr
        self._log_lock = threading.Lock()

    # -- helpers -------------------------------------------------------------------------------
    def audit(self, principal: Principal, operation: str, memory: dict | None = None, **extra) -> None:
        """One line per write; the content only as length and digest (§7), unless the bug is on."""
        parts = [f"audit {format_timestamp(now_utc())} op={operation} user={principal.user}"]
        parts.append(f"key_tool={principal.tool or '*'}")
        if memory is not None:
            content = memory["content"]
            parts.append(f"id={memory['id']} chars={len(content)}")
            parts.append(f"sha256={hashlib.sha256(content.encode('utf-8')).hexdigest()[:16]}")
            if "content_logged" in self.bugs:
                parts.append(f"content={content!r}")
        parts.extend(f"{k}={v}" for k, v in extra.items())
        with self._log_lock:
            print(" ".join(parts), file=self.log, flush=True)

    def count_bytes(self) -> bool:
        return "content_length_in_bytes" in self.bugs

    def readable(self, principal: Principal, record: Record) -> bool:
        return visible_to(principal, record, tool_restricts_reads="tool_key_reads_all" not in self.bugs)

    def readable_records(self, principal: Principal) -> list[Record]:
        return [r for r in self.store.live(principal.user) if self.readable(principal, r)]

    def find(self, call: Call, memory_id: str) -> Record:
        record = self.store.get(call.principal.user, memory_id)
        if record is None and call.method == "GET" and "cross_user_get_by_id" in self.bugs:
            record = self.store.get_from_anyone(memory_id)
            if record is not None:
                return record
        if record is None or not self.readable(call.principal, record):
            raise ApiError(404, "memory_not_found", f"no memory with id {memory_id}")
        return record

    def new_record(self, principal: Principal, memory: dict, memory_id: str | None = None) -> Record:
        order = self.store.next_order()
        memory = {"id": memory_id or self.store.fresh_id(), **memory}
        return Record(memory, principal.user, order, order, search.embed(memory["content"]))

    def require_tool(self, principal: Principal, tool: str) -> None:
        if not principal.may_write_as(tool):
            raise ApiError(403, "forbidden", f"this key may only write memories of tool {principal.tool!r}")

    # -- memories ----------------------------------------------------------------------------------
    def create(self, call: Call) -> Reply:
        stamp = format_timestamp(now_utc())
        try:
            memory = memory_from_request(call.body, stamp, self.count_bytes())
        except Invalid as error:
            raise invalid(error) from None
        self.require_tool(call.principal, memory["source"]["tool"])
        memory.update(created_at=stamp, updated_at=stamp)
        record = self.new_record(call.principal, memory)
        self.store.put(record)
        self.audit(call.principal, "create", record.memory)
        return Reply(201, public(record), {"Location": f"/v1/memories/{record.memory['id']}"})

    def list(self, call: Call) -> Reply:
        query = call.query
        limit = integer_param(query, "limit", 20, minimum=1)
        if "limit_not_capped" not in self.bugs:
            limit = min(limit, 100)
        offset = integer_param(query, "offset", 0, minimum=0)
        sort = query.get("sort", "created_at_desc")
        if sort not in SORTS and not (sort == "updated_at_desc" and "updated_sort_falls_back" in self.bugs):
            raise ApiError(
                422, "validation_error", f"sort must be one of {', '.join(SORTS)}", {"field": "sort"}
            )
        if sort == "updated_at_desc" and "updated_sort_falls_back" in self.bugs:
            sort = "created_at_desc"
        memory_type = query.get("type")
        if memory_type is not None and memory_type not in MEMORY_TYPES:
            raise ApiError(
                422, "validation_error", f"type must be one of {', '.join(MEMORY_TYPES)}", {"field": "type"}
            )
        tags = [t.strip() for t in query.get("tags", "").split(",") if t.strip()]
        records = [
            r
            for r in self.readable_records(call.principal)
            if matches(
                r,
                memory_type,
                tags,
                query.get("namespace"),
                query.get("tool"),
                any_tag="tags_or_logic" in self.bugs,
            )
        ]
        key, descending = SORTS[sort]
        records.sort(key=key, reverse=descending)
        page = records[offset : offset + limit]
        total = len(page) if "total_is_page_count" in self.bugs else len(records)
        return Reply(
            200, {"memories": [public(r) for r in page], "total": total, "limit": limit, "offset": offset}
        )

    def get(self, call: Call, memory_id: str) -> Reply:
        return Reply(200, public(self.find(call, memory_id)))

    def update(self, call: Call, memory_id: str) -> Reply:
        record = self.find(call, memory_id)
        stamp = format_timestamp(now_utc())
        try:
            changes = changes_from_request(call.body, stamp, self.count_bytes())
            if "put_replaces_whole" in self.bugs:
                changes = replaced_fields(record.memory, changes, stamp, self.count_bytes())
        except Invalid as error:
            raise invalid(error) from None
        if "source" in changes:
            self.require_tool(call.principal, changes["source"]["tool"])
        with self.store.lock:
            memory = dict(record.memory)
            for name, value in changes.items():
                if value is None and name in ("namespace", "embedding"):
                    memory.pop(name, None)
                else:
                    memory[name] = value
            memory["updated_at"] = stamp
            record.memory = memory
            record.updated_order = self.store.next_order()
            record.vector = search.embed(memory["content"])
        self.audit(call.principal, "update", memory, fields=",".join(sorted(changes)) or "-")
        return Reply(200, public(record))

    def delete(self, call: Call, memory_id: str) -> Reply:
        record = self.find(call, memory_id)
        self.store.remove(record.owner, memory_id)
        self.audit(call.principal, "delete", record.memory)
        if "delete_returns_200" in self.bugs:
            return Reply(200, {"deleted": True, "id": memory_id})
        return Reply(204)

    def search(self, call: Call) -> Reply:
        body = call.body
        if not isinstance(body, dict):
            raise ApiError(
                422, "validation_error", "the request body must be a JSON object", {"field": "body"}
            )
        q = body.get("q")
        if not isinstance(q, str) or not q.strip():
            raise ApiError(422, "validation_error", "q must be a non-empty string", {"field": "q"})
        mode = body.get("mode", "keyword")
        if mode not in SEARCH_MODES:
            raise ApiError(
                422, "validation_error", f"mode must be one of {', '.join(SEARCH_MODES)}", {"field": "mode"}
            )
        memory_type = body.get("type")
        if memory_type is not None and memory_type not in MEMORY_TYPES:
            raise ApiError(
                422, "validation_error", f"type must be one of {', '.join(MEMORY_TYPES)}", {"field": "type"}
            )
        tags = search_tags(body.get("tags"))
        namespace = body.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise ApiError(422, "validation_error", "namespace must be a string", {"field": "namespace"})
        limit = body.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ApiError(422, "validation_error", "limit must be a positive integer", {"field": "limit"})
        limit = min(limit, 100)
        records = self.readable_records(call.principal)
        if not (mode != "keyword" and "semantic_ignores_filters" in self.bugs):
            records = [r for r in records if matches(r, memory_type, tags, namespace, body.get("tool"))]
        ranked = search.rank(records, q, mode)
        return Reply(
            200, {"memories": [public(r) for _, r in ranked[:limit]], "total": len(ranked), "mode_used": mode}
        )

    # -- export / import -----------------------------------------------------------------------------
    def export(self, call: Call) -> Reply:
        records = sorted(self.readable_records(call.principal), key=lambda r: r.created_order)
        return Reply(
            200,
            {
                "omp_version": "0.1",
                "exported_at": format_timestamp(now_utc()),
                "server": "omp2-second-opinion",
                "memories": [public(r) for r in records],
            },
        )

    def import_(self, call: Call) -> Reply:
        from importer import run_import

        return run_import(self, call)

    # -- 0.2 AI endpoints ------------------------------------------------------------------------
    def extract(self, call: Call) -> Reply:
        return self.ai_endpoint(call, "extract")

    def compress(self, call: Call) -> Reply:
        return self.ai_endpoint(call, "compress")

    def ai_endpoint(self, call: Call, name: str) -> Reply:
        body = call.body
        if not isinstance(body, dict):
            raise ApiError(
                422, "validation_error", "the request body must be a JSON object", {"field": "body"}
            )
        transcript = body.get("transcript")
        if not isinstance(transcript, str) or not transcript.strip():
            raise ApiError(
                422, "validation_error", "transcript must be a non-empty string", {"field": "transcript"}
            )
        for optional in ("provider", "api_key", "source_tool"):
            if body.get(optional) is not None and not isinstance(body[optional], str):
                raise ApiError(422, "validation_error", f"{optional} must be a string", {"field": optional})
        source_tool = body.get("source_tool") or call.principal.tool or "omp-extract"
        self.require_tool(call.principal, source_tool)
        provider = body.get("provider") or self.environ.get("OMP_AI_PROVIDER") or "anthropic"
        api_key = body.get("api_key") or self.environ.get("OMP_AI_API_KEY")
        if not api_key:
            if name == "compress" and "compress_without_key" in self.bugs:
                return self.naive_compress(call, transcript, source_tool)
            raise ApiError(422, "no_api_key", "no AI API key configured (request api_key or OMP_AI_API_KEY)")
        # This server carries no AI provider client: with a key it can only report the provider as failing.
        raise ApiError(502, "ai_error", f"AI provider {provider!r} is not reachable from this server")

    def naive_compress(self, call: Call, transcript: str, source_tool: str) -> Reply:
        sentences = re.split(r"(?<=[.!?])\s+", transcript.strip())
        stamp = format_timestamp(now_utc())
        memory = {
            "content": " ".join(sentences[:2])[:500],
            "type": "episodic",
            "source": {"tool": source_tool, "timestamp": stamp},
            "tags": ["session-summary"],
            "expires_at": None,
            "metadata": {},
            "created_at": stamp,
            "updated_at": stamp,
        }
        record = self.new_record(call.principal, memory)
        self.store.put(record)
        self.audit(call.principal, "compress", record.memory)
        return Reply(201, {"memory": public(record)})

    def health(self) -> Reply:
        count = self.store.count_live()
        return Reply(
            200, {"status": "ok", "version": "0.1", "memories_count": count, "compliance_level": "OMP-Full"}
        )


def public(record: Record) -> dict:
    return dict(record.memory)


def matches(record, memory_type, tags, namespace, tool, any_tag=False) -> bool:
    memory = record.memory
    if memory_type is not None and memory["type"] != memory_type:
        return False
    if namespace is not None and memory.get("namespace") != namespace:
        return False
    if tool is not None and record.tool != tool:
        return False
    if tags:
        present = [tag in memory["tags"] for tag in tags]
        return any(present) if any_tag else all(present)
    return True


def integer_param(query: dict, name: str, default: int, minimum: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    if not re.fullmatch(r"[0-9]+", raw) or int(raw) < minimum:
        raise ApiError(422, "validation_error", f"{name} must be an integer >= {minimum}", {"field": name})
    return int(raw)


def search_tags(value: object) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return value
    raise ApiError(422, "validation_error", "tags must be an array of strings", {"field": "tags"})


def replaced_fields(current: dict, changes: dict, stamp: str, count_bytes: bool) -> dict:
    """The put_replaces_whole fault: every field not sent falls back to its create default."""
    rebuilt = {"content": current["content"], "type": current["type"], "source": current["source"]}
    rebuilt.update(changes)
    defaults = memory_from_request(rebuilt, stamp, count_bytes)
    for optional in ("namespace", "embedding"):
        defaults.setdefault(optional, None)
    return defaults


def import_timestamp(item: dict, name: str, fallback: str) -> str:
    if item.get(name) is None:
        return fallback
    parse_timestamp(item[name], name)
    return item[name]


def valid_import_id(value: object) -> bool:
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None
