"""Blind OMP-Core server (Open Memory Protocol v0.1), stdlib only, in-memory store.

Start:  OMP_API_KEY=<>=32 chars> python server.py [--port 0] [--port-file FILE]
Bugs:   BUG=<name> (see BUGS.md)
"""
import argparse
import hmac
import json
import os
import re
import secrets
import string
import sys
import threading
import uuid
from datetime import datetime, timezone, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs, unquote

BUG = os.environ.get("BUG", "")
MAX_BODY = 16 * 1024 * 1024
TYPES = ("episodic", "semantic", "procedural")
SORTS = ("created_at_desc", "created_at_asc", "updated_at_desc")
ID_RE = re.compile(r"^mem_[A-Za-z0-9]{16}$")
ISO_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"
)
ALNUM = string.ascii_lowercase + string.digits


class ApiError(Exception):
    def __init__(self, status, code, message, details=None):
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details or {}


def verr(message, **details):
    return ApiError(422, "validation_error", message, details)


def now_dt():
    return datetime.now(timezone.utc)


def fmt(dt):
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def parse_iso(s):
    if not isinstance(s, str):
        return None
    m = ISO_RE.match(s)
    if not m:
        return None
    try:
        txt = s.replace("Z", "+00:00")
        frac = m.group(7)
        if frac and len(frac) > 7:  # python wants <= 6 digits
            txt = txt.replace(frac, frac[:7])
        return datetime.fromisoformat(txt)
    except ValueError:
        return None


def to_utc(s):
    """Validate an ISO 8601 timestamp and return it in UTC ('Z'); None if invalid."""
    d = parse_iso(s)
    if d is None:
        return None
    if s.endswith("Z"):
        return s
    d = d.astimezone(timezone.utc)
    base = d.strftime("%Y-%m-%dT%H:%M:%S")
    if d.microsecond:
        base += (".%06d" % d.microsecond).rstrip("0")
    return base + "Z"


def new_id():
    if BUG == "id_short":
        return "mem_" + uuid.uuid4().hex[:12]
    return "mem_" + "".join(secrets.choice(ALNUM) for _ in range(16))


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.mems = {}  # id -> dict
        self.seq = {}  # id -> insertion sequence (tie-break)
        self.counter = 0
        self.last_ts = None

    def stamp(self):
        """Strictly increasing timestamps (ms precision) so updated_at always moves."""
        t = now_dt()
        t = t.replace(microsecond=(t.microsecond // 1000) * 1000)
        if self.last_ts is not None and t <= self.last_ts:
            t = self.last_ts + timedelta(milliseconds=1)
        self.last_ts = t
        return fmt(t)

    def put(self, mem, new=True):
        if new or mem["id"] not in self.seq:
            self.counter += 1
            self.seq[mem["id"]] = self.counter
        self.mems[mem["id"]] = mem

    def live(self):
        n = now_dt()
        out = []
        for m in self.mems.values():
            exp = m.get("expires_at")
            if exp is not None:
                d = parse_iso(exp)
                if d is not None and d <= n:
                    continue
            out.append(m)
        return out

    def get(self, mid):
        m = self.mems.get(mid)
        if m is None:
            return None
        exp = m.get("expires_at")
        if exp is not None:
            d = parse_iso(exp)
            if d is not None and d <= now_dt():
                return None
        return m


STORE = Store()


# ---------------------------------------------------------------- validation
def v_content(v):
    if not isinstance(v, str):
        raise verr("content must be a string", field="content")
    if v.strip() == "":
        raise verr("content must not be empty", field="content")
    if BUG == "content_limit":
        if len(v) >= 10000:
            raise verr("content exceeds 10,000 characters", field="content")
    elif len(v) > 10000:
        raise verr("content exceeds 10,000 characters", field="content")
    return v


def v_type(v):
    if v not in TYPES:
        raise verr("type must be one of episodic, semantic, procedural", field="type")
    return v


def v_source(v):
    if not isinstance(v, dict):
        raise verr("source must be an object", field="source")
    tool = v.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        raise verr("source.tool must be a non-empty string", field="source.tool")
    ts = to_utc(v.get("timestamp"))
    if ts is None:
        raise verr("source.timestamp must be an ISO 8601 UTC timestamp", field="source.timestamp")
    out = {"tool": tool, "timestamp": ts}
    for k in ("session_id", "user_id"):
        if k in v and v[k] is not None:
            if not isinstance(v[k], str):
                raise verr("source.%s must be a string" % k, field="source." + k)
            out[k] = v[k]
    return out


def v_tags(v):
    if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
        raise verr("tags must be an array of strings", field="tags")
    if len(v) > 20:
        raise verr("at most 20 tags", field="tags")
    for t in v:
        if len(t) > 50:
            raise verr("a tag is at most 50 characters", field="tags")
    return list(v)


def v_namespace(v):
    if not isinstance(v, str):
        raise verr("namespace must be a string", field="namespace")
    if len(v) > 100:
        raise verr("namespace is at most 100 characters", field="namespace")
    return v


def v_expires(v):
    if v is None:
        return None
    u = to_utc(v)
    if u is None:
        raise verr("expires_at must be an ISO 8601 UTC timestamp or null", field="expires_at")
    return u


def v_embedding(v):
    if not isinstance(v, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in v
    ):
        raise verr("embedding must be an array of numbers", field="embedding")
    return list(v)


def v_metadata(v):
    if not isinstance(v, dict):
        raise verr("metadata must be an object", field="metadata")
    if len(v) > 10:
        raise verr("metadata has at most 10 keys", field="metadata")
    return dict(v)


FIELD_VALIDATORS = {
    "content": v_content,
    "type": v_type,
    "source": v_source,
    "tags": v_tags,
    "namespace": v_namespace,
    "expires_at": v_expires,
    "embedding": v_embedding,
    "metadata": v_metadata,
}


def build_memory(body, mid, created, updated):
    if not isinstance(body, dict):
        raise verr("request body must be a JSON object")
    for req in ("content", "type", "source"):
        if req not in body:
            raise verr("%s is required" % req, field=req)
    mem = {"id": mid}
    mem["content"] = v_content(body["content"])
    mem["type"] = v_type(body["type"])
    mem["source"] = v_source(body["source"])
    mem["tags"] = v_tags(body["tags"]) if body.get("tags") is not None else []
    if body.get("namespace") is not None:
        mem["namespace"] = v_namespace(body["namespace"])
    mem["created_at"] = created
    mem["updated_at"] = updated
    mem["expires_at"] = v_expires(body.get("expires_at"))
    if body.get("embedding") is not None:
        mem["embedding"] = v_embedding(body["embedding"])
    mem["metadata"] = v_metadata(body["metadata"]) if body.get("metadata") is not None else {}
    return mem


def public(mem):
    return json.loads(json.dumps(mem))


def tag_match(mem, tags):
    if not tags:
        return True
    have = set(mem.get("tags", []))
    if BUG == "tags_or":
        return any(t in have for t in tags)
    return all(t in have for t in tags)


def parse_int(qs, name, default):
    vals = qs.get(name)
    if not vals:
        return default
    v = vals[-1].strip()
    if not re.fullmatch(r"[+-]?\d+", v):
        raise verr("%s must be an integer" % name, field=name)
    return int(v)


# ---------------------------------------------------------------- handlers
def h_create(req):
    body = req.json_body()
    with STORE.lock:
        ts = STORE.stamp()
        mid = new_id()
        while mid in STORE.mems:
            mid = new_id()
        mem = build_memory(body, mid, ts, ts)
        STORE.put(mem)
        return 201, public(mem)


def h_list(req):
    qs = req.qs
    limit = parse_int(qs, "limit", 20)
    offset = parse_int(qs, "offset", 0)
    if limit < 1:
        raise verr("limit must be at least 1", field="limit")
    limit = min(limit, 100)
    if offset < 0:
        raise verr("offset must not be negative", field="offset")
    sort = (qs.get("sort") or ["created_at_desc"])[-1]
    if sort not in SORTS:
        raise verr("sort must be one of " + ", ".join(SORTS), field="sort")
    typ = (qs.get("type") or [None])[-1]
    if typ is not None and typ not in TYPES:
        raise verr("type must be one of episodic, semantic, procedural", field="type")
    tool = (qs.get("tool") or [None])[-1]
    ns = (qs.get("namespace") or [None])[-1]
    tags_raw = (qs.get("tags") or [None])[-1]
    tags = [t.strip() for t in tags_raw.split(",") if t.strip()] if tags_raw else []
    with STORE.lock:
        items = [
            m for m in STORE.live()
            if (typ is None or m["type"] == typ)
            and (tool is None or m["source"]["tool"] == tool)
            and (ns is None or m.get("namespace") == ns)
            and tag_match(m, tags)
        ]
        if sort == "created_at_asc":
            items.sort(key=lambda m: (parse_iso(m["created_at"]), STORE.seq[m["id"]]))
        elif sort == "created_at_desc":
            items.sort(key=lambda m: (parse_iso(m["created_at"]), STORE.seq[m["id"]]), reverse=True)
        else:
            items.sort(key=lambda m: (parse_iso(m["updated_at"]), STORE.seq[m["id"]]), reverse=True)
        page = items[offset:offset + limit]
        return 200, {"memories": [public(m) for m in page], "total": len(items),
                     "limit": limit, "offset": offset}


def not_found(mid):
    return ApiError(404, "memory_not_found", "Memory %s does not exist" % mid, {"id": mid})


def h_get(req, mid):
    with STORE.lock:
        m = STORE.get(mid)
        if m is None:
            raise not_found(mid)
        return 200, public(m)


def h_put(req, mid):
    body = req.json_body()
    if not isinstance(body, dict):
        raise verr("request body must be a JSON object")
    with STORE.lock:
        m = STORE.get(mid)
        if m is None:
            raise not_found(mid)
        new = dict(m)
        if BUG == "put_replaces":
            new["tags"] = []
            new["metadata"] = {}
            new.pop("namespace", None)
            new["expires_at"] = None
            new.pop("embedding", None)
        for k, fn in FIELD_VALIDATORS.items():
            if k in body:
                if body[k] is None and k in ("namespace", "expires_at", "embedding", "metadata", "tags"):
                    if k == "expires_at":
                        new[k] = None
                    elif k == "tags":
                        new[k] = []
                    elif k == "metadata":
                        new[k] = {}
                    else:
                        new.pop(k, None)
                    continue
                new[k] = fn(body[k])
        new["updated_at"] = STORE.stamp()
        STORE.put(new, new=False)
        return 200, public(new)


def h_delete(req, mid):
    with STORE.lock:
        if STORE.get(mid) is None:
            raise not_found(mid)
        del STORE.mems[mid]
        STORE.seq.pop(mid, None)
    if BUG == "delete_200":
        return 200, {"deleted": True, "id": mid}
    return 204, None


def keyword_match(content, terms):
    low = content.lower()
    return all(t in low for t in terms)


def h_search(req):
    body = req.json_body()
    if not isinstance(body, dict):
        raise verr("request body must be a JSON object")
    q = body.get("q")
    if not isinstance(q, str) or not q.strip():
        raise verr("q must be a non-empty string", field="q")
    mode = body.get("mode", "keyword")
    if mode is None:
        mode = "keyword"
    if mode not in ("keyword", "semantic", "hybrid"):
        raise verr("mode must be keyword, semantic or hybrid", field="mode")
    if mode != "keyword":
        raise verr("mode %s is not supported by this server (OMP-Core: keyword only)" % mode,
                   field="mode")
    typ = body.get("type")
    if typ is not None:
        v_type(typ)
    tags = body.get("tags")
    tags = v_tags(tags) if tags is not None else []
    ns = body.get("namespace")
    if ns is not None:
        v_namespace(ns)
    limit = body.get("limit", 20)
    if limit is None:
        limit = 20
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise verr("limit must be an integer", field="limit")
    if limit < 1:
        raise verr("limit must be at least 1", field="limit")
    limit = min(limit, 100)
    terms = [t.lower() for t in q.split()]
    with STORE.lock:
        hits = []
        for m in STORE.live():
            if typ is not None and m["type"] != typ:
                continue
            if ns is not None and m.get("namespace") != ns:
                continue
            if not tag_match(m, tags):
                continue
            if not keyword_match(m["content"], terms):
                continue
            score = sum(m["content"].lower().count(t) for t in terms)
            hits.append((score, parse_iso(m["created_at"]), STORE.seq[m["id"]], m))
        hits.sort(key=lambda h: (h[0], h[1], h[2]), reverse=True)
        return 200, {"memories": [public(h[3]) for h in hits[:limit]], "total": len(hits),
                     "mode_used": "keyword"}


def h_export(req):
    with STORE.lock:
        items = sorted(STORE.live(), key=lambda m: STORE.seq[m["id"]])
        return 200, {"omp_version": "0.1", "exported_at": fmt(now_dt()),
                     "server": "blind-omp-server/0.1", "memories": [public(m) for m in items]}


def h_import(req):
    conflict = (req.qs.get("conflict") or [None])[-1]
    if conflict is None:
        conflict = "overwrite" if BUG == "import_overwrite_default" else "skip"
    if conflict not in ("skip", "overwrite", "duplicate"):
        raise verr("conflict must be skip, overwrite or duplicate", field="conflict")
    body = req.json_body()
    if not isinstance(body, dict):
        raise verr("request body must be an OMP export JSON object")
    mems = body.get("memories")
    if not isinstance(mems, list):
        raise verr("memories must be an array", field="memories")
    ver = body.get("omp_version")
    if ver is not None and not isinstance(ver, str):
        raise verr("omp_version must be a string", field="omp_version")
    imported, skipped, errors = 0, 0, []
    with STORE.lock:
        for i, raw in enumerate(mems):
            rid = raw.get("id") if isinstance(raw, dict) else None
            try:
                if not isinstance(raw, dict):
                    raise verr("memory must be an object")
                if rid is not None and (not isinstance(rid, str) or not ID_RE.match(rid)):
                    raise verr("id must be \"mem_\" + 16 alphanumeric characters", field="id")
                ts = STORE.stamp()
                created = raw.get("created_at", ts)
                updated = raw.get("updated_at", created)
                created, updated = to_utc(created), to_utc(updated)
                if created is None:
                    raise verr("created_at must be an ISO 8601 UTC timestamp", field="created_at")
                if updated is None:
                    raise verr("updated_at must be an ISO 8601 UTC timestamp", field="updated_at")
                if conflict == "duplicate" or rid is None:
                    mid = new_id()
                    while mid in STORE.mems:
                        mid = new_id()
                    mem = build_memory(raw, mid, created, updated)
                    STORE.put(mem)
                    imported += 1
                    continue
                exists = rid in STORE.mems
                mem = build_memory(raw, rid, created, updated)
                if exists and conflict == "skip":
                    skipped += 1
                    continue
                STORE.put(mem, new=not exists)
                imported += 1
            except ApiError as e:
                errors.append({"index": i, "id": rid if isinstance(rid, str) else None,
                               "error": e.code, "message": e.message})
        return 200, {"imported": imported, "skipped": skipped, "errors": errors}


def ai_endpoint(req, compress):
    body = req.json_body()
    if not isinstance(body, dict):
        raise verr("request body must be a JSON object")
    tr = body.get("transcript")
    if not isinstance(tr, str) or not tr.strip():
        raise verr("transcript must be a non-empty string", field="transcript")
    for k in ("provider", "api_key", "source_tool"):
        if k in body and body[k] is not None and not isinstance(body[k], str):
            raise verr("%s must be a string" % k, field=k)
    key = body.get("api_key") or os.environ.get("OMP_AI_API_KEY")
    if not key:
        raise ApiError(422, "no_api_key", "No AI API key configured")
    raise ApiError(502, "ai_error", "AI provider call failed (no provider integration in this server)")


def h_extract(req):
    return ai_endpoint(req, False)


def h_compress(req):
    return ai_endpoint(req, True)


def h_health(req):
    with STORE.lock:
        n = len(STORE.live())
    return 200, {"status": "ok", "version": "0.1", "memories_count": n,
                 "compliance_level": "OMP-Core"}


ROUTES = [
    (re.compile(r"^/v1/health$"), {"GET": h_health}, False),
    (re.compile(r"^/v1/memories/search$"), {"POST": h_search}, True),
    (re.compile(r"^/v1/memories$"), {"GET": h_list, "POST": h_create}, True),
    (re.compile(r"^/v1/memories/([^/]+)$"), {"GET": h_get, "PUT": h_put, "DELETE": h_delete}, True),
    (re.compile(r"^/v1/export$"), {"GET": h_export}, True),
    (re.compile(r"^/v1/import$"), {"POST": h_import}, True),
    (re.compile(r"^/v1/extract$"), {"POST": h_extract}, True),
    (re.compile(r"^/v1/compress$"), {"POST": h_compress}, True),
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "blind-omp/0.1"

    def log_message(self, fmt_, *args):  # never log content; log method+path only
        if os.environ.get("OMP_LOG"):
            sys.stderr.write("%s %s\n" % (self.command, self.path.split("?")[0]))

    def json_body(self):
        raw = self._body
        if raw is None or raw == b"":
            raise verr("request body is required")
        try:
            txt = raw.decode("utf-8")
            obj = json.loads(txt, parse_constant=_no_const)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise verr("request body is not valid JSON")
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise verr("request body holds a string that is not valid Unicode (lone surrogate)")
        except (ValueError, RecursionError):
            raise verr("request body is not valid JSON")
        return obj

    def send(self, status, obj):
        if status == 204 or obj is None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_env(self, e):
        if BUG == "error_envelope" and e.code == "validation_error":
            self.send(e.status, {"detail": [{"loc": ["body", e.details.get("field", "")],
                                             "msg": e.message, "type": "value_error"}]})
            return
        self.send(e.status, {"error": e.code, "message": e.message, "details": e.details})

    def authorized(self):
        key = os.environ["OMP_API_KEY"]
        h = self.headers.get("Authorization", "")
        m = re.match(r"^Bearer (.+)$", h.strip()) if h else None
        if not m:
            return False
        return hmac.compare_digest(m.group(1).strip().encode("utf-8", "surrogateescape"),
                                   key.encode())

    def dispatch(self):
        self._body = None
        try:
            length = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                self._body = self._read_chunked()
            elif length:
                if not length.isdigit():
                    raise ApiError(400, "bad_request", "invalid Content-Length")
                n = int(length)
                if n > MAX_BODY:
                    self.close_connection = True
                    raise ApiError(413, "payload_too_large", "request body too large")
                self._body = self.rfile.read(n)
            path = unquote(urlsplit(self.path).path)
            if path != "/" and path.endswith("/"):
                path = path.rstrip("/")
            self.qs = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
            for rx, methods, auth in ROUTES:
                m = rx.match(path)
                if not m:
                    continue
                if BUG == "health_auth":
                    auth = True
                if auth and not self.authorized():
                    raise ApiError(401, "unauthorized", "Missing or invalid API key")
                fn = methods.get(self.command)
                if fn is None:
                    raise ApiError(405, "method_not_allowed",
                                   "Method %s not allowed here" % self.command,
                                   {"allowed": sorted(methods)})
                status, obj = fn(self, *m.groups())
                self.send(status, obj)
                return
            if not self.authorized():
                raise ApiError(401, "unauthorized", "Missing or invalid API key")
            raise ApiError(404, "not_found", "No such endpoint")
        except ApiError as e:
            self.send_error_env(e)
        except Exception as e:  # noqa
            sys.stderr.write("internal error: %s on %s %s\n" % (type(e).__name__, self.command,
                                                                 self.path.split("?")[0]))
            self.send(500, {"error": "internal_error", "message": "Server-side failure", "details": {}})

    def _read_chunked(self):
        out = b""
        while True:
            line = self.rfile.readline(100)
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline(100)
                return out
            out += self.rfile.read(size)
            self.rfile.readline(100)
            if len(out) > MAX_BODY:
                raise ApiError(413, "payload_too_large", "request body too large")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = dispatch

    def do_HEAD(self):
        self.dispatch()


def _no_const(c):
    raise ValueError("non-standard JSON constant %s" % c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    key = os.environ.get("OMP_API_KEY", "")
    if len(key) < 32:
        sys.exit("OMP_API_KEY must be at least 32 characters (spec §7)")
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(a.port_file + ".tmp", a.port_file)
    sys.stderr.write("blind OMP server on http://127.0.0.1:%d (BUG=%s)\n" % (port, BUG or "none"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
