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

import json
import math
import re
import secrets
import string
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memconform.core.profile import Limits
from memconform.formats.omp import (
    CONFLICTS,
    DEFAULT_LIMIT,
    ERRORS,
    MAX_CONTENT,
    MAX_LIMIT,
    MAX_METADATA_KEYS,
    MAX_NAMESPACE,
    MAX_TAG_LEN,
    MAX_TAGS,
    SEARCH_MODES,
    SORTS,
    TYPES,
    VERSION,
    Credentials,
    TargetFacts,
)
from memconform.hostile import strict_loads
from memconform.targets.http import HttpTarget
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .omp_store import EMBED_LABEL, Filters, OmpStore, Scope, format_utc, parse_utc, sort_key

SERVER_NAME = "memconform-omp-reference"
MAX_BODY = 64 * 1024 * 1024
MAX_TRANSCRIPT = 200_000
MAX_EMBEDDING = 8192
ID_ALPHABET = string.ascii_letters + string.digits
DIGITS_RE = re.compile(r"^[0-9]+$")
TOOL_A, TOOL_B = "memconform-tool-a", "memconform-tool-b"
DEFAULT_USER, OTHER_USER = "default", "other"


class ApiError(Exception):
    """A §4 error: the code decides the status unless one is given."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.details = details or {}
        self.status = status or ERRORS.get(code, 400)
        self.headers = headers or {}


@dataclass(frozen=True)
class Principal:
    """Who a key speaks for: a user, and for a per-tool key the one tool it may read and write."""

    name: str
    user: str
    tool: str | None = None


@dataclass
class KeySet:
    """The keys of one server: >= 32 characters of cryptographic randomness each (§7)."""

    global_key: str
    tool_keys: dict[str, str]
    other_user_key: str

    @classmethod
    def generate(cls) -> KeySet:
        return cls(secrets.token_urlsafe(32), {TOOL_A: secrets.token_urlsafe(32), TOOL_B: secrets.token_urlsafe(32)},
                   secrets.token_urlsafe(32))

    def principals(self) -> dict[str, Principal]:
        out = {self.global_key: Principal("global", DEFAULT_USER)}
        out.update({key: Principal(f"tool:{tool}", DEFAULT_USER, tool) for tool, key in self.tool_keys.items()})
        out[self.other_user_key] = Principal("other-user", OTHER_USER)
        return out

    def credentials(self) -> Credentials:
        return Credentials(dict(self.tool_keys), self.other_user_key)


@dataclass(frozen=True)
class RateLimit:
    """At most `requests` per key in any `per_s` seconds (§7, errata O12)."""

    requests: int = 1000
    per_s: float = 10.0


class SlidingWindow:
    """The times of a key's last `requests` requests: a new one may go when the oldest is `per_s` old.

    Exact "N per W seconds" whatever the client's pace; a continuously refilled bucket would never
    trip for a client slower than N/W requests a second, however many it sent.
    """

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self.times: deque[float] = deque(maxlen=limit.requests)
        self.lock = threading.Lock()

    def take(self) -> float:
        """0 when a request may go ahead (and it is counted), else the seconds until one may."""
        with self.lock:
            now = time.monotonic()
            if len(self.times) == self.limit.requests and now - self.times[0] < self.limit.per_s:
                return self.times[0] + self.limit.per_s - now
            self.times.append(now)
            return 0.0


# the global key never trips during a suite run; the others trip within the suite's probe burst
SUITE_RATE_LIMITS: dict[str, RateLimit] = {"global": RateLimit(100_000, 10.0), "*": RateLimit(200, 10.0)}


class ProviderError(Exception):
    """The AI provider failed: answered as 502 ai_error."""


class Provider(Protocol):
    name: str

    def extract(self, transcript: str) -> list[dict[str, Any]]:
        """Memories found in a transcript: [{"content", "type", "tags"?}]."""
        ...

    def compress(self, transcript: str) -> str:
        """One summary of a transcript."""
        ...


class OfflineProvider:
    """Deterministic and local, for tests: one semantic memory per sentence; the summary is the opening."""

    name = "offline"

    @staticmethod
    def sentences(transcript: str) -> list[str]:
        parts = re.split(r"(?<=[.!?])\s+", transcript.strip())
        return [re.sub(r"^\w[\w .-]{0,40}:\s+", "", p).strip()[:MAX_CONTENT] for p in parts if p.strip()]

    def extract(self, transcript: str) -> list[dict[str, Any]]:
        return [{"content": s, "type": "semantic", "tags": ["extracted"]} for s in self.sentences(transcript) if s]

    def compress(self, transcript: str) -> str:
        found = self.sentences(transcript)
        return f"Summary of {len(found)} sentence(s): {' '.join(found)}"[:1000]


@dataclass
class Req:
    """One request as the handlers see it: query, path parameters, raw body."""

    params: Mapping[str, str]
    path: dict[str, str]
    raw: bytes
    headers: Mapping[str, str]


Out = tuple[int, Any, dict[str, str]]


class OmpApi:
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

    # --- parsing and validation ------------------------------------------------------------------

    def invalid(self, kind: str, field_name: str, message: str, **details: Any) -> ApiError:
        """A validation error; kind is "type" (wrong JSON type), "limit" (a §2.1 limit) or "value"."""
        return ApiError("validation_error", message, {"field": field_name, **details})

    def parse_json(self, raw: bytes) -> Any:
        if not raw.strip():
            raise self.invalid("type", "body", "the request body is empty; expected a JSON object")

        try:  # strict: no duplicate names, NaN, lone surrogates, BOM or deep nesting (the hostile-JSON battery)
            return strict_loads(raw)
        except ValueError as exc:
            raise self.invalid("type", "body", f"the request body is not JSON: {exc}") from None

    def json_object(self, req: Req) -> dict[str, Any]:
        body = self.parse_json(req.raw)
        if not isinstance(body, dict):
            raise self.invalid("type", "body", f"the request body must be a JSON object, got {type(body).__name__}")
        return body

    def check_utc(self, value: Any, name: str) -> str:
        if not isinstance(value, str):
            raise self.invalid("type", name, f"{name} must be an ISO 8601 UTC timestamp string")
        if parse_utc(value) is None:
            raise self.invalid("value", name, f"{name} must be ISO 8601 in UTC (Z or +00:00), got {value[:40]!r}")
        return value

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        if not isinstance(value, str):
            raise self.invalid("type", name, f"{name} must be a string")
        if not value:
            raise self.invalid("value", name, f"{name} must not be empty")
        if max_len is not None and self.enforce_limits and len(value) > max_len:
            raise self.invalid(limit_kind, name, f"{name} is {len(value)} characters; the maximum is {max_len}",
                               max=max_len)
        return value

    def check_source(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.invalid("type", "source", "source must be an object with tool and timestamp (§2.3)")
        source = {k: v for k, v in value.items() if v is not None}
        source["tool"] = self.check_string(value.get("tool"), "source.tool")
        source["timestamp"] = self.check_utc(value.get("timestamp"), "source.timestamp")
        for name in ("session_id", "user_id"):
            if name in source and not isinstance(source[name], str):
                raise self.invalid("type", f"source.{name}", f"source.{name} must be a string")
        return source

    def check_tags(self, value: Any, name: str = "tags") -> list[str]:
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise self.invalid("type", name, f"{name} must be an array of strings")
        if self.enforce_limits and len(value) > MAX_TAGS:
            raise self.invalid("limit", name, f"{len(value)} tags; the maximum is {MAX_TAGS}", max=MAX_TAGS)
        for i, tag in enumerate(value):
            self.check_string(tag, f"{name}[{i}]", MAX_TAG_LEN)
        return list(value)

    def check_metadata(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.invalid("type", "metadata", "metadata must be an object")
        if self.enforce_limits and len(value) > MAX_METADATA_KEYS:
            raise self.invalid("limit", "metadata", f"{len(value)} metadata keys; the maximum is {MAX_METADATA_KEYS}",
                               max=MAX_METADATA_KEYS)
        return value

    def check_embedding(self, value: Any) -> list[float]:
        if not isinstance(value, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value
        ):
            raise self.invalid("type", "embedding", "embedding must be an array of finite numbers")
        if len(value) > MAX_EMBEDDING:
            raise self.invalid("limit", "embedding", f"embedding has {len(value)} numbers; this server keeps at most {MAX_EMBEDDING}")
        return value

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        """The §2.1 fields of a create (partial=False) or update (partial=True) body, each checked.

        id, created_at and updated_at are the server's: ignored here (errata O8). A null namespace,
        expires_at or embedding means "none"; a null metadata means {}.
        """
        out: dict[str, Any] = {}
        if "content" in body or not partial:
            out["content"] = self.check_string(body.get("content"), "content", MAX_CONTENT)
        if "type" in body or not partial:
            kind = body.get("type")
            if not isinstance(kind, str):
                raise self.invalid("type", "type", f"type must be a string, one of {', '.join(TYPES)}")
            if self.enforce_limits and kind not in TYPES:
                raise self.invalid("value", "type", f"unknown type {kind[:40]!r}; one of {', '.join(TYPES)}")
            out["type"] = kind
        if "source" in body or not partial:
            out["source"] = self.check_source(body.get("source"))
        if "tags" in body:
            out["tags"] = self.check_tags(body["tags"])
        if body.get("namespace") is not None:
            out["namespace"] = self.check_string(body["namespace"], "namespace", MAX_NAMESPACE)
        elif "namespace" in body:
            out["namespace"] = None
        if body.get("expires_at") is not None:
            out["expires_at"] = self.check_utc(body["expires_at"], "expires_at")
        elif "expires_at" in body:
            out["expires_at"] = None
        if "metadata" in body:
            out["metadata"] = self.check_metadata(body["metadata"])
        if body.get("embedding") is not None:
            out["embedding"] = self.check_embedding(body["embedding"])
        elif "embedding" in body:
            out["embedding"] = None
        return out

    def int_param(self, params: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
        raw = params.get(name)
        if raw is None:
            return default
        if not DIGITS_RE.match(raw):
            raise self.invalid("type", name, f"{name} must be a whole number, got {raw[:40]!r}")
        value = int(raw)
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise self.invalid("value", name, f"{name} must be {bound}, got {value}", min=low, max=high)
        return value

    def body_limit(self, value: Any) -> int:
        if value is None:
            return self.default_limit
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.invalid("type", "limit", "limit must be an integer")
        if not 1 <= value <= self.max_limit:
            raise self.invalid("value", "limit", f"limit must be from 1 to {self.max_limit}, got {value}")
        return value

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


def _response(out: Out) -> Response:
    status, body, headers = out
    if body is None:
        return Response(status_code=status, headers=headers)
    return JSONResponse(body, status_code=status, headers=headers)


async def _read_body(request: Request) -> bytes | None:
    raw = bytearray()
    async for part in request.stream():
        raw += part
        if len(raw) > MAX_BODY:
            return None
    return bytes(raw)


def make_app(api: OmpApi) -> Any:
    def endpoint(op: str) -> Callable[[Request], Any]:
        handler = getattr(api, f"op_{op}")

        async def serve(request: Request) -> Response:
            raw = await _read_body(request)
            if raw is None:
                err = ApiError("payload_too_large", f"the request body is over {MAX_BODY} bytes", status=413)
                return _response(api.error_out(err))
            req = Req(request.query_params, dict(request.path_params), raw, request.headers)
            return _response(await run_in_threadpool(api.dispatch, op, handler, req))

        return serve

    by_path: dict[str, dict[str, str]] = {}
    for path, method, op in api.ROUTES:
        by_path.setdefault(path, {})[method] = op
    routes = []
    for path, methods in by_path.items():
        for method, op in methods.items():
            routes.append(Route(path, endpoint(op), methods=[method]))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        if status == 405:
            err = ApiError("method_not_allowed", f"{request.method} is not allowed on {request.url.path}", status=405,
                           headers=dict(getattr(exc, "headers", None) or {}))
        elif status == 404:
            err = ApiError("not_found", f"no route {request.method} {request.url.path}", status=404)
        else:
            err = ApiError("internal_error" if status >= 500 else "bad_request", str(getattr(exc, "detail", exc)), status=status)
        return _response(api.error_out(err))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.router.redirect_slashes = False  # a redirect is never followed by clients; answer 404 instead
    return api.asgi(app)


# --- serving ---------------------------------------------------------------------------------------


class ServedTarget(HttpTarget):
    """An OMP server started in this process on loopback; close() stops it."""

    def __init__(self, base_url: str, stop: Callable[[], None], api: OmpApi, label: str, limits: Limits | None = None) -> None:
        super().__init__(base_url, {}, limits or Limits(), api.keys.global_key)
        self.description = f"{label} at {base_url}"
        self.api = api
        self.omp_facts = TargetFacts(ai_key_configured=api.provider is not None, credentials=api.keys.credentials())
        self.state_facts("omp", self.omp_facts)
        self._stop = stop

    def close(self) -> None:
        super().close()
        self._stop()
        self.api.store.close()


@dataclass
class ServerSpec:
    """How to build one server: the API class (a mutant overrides it), storage, provider, limits."""

    api_class: type[OmpApi] = OmpApi
    store_class: type[OmpStore] = OmpStore
    db: str = ":memory:"
    provider: Provider | None = None
    rate_limits: Mapping[str, RateLimit] | None = None
    keys: KeySet | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def build(self) -> OmpApi:
        return self.api_class(self.store_class(self.db), self.keys or KeySet.generate(), provider=self.provider,
                              rate_limits=self.rate_limits, **self.options)


def serve_target(spec: ServerSpec, label: str = "reference:omp") -> ServedTarget:
    from .server import serve_in_thread

    api = spec.build()
    base_url, stop = serve_in_thread(make_app(api))
    return ServedTarget(base_url, stop, api, label)


def reference_target(provider: Provider | None = None, rate_limits: Mapping[str, RateLimit] | None = None) -> ServedTarget:
    """`reference:omp`: the reference on 127.0.0.1:<ephemeral> with fresh keys and no AI key configured."""
    return serve_target(ServerSpec(provider=provider, rate_limits=rate_limits))


def serve_reference(host: str = "127.0.0.1", port: int = 8765, db: str = ":memory:") -> None:
    """`memconform serve omp`: print the base URL and every key once, then serve in the foreground."""
    from .server import serve_forever

    keys = KeySet.generate()
    api = ServerSpec(db=db, keys=keys).build()
    folder = Path(tempfile.mkdtemp(prefix="memconform-omp-"))
    credentials = folder / "credentials.json"
    credentials.write_text(json.dumps({"tool_keys": keys.tool_keys, "other_user_key": keys.other_user_key}, indent=1),
                           encoding="utf-8")
    credentials.chmod(0o600)
    base = f"http://{host}:{port}"
    print(f"memconform: OMP reference (OMP-Full) on {base}/v1 (SQLite {db}; no AI key configured)", flush=True)
    print(f"  global key:                    {keys.global_key}", flush=True)
    for tool, key in keys.tool_keys.items():
        print(f"  {'tool key (' + tool + '):':<30} {key}", flush=True)
    print(f"  other-user key:                {keys.other_user_key}", flush=True)
    print(f"  credentials file:              {credentials}", flush=True)
    print(f"  run: memconform run --suite omp --target {base} --api-key={keys.global_key} "
          f"--option omp.credentials={credentials} --option omp.ai_endpoints=no-key --report-dir /tmp/omp-report",
          flush=True)
    try:
        serve_forever(make_app(api), host, port)
    finally:
        credentials.unlink(missing_ok=True)
        folder.rmdir()
