"""Open Memory Protocol v0.1 (+0.2): the store and every operation, as plain functions.

State lives in this module (one process = one instance): a dict of users, each a dict of memory id
-> record. Every public function takes a `Principal` (who is calling, resolved from the bearer key)
and plain JSON-shaped values, and returns a JSON-shaped value or raises `OmpError`, which the HTTP
layer turns into the §4 error envelope. One re-entrant lock serialises all access.

Deliberate switchable bugs (for testing a conformance harness) are read once from the
SECOND_OPINION_BUGS environment variable at import; with it unset the behaviour follows the spec.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import secrets
import string
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

# ---------------------------------------------------------------------------------------------
# switchable bugs

KNOWN_BUGS = frozenset({
    "put_resets_omitted_fields",
    "tags_filter_or_logic",
    "filter_after_paging",
    "updated_at_sort_uses_created",
    "search_ignores_namespace",
    "import_duplicate_reuses_free_ids",
    "import_overwrite_loses_on_invalid",
    "delete_cross_user",
    "tool_key_list_unscoped",
    "error_envelope_bare",
    "stores_lone_surrogates",  # not planted: found by memconform's first run (bugs.json says so)
})


def _bugs_from_env() -> frozenset[str]:
    raw = os.environ.get("SECOND_OPINION_BUGS", "")
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    unknown = names - KNOWN_BUGS
    if unknown:
        raise SystemExit(f"SECOND_OPINION_BUGS names unknown bugs: {', '.join(sorted(unknown))}")
    return names


BUGS: frozenset[str] = _bugs_from_env()


def bug(name: str) -> bool:
    return name in BUGS


# ---------------------------------------------------------------------------------------------
# limits and constants (§2.1, §3.3)

SPEC_VERSION = "0.1"
SERVER_NAME = "omp-second-opinion"
COMPLIANCE_LEVEL = "OMP-Full"
MEMORY_TYPES = ("episodic", "semantic", "procedural")
MAX_CONTENT = 10_000
MAX_TAGS = 20
MAX_TAG_LEN = 50
MAX_NAMESPACE = 100
MAX_METADATA_KEYS = 10
MAX_EMBEDDING_DIMS = 8192
LIST_DEFAULT_LIMIT = 20
SEARCH_DEFAULT_LIMIT = 10
MAX_LIMIT = 100
SORTS = ("created_at_desc", "created_at_asc", "updated_at_desc")
SEARCH_MODES = ("keyword", "semantic", "hybrid")
CONFLICT_STRATEGIES = ("skip", "overwrite", "duplicate")
IMPORT_VERSIONS = ("0.1", "0.2")
EXTRACT_DEFAULT_TOOL = "omp-extract"
ID_ALPHABET = string.ascii_lowercase + string.digits
ID_RE = re.compile(r"^mem_[A-Za-z0-9]{16}$")
MEMORY_FIELDS = ("content", "type", "source", "tags", "namespace", "expires_at", "metadata", "embedding")
SERVER_FIELDS = ("id", "created_at", "updated_at")
SOURCE_FIELDS = ("tool", "session_id", "user_id", "timestamp")
EMBED_DIMS = 512
SEMANTIC_THRESHOLD = 0.15


class OmpError(Exception):
    """An error the API reports with the §4 envelope."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}

    def envelope(self) -> dict[str, Any]:
        if bug("error_envelope_bare") and self.code == "memory_not_found":
            return {"error": self.code}  # copied from the §3.3 examples instead of §4
        return {"error": self.code, "message": self.message, "details": self.details}


def invalid(message: str, field_name: str | None = None, **details: Any) -> OmpError:
    if field_name is not None:
        details = {"field": field_name, **details}
    return OmpError(422, "validation_error", message, details)


def not_found(memory_id: str) -> OmpError:
    return OmpError(404, "memory_not_found", "Memory ID does not exist", {"id": memory_id})


def forbidden(message: str, **details: Any) -> OmpError:
    return OmpError(403, "forbidden", message, details)


# ---------------------------------------------------------------------------------------------
# principals and keys (§3.2, §5 OMP-Full, §7)

@dataclass(frozen=True)
class Principal:
    user: str
    tool: str | None = None  # a per-tool key: read/write restricted to memories whose source.tool is this
    key_id: str = ""          # a short digest of the key, for the audit log (never the key itself)

    def may_touch(self, memory: dict[str, Any]) -> bool:
        return self.tool is None or memory["source"]["tool"] == self.tool


@dataclass
class Record:
    memory: dict[str, Any]
    seq: int
    created: datetime
    updated: datetime
    expires: datetime | None
    vec: list[float] | None = field(default=None, repr=False)


_LOCK = threading.RLock()
_USERS: dict[str, dict[str, Record]] = {}
_KEYS: dict[str, Principal] = {}   # sha256(key) -> principal
_SEQ = [0]
_CLOCK = [datetime(1970, 1, 1, tzinfo=timezone.utc)]
_AUDIT: list[Callable[[str, Principal, dict[str, Any]], None]] = []
_PERSIST: list[Callable[[], None]] = []


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_api_key() -> str:
    # 32 bytes of cryptographic randomness -> 43 url-safe characters, plus a recognisable prefix
    return "omp_" + secrets.token_urlsafe(32)


def register_key(key: str, user: str, tool: str | None = None) -> Principal:
    if len(key) < 32:
        raise ValueError("API keys must be at least 32 characters (§7)")
    principal = Principal(user=user, tool=tool, key_id=_digest(key)[:12])
    with _LOCK:
        _KEYS[_digest(key)] = principal
        _USERS.setdefault(user, {})
    return principal


def authenticate(header: str | None) -> Principal:
    if not header:
        raise OmpError(401, "unauthorized", "Missing API key: send Authorization: Bearer <api-key>",
                       headers={"WWW-Authenticate": 'Bearer realm="omp"'})
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise OmpError(401, "unauthorized", "Authorization must use the Bearer scheme",
                       headers={"WWW-Authenticate": 'Bearer realm="omp"'})
    principal = _KEYS.get(_digest(token))  # compares digests, so no timing signal about the key
    if principal is None:
        raise OmpError(401, "unauthorized", "Invalid API key",
                       headers={"WWW-Authenticate": 'Bearer realm="omp", error="invalid_token"'})
    return principal


def add_audit_sink(sink: Callable[[str, Principal, dict[str, Any]], None]) -> None:
    _AUDIT.append(sink)


def add_persist_hook(hook: Callable[[], None]) -> None:
    _PERSIST.append(hook)


def _audit(op: str, who: Principal, **info: Any) -> None:
    # write operations only; never the memory content (§7)
    for sink in _AUDIT:
        try:
            sink(op, who, info)
        except Exception:  # an audit sink must not break the write it records
            pass


def _persist() -> None:
    for hook in _PERSIST:
        hook()


# ---------------------------------------------------------------------------------------------
# time

def _now() -> datetime:
    return datetime.now(timezone.utc)


def _tick() -> datetime:
    """A strictly increasing server clock (ms resolution), so created_at orders creations."""
    with _LOCK:
        now = _now()
        t = now.replace(microsecond=now.microsecond // 1000 * 1000)
        if t <= _CLOCK[0]:
            t = _CLOCK[0] + timedelta(milliseconds=1)
        _CLOCK[0] = t
        return t


def fmt_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_utc(value: Any, field_name: str) -> datetime:
    """An ISO 8601 timestamp with a UTC designator (Z or +00:00); anything else is refused."""
    if not isinstance(value, str) or not value:
        raise invalid(f"{field_name} must be an ISO 8601 UTC timestamp string", field_name)
    if "T" not in value and " " not in value:
        raise invalid(f"{field_name} must be an ISO 8601 date-time, not a date", field_name, received=value[:64])
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(f"{field_name} is not an ISO 8601 timestamp", field_name, received=value[:64]) from None
    if t.tzinfo is None or t.utcoffset() != timedelta(0):
        raise invalid(f"{field_name} must be in UTC (end with Z or +00:00)", field_name, received=value[:64])
    return t


def _next_seq() -> int:
    _SEQ[0] += 1
    return _SEQ[0]


def new_memory_id(taken: dict[str, Record]) -> str:
    while True:
        mid = "mem_" + "".join(secrets.choice(ID_ALPHABET) for _ in range(16))
        if mid not in taken and not any(mid in recs for recs in _USERS.values()):
            return mid


# ---------------------------------------------------------------------------------------------
# validation (§2.1, §2.3)

def _check_string(value: Any, field_name: str, max_len: int | None = None, *, non_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise invalid(f"{field_name} must be a string", field_name)
    if non_empty and not value.strip():
        raise invalid(f"{field_name} must not be empty", field_name)
    if max_len is not None and len(value) > max_len:
        raise invalid(f"{field_name} is longer than {max_len} characters", field_name, length=len(value),
                      max=max_len)
    return value


def _check_source(value: Any, *, unknown: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid("source must be an object with tool and timestamp", "source")
    extra = sorted(set(value) - set(SOURCE_FIELDS))
    if extra and unknown == "reject":
        raise invalid("source has unknown fields", "source", unknown=extra)
    if "tool" not in value:
        raise invalid("source.tool is required", "source.tool")
    if "timestamp" not in value:
        raise invalid("source.timestamp is required", "source.timestamp")
    out: dict[str, Any] = {"tool": _check_string(value["tool"], "source.tool", 200)}
    for opt in ("session_id", "user_id"):
        if value.get(opt) is not None:
            out[opt] = _check_string(value[opt], f"source.{opt}", 500, non_empty=False)
    parse_utc(value["timestamp"], "source.timestamp")
    out["timestamp"] = value["timestamp"]
    return out


def _check_field(name: str, value: Any, *, unknown: str) -> Any:
    """Validate one provided Memory field; returns its stored value (None = remove the optional field)."""
    if name == "content":
        return _check_string(value, "content", MAX_CONTENT)
    if name == "type":
        if value not in MEMORY_TYPES:
            raise invalid(f"type must be one of {', '.join(MEMORY_TYPES)}", "type")
        return value
    if name == "source":
        return _check_source(value, unknown=unknown)
    if name == "tags":
        if not isinstance(value, list):
            raise invalid("tags must be an array of strings", "tags")
        if len(value) > MAX_TAGS:
            raise invalid(f"at most {MAX_TAGS} tags are allowed", "tags", count=len(value), max=MAX_TAGS)
        for i, tag in enumerate(value):
            _check_string(tag, f"tags[{i}]", MAX_TAG_LEN)
        return list(value)
    if name == "namespace":
        if value is None:
            return None
        return _check_string(value, "namespace", MAX_NAMESPACE)
    if name == "expires_at":
        if value is None:
            return None
        parse_utc(value, "expires_at")
        return value
    if name == "metadata":
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise invalid("metadata must be an object", "metadata")
        if len(value) > MAX_METADATA_KEYS:
            raise invalid(f"metadata may hold at most {MAX_METADATA_KEYS} keys", "metadata", count=len(value),
                          max=MAX_METADATA_KEYS)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise invalid("metadata values must be JSON-serialisable", "metadata") from None
        return copy.deepcopy(value)
    if name == "embedding":
        if value is None:
            return None
        if not isinstance(value, list) or len(value) > MAX_EMBEDDING_DIMS:
            raise invalid(f"embedding must be an array of at most {MAX_EMBEDDING_DIMS} numbers", "embedding")
        for x in value:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise invalid("embedding must contain finite numbers only", "embedding")
        return list(value)
    raise AssertionError(name)


def _clean(body: Any, *, required: bool, unknown: str, allowed_extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Validate the Memory fields present in `body`. unknown: 'reject' or 'drop' (import)."""
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    extra = sorted(set(body) - set(MEMORY_FIELDS) - set(SERVER_FIELDS) - set(allowed_extra))
    if extra and unknown == "reject":
        raise invalid("unknown fields (tool-specific data belongs in metadata)", None, unknown=extra)
    if required:
        for name in ("content", "type", "source"):
            if name not in body:
                raise invalid(f"{name} is required", name)
    return {name: _check_field(name, body[name], unknown=unknown) for name in MEMORY_FIELDS if name in body}


def _expiry(memory: dict[str, Any]) -> datetime | None:
    return parse_utc(memory["expires_at"], "expires_at") if memory.get("expires_at") else None


def _public(rec: Record) -> dict[str, Any]:
    return copy.deepcopy(rec.memory)


def _build(fields: dict[str, Any], mid: str, created: str, updated: str) -> dict[str, Any]:
    memory: dict[str, Any] = {
        "id": mid,
        "content": fields["content"],
        "type": fields["type"],
        "source": fields["source"],
        "tags": fields.get("tags", []),
    }
    if fields.get("namespace") is not None:
        memory["namespace"] = fields["namespace"]
    memory["created_at"] = created
    memory["updated_at"] = updated
    memory["expires_at"] = fields.get("expires_at")
    if fields.get("embedding") is not None:
        memory["embedding"] = fields["embedding"]
    memory["metadata"] = fields.get("metadata", {})
    return memory


def _live(user: str) -> dict[str, Record]:
    """The user's memories with expired ones purged (an expired memory is no longer served)."""
    recs = _USERS.setdefault(user, {})
    now = _now()
    gone = [mid for mid, rec in recs.items() if rec.expires is not None and rec.expires <= now]
    for mid in gone:
        del recs[mid]
    return recs


# ---------------------------------------------------------------------------------------------
# CRUD (§3.3)

def create_memory(who: Principal, body: Any) -> dict[str, Any]:
    fields = _clean(body, required=True, unknown="reject")
    if not who.may_touch(fields):
        raise forbidden(f"this key may only write memories whose source.tool is {who.tool!r}", tool=who.tool)
    expires = _expiry(fields)
    if expires is not None and expires <= _now():
        raise invalid("expires_at must be in the future", "expires_at")
    with _LOCK:
        recs = _live(who.user)
        t = _tick()
        mid = new_memory_id(recs)
        memory = _build(fields, mid, fmt_time(t), fmt_time(t))
        recs[mid] = Record(memory, _next_seq(), t, t, expires)
        _persist()
        _audit("create", who, id=mid, tool=memory["source"]["tool"])
        return _public(recs[mid])


def _get_record(who: Principal, memory_id: str) -> Record:
    rec = _live(who.user).get(memory_id)
    if rec is None:
        raise not_found(memory_id)
    if not who.may_touch(rec.memory):
        raise forbidden(f"this key may only access memories whose source.tool is {who.tool!r}", tool=who.tool)
    return rec


def get_memory(who: Principal, memory_id: str) -> dict[str, Any]:
    with _LOCK:
        return _public(_get_record(who, memory_id))


def update_memory(who: Principal, memory_id: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    with _LOCK:
        rec = _get_record(who, memory_id)
        current = rec.memory
        # id and created_at cannot be changed; echoing the current value back is harmless
        for fixed in ("id", "created_at"):
            if fixed in body and body[fixed] != current[fixed]:
                raise invalid(f"{fixed} cannot be changed", fixed)
        patch = dict(body)
        if isinstance(patch.get("source"), dict):  # a partial source updates only the keys it gives
            patch["source"] = {**current["source"], **patch["source"]}
        fields = _clean(patch, required=False, unknown="reject")
        if bug("put_resets_omitted_fields"):
            base = {**current, "tags": [], "metadata": {}}
            base.pop("namespace", None)
        else:
            base = dict(current)
        merged = {**base, **fields}
        if "namespace" in fields and fields["namespace"] is None:
            merged.pop("namespace", None)
        if not who.may_touch(merged):
            raise forbidden(f"this key may only write memories whose source.tool is {who.tool!r}", tool=who.tool)
        expires = _expiry(merged)
        if "expires_at" in fields and expires is not None and expires <= _now():
            raise invalid("expires_at must be in the future", "expires_at")
        candidate = _build(merged, current["id"], current["created_at"], current["updated_at"])
        if candidate == current:
            return _public(rec)  # nothing changed: updated_at stays
        t = _tick()
        new = _build(merged, current["id"], current["created_at"], fmt_time(t))
        rec.memory, rec.updated, rec.expires, rec.vec = new, t, expires, None
        _persist()
        _audit("update", who, id=memory_id, fields=sorted(fields))
        return _public(rec)


def delete_memory(who: Principal, memory_id: str) -> None:
    with _LOCK:
        if bug("delete_cross_user"):
            # looks the id up in every user's store, as if ids were one global table
            for user, recs in _USERS.items():
                rec = recs.get(memory_id)
                if rec is not None and who.may_touch(rec.memory):
                    del recs[memory_id]
                    _persist()
                    _audit("delete", who, id=memory_id)
                    return
            raise not_found(memory_id)
        _get_record(who, memory_id)
        del _USERS[who.user][memory_id]
        _persist()
        _audit("delete", who, id=memory_id)


# ---------------------------------------------------------------------------------------------
# list (§3.3 GET /v1/memories)

def _int_param(raw: str | None, name: str, default: int, minimum: int) -> int:
    if raw is None or raw == "":
        return default
    if not re.fullmatch(r"[+-]?\d{1,12}", raw.strip()):
        raise invalid(f"{name} must be an integer", name, received=raw[:32])
    value = int(raw)
    if value < minimum:
        raise invalid(f"{name} must be at least {minimum}", name, received=value)
    return value


def _split_tags(raw: str | None) -> list[str]:
    return [t.strip() for t in (raw or "").split(",") if t.strip()]


def _matches(memory: dict[str, Any], *, type_: str | None, tool: str | None, tags: list[str],
             namespace: str | None) -> bool:
    if type_ is not None and memory["type"] != type_:
        return False
    if tool is not None and memory["source"]["tool"] != tool:
        return False
    if namespace is not None and memory.get("namespace") != namespace:
        return False
    if tags:
        have = set(memory["tags"])
        if bug("tags_filter_or_logic"):
            return any(t in have for t in tags)
        return all(t in have for t in tags)
    return True


def _sort(records: list[Record], sort: str) -> list[Record]:
    if sort == "created_at_asc":
        return sorted(records, key=lambda r: (r.created, r.seq))
    if sort == "updated_at_desc" and not bug("updated_at_sort_uses_created"):
        return sorted(records, key=lambda r: (r.updated, r.seq), reverse=True)
    return sorted(records, key=lambda r: (r.created, r.seq), reverse=True)


def list_memories(who: Principal, query: dict[str, str]) -> dict[str, Any]:
    type_ = query.get("type") or None
    if type_ is not None and type_ not in MEMORY_TYPES:
        raise invalid(f"type must be one of {', '.join(MEMORY_TYPES)}", "type")
    tool = query.get("tool") or None
    namespace = query.get("namespace")
    namespace = namespace if namespace not in (None, "") else None
    tags = _split_tags(query.get("tags"))
    limit = min(_int_param(query.get("limit"), "limit", LIST_DEFAULT_LIMIT, 1), MAX_LIMIT)
    offset = _int_param(query.get("offset"), "offset", 0, 0)
    sort = query.get("sort") or "created_at_desc"
    if sort not in SORTS:
        raise invalid(f"sort must be one of {', '.join(SORTS)}", "sort")
    scoped = who.tool is not None and not bug("tool_key_list_unscoped")
    if scoped:
        if tool is not None and tool != who.tool:
            raise forbidden(f"this key may only read memories whose source.tool is {who.tool!r}", tool=who.tool)
        tool = who.tool
    with _LOCK:
        records = _sort(list(_live(who.user).values()), sort)
        wanted = dict(type_=type_, tool=tool, tags=tags, namespace=namespace)
        if bug("filter_after_paging"):
            page = records[offset:offset + limit]
            memories = [_public(r) for r in page if _matches(r.memory, **wanted)]
            total = sum(1 for r in records if _matches(r.memory, **wanted))
        else:
            hits = [r for r in records if _matches(r.memory, **wanted)]
            memories = [_public(r) for r in hits[offset:offset + limit]]
            total = len(hits)
    return {"memories": memories, "total": total, "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------------------------
# search (§3.3 POST /v1/memories/search)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def embed(text: str) -> list[float]:
    """A small local embedding: hashed words plus hashed character trigrams, L2-normalised."""
    vec = [0.0] * EMBED_DIMS
    for word in _words(text):
        feats = [("w", word, 1.0)]
        padded = f"^{word}$"
        feats += [("g", padded[i:i + 3], 0.5) for i in range(len(padded) - 2)]
        for kind, feat, weight in feats:
            h = hashlib.blake2b(f"{kind}:{feat}".encode(), digest_size=8).digest()
            vec[int.from_bytes(h[:4], "little") % EMBED_DIMS] += weight
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else vec


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def _keyword_score(terms: list[str], content: str) -> float:
    """Every query term must occur in the content (case-insensitive, substring of the text)."""
    text = content.casefold()
    score = 0.0
    for term in terms:
        n = text.count(term)
        if n == 0:
            return 0.0
        score += 1.0 + math.log(n)
    return score


def search_memories(who: Principal, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    q = body.get("q")
    if not isinstance(q, str) or not q.strip():
        raise invalid("q must be a non-empty string", "q")
    if len(q) > MAX_CONTENT:
        raise invalid(f"q is longer than {MAX_CONTENT} characters", "q")
    mode = body.get("mode", "keyword")
    if mode is None:
        mode = "keyword"
    if mode not in SEARCH_MODES:
        raise invalid(f"mode must be one of {', '.join(SEARCH_MODES)}", "mode")
    type_ = body.get("type")
    if type_ is not None and type_ not in MEMORY_TYPES:
        raise invalid(f"type must be one of {', '.join(MEMORY_TYPES)}", "type")
    tags = body.get("tags")
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise invalid("tags must be an array of strings", "tags")
    namespace = body.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise invalid("namespace must be a string", "namespace")
    limit = body.get("limit", SEARCH_DEFAULT_LIMIT)
    if limit is None:
        limit = SEARCH_DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise invalid("limit must be a positive integer", "limit")
    limit = min(limit, MAX_LIMIT)
    if bug("search_ignores_namespace"):
        namespace = None
    terms = list(dict.fromkeys(_words(q)))
    if not terms:
        raise invalid("q holds no searchable words", "q")
    qvec = embed(q) if mode != "keyword" else None
    with _LOCK:
        scored: list[tuple[float, Record]] = []
        for rec in _live(who.user).values():
            m = rec.memory
            if not who.may_touch(m):
                continue
            if not _matches(m, type_=type_, tool=None, tags=[t for t in tags if t], namespace=namespace):
                continue
            kw = _keyword_score(terms, m["content"]) if mode != "semantic" else 0.0
            sim = 0.0
            if qvec is not None:
                if rec.vec is None:
                    rec.vec = embed(m["content"])
                sim = _cosine(qvec, rec.vec)
            if mode == "keyword":
                score, hit = kw, kw > 0
            elif mode == "semantic":
                score, hit = sim, sim >= SEMANTIC_THRESHOLD
            else:
                kw_norm = kw / (kw + 1.0)
                score, hit = 0.5 * kw_norm + 0.5 * max(sim, 0.0), kw > 0 or sim >= SEMANTIC_THRESHOLD
            if hit:
                scored.append((score, rec))
        scored.sort(key=lambda sr: (-sr[0], -sr[1].created.timestamp(), -sr[1].seq))
        memories = [_public(rec) for _, rec in scored[:limit]]
    return {"memories": memories, "total": len(scored), "mode_used": mode}


# ---------------------------------------------------------------------------------------------
# export / import (§3.3)

def export_memories(who: Principal) -> dict[str, Any]:
    with _LOCK:
        records = sorted(_live(who.user).values(), key=lambda r: (r.created, r.seq))
        memories = [_public(r) for r in records if who.may_touch(r.memory)]
    return {"omp_version": SPEC_VERSION, "exported_at": fmt_time(_now()), "server": SERVER_NAME,
            "memories": memories}


def _item_error(index: int, item: Any, err: OmpError) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "error": err.code, "message": err.message}
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        out["id"] = item["id"][:64]
    if err.details:
        out["details"] = err.details
    return out


def import_memories(who: Principal, body: Any, conflict: str | None) -> dict[str, Any]:
    conflict = conflict or "skip"
    if conflict not in CONFLICT_STRATEGIES:
        raise invalid(f"conflict must be one of {', '.join(CONFLICT_STRATEGIES)}", "conflict")
    if not isinstance(body, dict):
        raise invalid("the request body must be an OMP export object")
    version = body.get("omp_version")
    if version is not None and version not in IMPORT_VERSIONS:
        raise invalid(f"unsupported omp_version (supported: {', '.join(IMPORT_VERSIONS)})", "omp_version",
                      received=str(version)[:32])
    items = body.get("memories")
    if not isinstance(items, list):
        raise invalid("memories must be an array", "memories")
    imported = skipped = 0
    errors: list[dict[str, Any]] = []
    with _LOCK:
        recs = _live(who.user)
        now = _now()
        for index, item in enumerate(items):
            try:
                incoming = item.get("id") if isinstance(item, dict) else None
                if bug("import_overwrite_loses_on_invalid") and conflict == "overwrite" \
                        and isinstance(incoming, str) and incoming in recs and who.may_touch(recs[incoming].memory):
                    del recs[incoming]  # "make room" before the new version has been validated
                fields = _clean(item, required=True, unknown="drop")
                if not who.may_touch(fields):
                    raise forbidden(f"this key may only write memories whose source.tool is {who.tool!r}",
                                    tool=who.tool)
                t = _tick()
                created = parse_utc(item["created_at"], "created_at") if item.get("created_at") is not None else t
                updated = parse_utc(item["updated_at"], "updated_at") if item.get("updated_at") is not None \
                    else created
                if conflict != "duplicate" or bug("import_duplicate_reuses_free_ids"):
                    if incoming is not None and (not isinstance(incoming, str) or not ID_RE.match(incoming)):
                        raise invalid('id must be "mem_" followed by 16 alphanumeric characters', "id")
                expires = _expiry(fields)
                if expires is not None and expires <= now:
                    skipped += 1  # already expired: nothing to serve
                    continue
                if conflict == "duplicate":
                    if bug("import_duplicate_reuses_free_ids") and incoming and incoming not in recs:
                        mid = incoming
                    else:
                        mid = new_memory_id(recs)
                elif incoming is None:
                    mid = new_memory_id(recs)
                elif incoming in recs:
                    if conflict == "skip":
                        skipped += 1
                        continue
                    if not who.may_touch(recs[incoming].memory):
                        raise forbidden(f"this key may only write memories whose source.tool is {who.tool!r}",
                                        tool=who.tool)
                    mid = incoming
                else:
                    mid = incoming
                created_s = item["created_at"] if item.get("created_at") is not None else fmt_time(created)
                updated_s = item["updated_at"] if item.get("updated_at") is not None else created_s
                memory = _build(fields, mid, created_s, updated_s)
                recs[mid] = Record(memory, _next_seq(), created, updated, expires)
                imported += 1
            except OmpError as err:
                errors.append(_item_error(index, item, err))
        if imported:
            _persist()
        _audit("import", who, conflict=conflict, imported=imported, skipped=skipped, errors=len(errors))
    return {"imported": imported, "skipped": skipped, "errors": errors}


# ---------------------------------------------------------------------------------------------
# extract / compress (§3.3, v0.2): a local, deterministic, rule-based engine; no network, ever

_SPEAKER = re.compile(r"(?:^|(?<=[.!?\n]))\s*([A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}):\s+")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_CUE = re.compile(r"\b(i|i'm|i've|i'd|my|we|our|always|never|usually|prefer|prefers|only|like|love|hate|use|uses)\b",
                  re.IGNORECASE)
_PROCEDURAL = re.compile(r"\b(always|before|after|then|workflow|process|steps?|first)\b", re.IGNORECASE)
_EPISODIC = re.compile(r"\b(yesterday|today|last|ago|deployed|happened|did|was|were|\d{4}-\d{2}-\d{2})\b",
                       re.IGNORECASE)
_FIRST_PERSON = [(re.compile(r"^I'm\b"), "User is"), (re.compile(r"^I've\b"), "User has"),
                 (re.compile(r"^I\b"), "User"), (re.compile(r"^[Mm]y\b"), "User's"),
                 (re.compile(r"\bmy\b"), "their"), (re.compile(r"\bme\b"), "them")]


_THIRD_PERSON = re.compile(r"^(User (?:always |never |usually |only |often )?)(use|prefer|like|love|hate|run|want|need|"
                           r"work|write|deploy|test|commit|avoid|read|keep)\b")


def _utterances(transcript: str) -> list[tuple[str | None, str]]:
    marks = list(_SPEAKER.finditer(transcript))
    if not marks:
        return [(None, transcript)]
    out: list[tuple[str | None, str]] = []
    if transcript[:marks[0].start()].strip():
        out.append((None, transcript[:marks[0].start()]))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(transcript)
        out.append((m.group(1), transcript[m.end():end]))
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _ai_settings(who: Principal, body: Any) -> tuple[str, str]:
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    transcript = body.get("transcript")
    if not isinstance(transcript, str) or not transcript.strip():
        raise invalid("transcript must be a non-empty string", "transcript")
    for opt in ("provider", "api_key", "source_tool"):
        if body.get(opt) is not None and not isinstance(body[opt], str):
            raise invalid(f"{opt} must be a string", opt)
    tool = body.get("source_tool") or EXTRACT_DEFAULT_TOOL
    _check_string(tool, "source_tool", 200)
    if who.tool is not None and tool != who.tool:
        raise forbidden(f"this key may only write memories whose source.tool is {who.tool!r}", tool=who.tool)
    api_key = body.get("api_key") or os.environ.get("OMP_AI_API_KEY")
    if not api_key:
        raise OmpError(422, "no_api_key", "No AI API key configured: pass api_key or set OMP_AI_API_KEY")
    # provider (body, OMP_AI_PROVIDER, default "anthropic") is accepted but never contacted: the
    # "AI" of this server is the local rule-based engine below.
    return transcript, tool


def _store_generated(who: Principal, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    with _LOCK:
        recs = _live(who.user)
        for fields in items:
            t = _tick()
            mid = new_memory_id(recs)
            memory = _build(fields, mid, fmt_time(t), fmt_time(t))
            recs[mid] = Record(memory, _next_seq(), t, t, None)
            out.append(_public(recs[mid]))
        _persist()
    return out


def extract(who: Principal, body: Any) -> dict[str, Any]:
    transcript, tool = _ai_settings(who, body)
    stamp = fmt_time(_now())
    seen: set[str] = set()
    items: list[dict[str, Any]] = []
    for _speaker, text in _utterances(transcript):
        for sentence in _sentences(text):
            if sentence.endswith("?") or not _CUE.search(sentence) or len(_words(sentence)) < 2:
                continue
            content = sentence.rstrip(".!")
            for pattern, repl in _FIRST_PERSON:
                content = pattern.sub(repl, content)
            content = _THIRD_PERSON.sub(lambda m: m.group(1) + m.group(2) + "s", content)
            content = content[:MAX_CONTENT]
            if content.casefold() in seen:
                continue
            seen.add(content.casefold())
            kind = "procedural" if _PROCEDURAL.search(sentence) and not re.search(r"\buse", sentence, re.I) \
                else "episodic" if _EPISODIC.search(sentence) else "semantic"
            items.append({"content": content, "type": kind, "source": {"tool": tool, "timestamp": stamp},
                          "tags": ["extracted"], "metadata": {"extracted_by": "rule-based"}})
            if len(items) >= 50:
                break
    memories = _store_generated(who, items)
    _audit("extract", who, ids=[m["id"] for m in memories], tool=tool)
    return {"extracted": len(memories), "memories": memories}


def compress(who: Principal, body: Any) -> dict[str, Any]:
    transcript, tool = _ai_settings(who, body)
    utterances = _utterances(transcript)
    speakers = list(dict.fromkeys(s for s, _ in utterances if s))
    sentences = [s for _, text in utterances for s in _sentences(text)]
    summary = " ".join(sentences)
    if len(summary) > 600:
        summary = summary[:597].rsplit(" ", 1)[0] + "..."
    who_spoke = f" between {', '.join(speakers)}" if speakers else ""
    content = f"Session summary ({len(sentences)} statements{who_spoke}): {summary}"[:MAX_CONTENT]
    item = {"content": content, "type": "episodic", "source": {"tool": tool, "timestamp": fmt_time(_now())},
            "tags": ["session-summary"], "metadata": {"compressed_by": "rule-based"}}
    memory = _store_generated(who, [item])[0]
    _audit("compress", who, id=memory["id"], tool=tool)
    return {"memory": memory}


# ---------------------------------------------------------------------------------------------
# health (§3.3, §5)

def health() -> dict[str, Any]:
    with _LOCK:
        count = sum(len(_live(user)) for user in list(_USERS))
    return {"status": "ok", "version": SPEC_VERSION, "memories_count": count,
            "compliance_level": COMPLIANCE_LEVEL,
            "compliance_levels": ["OMP-Core", "OMP-Search", "OMP-Full"],
            "search_modes": list(SEARCH_MODES)}


# ---------------------------------------------------------------------------------------------
# optional persistence: a JSON snapshot written atomically after every write

def snapshot() -> dict[str, Any]:
    with _LOCK:
        return {"seq": _SEQ[0], "users": {u: [{"seq": r.seq, "memory": r.memory} for r in recs.values()]
                                          for u, recs in _USERS.items()}}


def restore(state: dict[str, Any]) -> None:
    with _LOCK:
        _USERS.clear()
        for user, rows in state.get("users", {}).items():
            recs = _USERS.setdefault(user, {})
            for row in rows:
                m = row["memory"]
                created = parse_utc(m["created_at"], "created_at")
                updated = parse_utc(m["updated_at"], "updated_at")
                recs[m["id"]] = Record(m, row["seq"], created, updated, _expiry(m))
                _CLOCK[0] = max(_CLOCK[0], created, updated)
        _SEQ[0] = max(_SEQ[0], int(state.get("seq", 0)))
