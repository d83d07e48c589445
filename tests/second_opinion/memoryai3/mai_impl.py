"""Blind MemoryAI Protocol v1 implementation (Producer + Consumer + round trip), in memory.

memconform target:  python:mai_impl:Brain   (run memconform from this folder)
Bugs: env BUG=<name> (see BUGS.md)
"""
import base64
import binascii
import copy
import hashlib
import json
import math
import os
import re
import struct
import threading
import uuid
from datetime import datetime, timezone

try:
    from memconform.targets import Rejected
except Exception:  # standalone use
    class Rejected(Exception):
        pass

GENERATOR = "blind-memoryai/0.1"
MAX_VERSION = 1
CORE_TYPES = {"fact", "episodic", "goal", "error", "preference", "decision", "identity",
              "pitfall", "procedure", "life_event"}
DNA_TYPES = {"preference", "decision", "identity", "pitfall", "procedure"}
ZONES = {"standard", "important", "critical", "ephemeral"}
TIERS = {"hot", "warm", "cold"}
SCOPES = {"full", "dna_only", "since"}
COLLECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
SECRET_KEY_RE = re.compile(r"(api[_-]?key|secret|password|passwd|token|credential|authorization|audit[_-]?log)",
                           re.I)
SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memoryai-protocol-v1.md")


def bug(name):
    return os.environ.get("BUG", "") == name


def now_iso():
    d = datetime.now(timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % d.microsecond


def parse_dt(s):
    if not isinstance(s, str) or not s:
        return None
    t = s.strip()
    if t.endswith("Z") or t.endswith("z"):
        t = t[:-1] + "+00:00"
    try:
        d = datetime.fromisoformat(t)
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d


def canonical(obj, ascii_=False):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_,
                      allow_nan=False).encode("utf-8")


def bundle_checksum(bundle, ascii_=False):
    b = copy.deepcopy(bundle)
    man = b.get("manifest")
    if isinstance(man, dict):
        if bug("checksum_with_field"):
            man["checksum"] = ""
        else:
            man.pop("checksum", None)
    return hashlib.sha256(canonical(b, ascii_)).hexdigest()


def encode_embedding(vec):
    fmt = (">%df" if bug("embedding_big_endian") else "<%df") % len(vec)
    return base64.b64encode(struct.pack(fmt, *vec)).decode("ascii")


def decode_embedding(s, dim):
    """Return list of floats or raise ValueError."""
    if not isinstance(s, str):
        raise ValueError("embedding is not a base64 string")
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("embedding is not valid base64")
    if len(raw) % 4:
        raise ValueError("embedding byte length is not a multiple of 4")
    n = len(raw) // 4
    if n != dim:
        raise ValueError("embedding has %d floats, manifest.embedding_dim is %s" % (n, dim))
    vals = list(struct.unpack("<%df" % n, raw))
    if any(math.isnan(v) or math.isinf(v) for v in vals):
        raise ValueError("embedding holds NaN or infinity")
    return vals


def is_dna(ch):
    if ch.get("memory_type") in DNA_TYPES:
        return True
    if bug("dna_type_only"):
        return False
    return ch.get("zone") in ("critical", "important") or ch.get("is_pinned") is True


def scrub(obj):
    """Remove credential-looking keys (§6: bundles MUST NOT include API keys / credentials)."""
    if isinstance(obj, dict):
        return {k: scrub(v) for k, v in obj.items() if not SECRET_KEY_RE.search(str(k))}
    if isinstance(obj, list):
        return [scrub(v) for v in obj]
    return obj


def _finite(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _num01(v):
    return _finite(v) and 0 <= v <= 1


class Brain:
    def __init__(self):
        self.lock = threading.RLock()
        self.tenant_id = str(uuid.uuid4())
        self.tenant_name = "blind-tenant"
        self.tenant_plan = "self-hosted"
        self.embedding_model = os.environ.get("MAI_EMBED_MODEL", "all-MiniLM-L6-v2")
        self.embedding_dim = int(os.environ.get("MAI_EMBED_DIM", "384"))
        self.chunks = {}  # local id -> record (embedding kept as list of floats or None)
        self.by_hash = {}  # content_hash -> local id
        self.next_id = 1
        self.edges = {}  # (a, b, type) -> record
        self.entities = {}  # name -> record
        self.l2_sessions = []
        self.mood_states = {}  # key -> record
        self.agents = {}  # key -> record

    # ------------------------------------------------------------ producer
    def _export_obj(self, body):
        body = body if isinstance(body, dict) else {}
        scope = body.get("scope", "full")
        if scope is None:
            scope = "full"
        if scope not in SCOPES:
            raise Rejected("scope must be one of full, dna_only, since")
        since = body.get("since")
        since_dt = None
        if scope == "since":
            since_dt = parse_dt(since)
            if since_dt is None:
                raise Rejected("scope 'since' needs an ISO-8601 'since'")
        elif since is not None:
            since_dt = parse_dt(since)  # tolerated but unused for full/dna_only
            since = None
        with self.lock:
            live = [c for c in self.chunks.values() if not c.get("_deleted") or bug("export_deleted")]
            if scope == "dna_only":
                sel = [c for c in live if is_dna(c)]
            elif scope == "since":
                sel = [c for c in live if (parse_dt(c.get("created_at")) or datetime.min.replace(tzinfo=timezone.utc)) >= since_dt]
            else:
                sel = live
            sel.sort(key=lambda c: c["id"])
            ids = {c["id"] for c in sel}
            chunks = []
            for c in sel:
                rec = {k: v for k, v in c.items() if not k.startswith("_")}
                emb = rec.get("embedding")
                rec["embedding"] = encode_embedding(emb) if emb is not None else None
                rec["embedding_model"] = self.embedding_model
                chunks.append(scrub(rec))
            edges = [scrub(dict(e)) for e in self.edges.values()
                     if e["chunk_a"] in ids and e["chunk_b"] in ids]
            if scope == "dna_only":
                ents = [e for e in self.entities.values() if e.get("is_dna") is True]
            elif scope == "since":
                ents = [e for e in self.entities.values()
                        if (parse_dt(e.get("last_seen")) or since_dt) >= since_dt]
            else:
                ents = list(self.entities.values())
            ents = [scrub(dict(e)) for e in ents]

            def after(rec):
                for k in ("updated_at", "created_at", "ended_at", "started_at", "timestamp", "ts"):
                    d = parse_dt(rec.get(k)) if isinstance(rec, dict) else None
                    if d is not None:
                        return d >= since_dt
                return True

            if scope == "dna_only":
                sess, moods = [], []
            else:
                sess = list(self.l2_sessions)
                moods = list(self.mood_states.values())
            agents = list(self.agents.values())
            if scope == "since":
                sess = [r for r in sess if after(r)]
                moods = [r for r in moods if after(r)]
                agents = [r for r in agents if after(r)]
            sess, moods, agents = scrub(sess), scrub(moods), scrub(agents)
            bundle = {
                "format": "memoryai-bundle",
                "version": 1,
                "generator": GENERATOR,
                "exported_at": now_iso(),
                "manifest": {
                    "tenant_id": self.tenant_id,
                    "tenant_name": self.tenant_name,
                    "tenant_plan": self.tenant_plan,
                    "scope": scope,
                    "since": since if scope == "since" else None,
                    "embedding_model": self.embedding_model,
                    "embedding_dim": self.embedding_dim,
                    "counts": {},
                },
                "chunks": chunks,
                "memory_edges": edges,
                "entities": ents,
                "l2_sessions": sess,
                "mood_states": moods,
                "agents": agents,
            }
            if bug("counts_total"):
                bundle["manifest"]["counts"] = {
                    "chunks": len(self.chunks), "memory_edges": len(self.edges),
                    "entities": len(self.entities), "l2_sessions": len(self.l2_sessions),
                    "mood_states": len(self.mood_states), "agents": len(self.agents)}
            else:
                bundle["manifest"]["counts"] = {k: len(bundle[k]) for k in COLLECTIONS}
            bundle["manifest"]["checksum"] = bundle_checksum(bundle)
            return bundle

    def export(self, body=None, **params):
        b = dict(body) if isinstance(body, dict) else {}
        for k in ("scope", "since"):
            if k in params and k not in b:
                b[k] = params[k]
        return self._export_obj(b)

    def export_stream(self, body=None, **params):
        bundle = self.export(body, **params)
        head = {k: bundle[k] for k in ("format", "version", "generator", "exported_at", "manifest")}
        lines = [json.dumps(head, ensure_ascii=False, separators=(",", ":"))]
        for coll in COLLECTIONS:
            for rec in bundle[coll]:
                lines.append(json.dumps({"type": coll, "record": rec}, ensure_ascii=False,
                                        separators=(",", ":")))
        return ("\n".join(lines) + "\n").encode("utf-8")

    def spec(self, body=None, **params):
        with open(SPEC_PATH, encoding="utf-8") as f:
            return f.read()

    # ------------------------------------------------------------ consumer
    def _check_envelope(self, b):
        if not isinstance(b, dict):
            raise Rejected("bundle must be a JSON object")
        if b.get("format") != "memoryai-bundle":
            raise Rejected("format must be \"memoryai-bundle\"")
        v = b.get("version")
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise Rejected("version must be an integer >= 1")
        if v > MAX_VERSION and not bug("version_unchecked"):
            raise Rejected("bundle version %d is newer than the maximum supported (%d)" % (v, MAX_VERSION))
        m = b.get("manifest")
        if not isinstance(m, dict):
            raise Rejected("manifest must be an object")
        for k in ("scope", "embedding_model", "embedding_dim"):
            if k not in m:
                raise Rejected("manifest.%s is required" % k)
        if m["scope"] not in SCOPES:
            raise Rejected("manifest.scope must be full, dna_only or since")
        if not isinstance(m["embedding_model"], str):
            raise Rejected("manifest.embedding_model must be a string")
        d = m["embedding_dim"]
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise Rejected("manifest.embedding_dim must be a non-negative integer")
        for coll in COLLECTIONS:
            if coll in b and b[coll] is not None and not isinstance(b[coll], list):
                raise Rejected("%s must be an array" % coll)

    def _valid_chunk(self, c):
        if not isinstance(c, dict):
            return "chunk is not an object"
        if not isinstance(c.get("content"), str):
            return "content is required and must be a string"
        mt = c.get("memory_type")
        if not isinstance(mt, str):
            return "memory_type is required and must be a string"
        if mt not in CORE_TYPES and not mt.startswith("x_"):
            return "unknown memory_type %r (vendor types must start with x_)" % mt
        if "zone" in c and c["zone"] is not None and c["zone"] not in ZONES:
            return "zone %r invalid" % c["zone"]
        if "tier" in c and c["tier"] is not None and c["tier"] not in TIERS:
            return "tier %r invalid" % c["tier"]
        for k in ("importance", "decay_score"):
            if k in c and c[k] is not None and not _num01(c[k]):
                return "%s must be a number in 0..1" % k
        if "is_pinned" in c and c["is_pinned"] is not None and not isinstance(c["is_pinned"], bool):
            return "is_pinned must be a boolean"
        if "tags" in c and c["tags"] is not None and (
                not isinstance(c["tags"], list) or not all(isinstance(t, str) for t in c["tags"])):
            return "tags must be an array of strings"
        if "embedding" in c and c["embedding"] is not None and not isinstance(c["embedding"], str):
            return "embedding must be base64 or null"
        if "content_hash" in c and c["content_hash"] is not None and not isinstance(c["content_hash"], str):
            return "content_hash must be a string"
        if "metadata" in c and c["metadata"] is not None and not isinstance(c["metadata"], dict):
            return "metadata must be an object"
        for k in ("created_at", "accessed_at", "valid_until"):
            if c.get(k) is not None and parse_dt(c.get(k)) is None:
                return "%s must be ISO-8601" % k
        return None

    def import_bundle(self, body=None, **params):
        b = body
        if isinstance(b, (bytes, bytearray, str)):
            # raw document text (the harness's hostile battery sends bytes): parse once, no re-decoding
            return self.import_file(b, **params)
        self._check_envelope(b)
        try:
            json.dumps(b, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except UnicodeEncodeError:
            raise Rejected("bundle holds a string that is not valid Unicode (lone surrogate)")
        except (ValueError, RecursionError):
            raise Rejected("bundle holds NaN/Infinity or is nested too deeply")
        man = b["manifest"]
        warnings = []
        # checksum (§3.6): verify, warn on mismatch, never reject
        given = man.get("checksum")
        if given is None:
            warnings.append("manifest.checksum missing; bundle integrity not verified")
        else:
            try:
                ok = given in (bundle_checksum(b), bundle_checksum(b, ascii_=True))
            except (ValueError, TypeError):
                ok = False
            if not ok:
                warnings.append("checksum mismatch: manifest.checksum does not match the canonical body")
        model_match = (man["embedding_model"] == self.embedding_model
                       and man["embedding_dim"] == self.embedding_dim)
        keep_foreign = bug("foreign_embeddings")
        if not model_match:
            warnings.append("embedding model mismatch (bundle %s/%s, local %s/%s): embeddings dropped, "
                            "re-embedded lazily" % (man["embedding_model"], man["embedding_dim"],
                                                    self.embedding_model, self.embedding_dim))
        rep = {
            "bundle_format": b["format"],
            "bundle_version": b["version"],
            "embedding_model_match": model_match,
            "chunks": {"inserted": 0, "skipped_duplicate": 0, "skipped_invalid": 0},
            "memory_edges": {"upserted": 0, "skipped": 0},
            "entities": {"upserted": 0},
            "l2_sessions": {"inserted": 0},
            "mood_states": {"upserted": 0},
            "agents": {"upserted": 0},
            "warnings": warnings,
        }
        with self.lock:
            idmap = {}
            for i, c in enumerate(b.get("chunks") or []):
                why = self._valid_chunk(c)
                if why:
                    rep["chunks"]["skipped_invalid"] += 1
                    warnings.append("chunk %d skipped: %s" % (i, why))
                    continue
                h = c.get("content_hash") or hashlib.sha256(c["content"].encode("utf-8")).hexdigest()
                if h in self.by_hash:
                    rep["chunks"]["skipped_duplicate"] += 1
                    if "id" in c:
                        idmap[_key(c["id"])] = self.by_hash[h]
                    continue
                emb = None
                if c.get("embedding") is not None:
                    chunk_model = c.get("embedding_model")
                    chunk_match = model_match and (chunk_model in (None, self.embedding_model))
                    if chunk_match or keep_foreign:
                        try:
                            emb = decode_embedding(c["embedding"], man["embedding_dim"])
                        except ValueError as e:
                            warnings.append("chunk %d: embedding dropped (%s)" % (i, e))
                            emb = None
                        if emb is not None and not keep_foreign and len(emb) != self.embedding_dim:
                            emb = None
                lid = self.next_id
                self.next_id += 1
                created = c.get("created_at") or now_iso()
                rec = {
                    "id": lid,
                    "content": c["content"],
                    "content_hash": h,
                    "memory_type": c["memory_type"],
                    "embedding": emb,
                    "embedding_model": self.embedding_model,
                    "tags": list(c.get("tags") or []),
                    "zone": c.get("zone") or "standard",
                    "importance": c.get("importance") if c.get("importance") is not None else 0.5,
                    "is_pinned": bool(c.get("is_pinned") or False),
                    "decay_score": c.get("decay_score") if c.get("decay_score") is not None else 1.0,
                    "tier": c.get("tier") or "warm",
                    "created_at": created,
                    "accessed_at": c.get("accessed_at") or created,
                    "valid_until": c.get("valid_until"),
                    "metadata": dict(c.get("metadata") or {}),
                }
                self.chunks[lid] = rec
                self.by_hash[h] = lid
                if "id" in c:
                    idmap[_key(c["id"])] = lid
                rep["chunks"]["inserted"] += 1

            for e in b.get("memory_edges") or []:
                if not isinstance(e, dict) or "chunk_a" not in e or "chunk_b" not in e \
                        or not isinstance(e.get("edge_type", ""), str):
                    rep["memory_edges"]["skipped"] += 1
                    continue
                a = idmap.get(_key(e["chunk_a"]))
                bb = idmap.get(_key(e["chunk_b"]))
                if a is None or bb is None:
                    rep["memory_edges"]["skipped"] += 1
                    continue
                w = e.get("weight", 0.0)
                n = e.get("co_activation_count", 0)
                if not _finite(w):
                    rep["memory_edges"]["skipped"] += 1
                    continue
                if isinstance(n, bool) or not isinstance(n, int):
                    rep["memory_edges"]["skipped"] += 1
                    continue
                et = e.get("edge_type", "")
                k = (a, bb, et)
                ts = now_iso()
                old = self.edges.get(k)
                if old is None:
                    self.edges[k] = {"chunk_a": a, "chunk_b": bb, "edge_type": et, "weight": w,
                                     "co_activation_count": n,
                                     "created_at": e.get("created_at") or ts, "updated_at": ts}
                elif bug("edge_overwrite"):
                    old.update(weight=w, co_activation_count=n, updated_at=ts)
                else:
                    old["co_activation_count"] = old["co_activation_count"] + n
                    old["weight"] = max(old["weight"], w)
                    old["updated_at"] = ts
                rep["memory_edges"]["upserted"] += 1

            for e in b.get("entities") or []:
                if not isinstance(e, dict) or not isinstance(e.get("name"), str):
                    warnings.append("entity skipped: name is required")
                    continue
                name = e["name"]
                f = e.get("frequency", 0)
                if isinstance(f, bool) or not isinstance(f, int):
                    f = 0
                old = self.entities.get(name)
                if old is None:
                    self.entities[name] = {"name": name, "frequency": f,
                                           "first_seen": e.get("first_seen"),
                                           "last_seen": e.get("last_seen"),
                                           "is_dna": e.get("is_dna") is True}
                else:
                    old["frequency"] = old["frequency"] + f
                    old["last_seen"] = _latest(old.get("last_seen"), e.get("last_seen"))
                    old["first_seen"] = _earliest(old.get("first_seen"), e.get("first_seen"))
                    old["is_dna"] = bool(old.get("is_dna")) or e.get("is_dna") is True
                rep["entities"]["upserted"] += 1

            for s in b.get("l2_sessions") or []:
                if isinstance(s, dict):
                    self.l2_sessions.append(copy.deepcopy(s))
                    rep["l2_sessions"]["inserted"] += 1
            for mrec in b.get("mood_states") or []:
                if isinstance(mrec, dict):
                    self.mood_states[_rkey(mrec)] = copy.deepcopy(mrec)
                    rep["mood_states"]["upserted"] += 1
            for arec in b.get("agents") or []:
                if isinstance(arec, dict):
                    self.agents[_rkey(arec)] = copy.deepcopy(arec)
                    rep["agents"]["upserted"] += 1
        return {"success": True, "report": rep}

    def import_file(self, body=None, **params):
        raw = body
        if isinstance(raw, dict) and ("raw" in raw or "content" in raw) and "format" not in raw:
            raw = raw.get("raw", raw.get("content"))
        if isinstance(raw, dict):
            return self.import_bundle(raw)
        if isinstance(raw, (bytes, bytearray)):
            try:
                raw = bytes(raw).decode("utf-8")
            except UnicodeDecodeError:
                raise Rejected("bundle file is not UTF-8")
        if not isinstance(raw, str):
            raise Rejected("bundle file must be JSON text")
        if raw.startswith("\ufeff"):
            raw = raw[1:]
        try:
            doc = json.loads(raw, parse_constant=_no_const, object_pairs_hook=_no_dupes)
        except (ValueError, RecursionError) as e:
            raise Rejected("bundle file is not valid JSON: %s" % e)
        if not isinstance(doc, dict):
            raise Rejected("bundle file must hold a JSON object")
        return self.import_bundle(doc)

    # ------------------------------------------------------------ test hooks
    def decay(self, body=None, **params):
        body = body if isinstance(body, dict) else {}
        rounds = body.get("rounds", body.get("days", 1))
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            rounds = 1
        rounds = min(rounds, 1000)
        decayed, deleted = 0, 0
        with self.lock:
            for c in self.chunks.values():
                if c.get("_deleted") or is_dna(c):
                    continue
                c["decay_score"] = c["decay_score"] * (0.5 ** rounds)
                decayed += 1
                if c["decay_score"] < 0.05:
                    c["_deleted"] = True
                    deleted += 1
        return {"decayed": decayed, "deleted": deleted}

    def delete_chunk(self, body=None, **params):
        body = dict(body) if isinstance(body, dict) else {}
        body.update(params)
        with self.lock:
            target = None
            if body.get("id") is not None:
                target = self.chunks.get(_key(body["id"]))
            if target is None and body.get("content_hash"):
                lid = self.by_hash.get(body["content_hash"])
                target = self.chunks.get(lid) if lid is not None else None
            if target is None and isinstance(body.get("content"), str):
                for c in self.chunks.values():
                    if c["content"] == body["content"]:
                        target = c
                        break
            if target is None or target.get("_deleted"):
                raise Rejected("no such chunk")
            target["_deleted"] = True
            return {"deleted": True, "id": target["id"]}


def _key(v):
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return ("s", json.dumps(v, sort_keys=True))


def _rkey(rec):
    for k in ("id", "agent_id", "session_id", "name", "key"):
        if k in rec and rec[k] is not None:
            return (k, json.dumps(rec[k], sort_keys=True))
    return ("body", json.dumps(rec, sort_keys=True))


def _latest(a, b):
    da, db = parse_dt(a), parse_dt(b)
    if da is None:
        return b if db is not None else a
    if db is None:
        return a
    return b if db > da else a


def _earliest(a, b):
    da, db = parse_dt(a), parse_dt(b)
    if da is None:
        return b if db is not None else a
    if db is None:
        return a
    return b if db < da else a


def _no_const(c):
    raise ValueError("non-standard JSON constant %s" % c)


def _no_dupes(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key %r" % k)
        d[k] = v
    return d
