"""memorizz2: a blind second implementation of the MemoRizz Memory Archive v1 (one process per operation).

    python app.py {op} {input} {output}

Operations: export, import_archive, arm_failure, delete_namespace. Exit 0 done, 3 refused (the output
holds a report or {"error": ...}), 4 no such operation, 2 bad start (unknown bug name, bad arguments).
State lives under $SECOND_OPINION_STATE (default: <tempdir>/memorizz2-state), guarded by flock.
Planted bugs are switched on by SECOND_OPINION_BUGS=name1,name2 (see bugs.json). Standard library only.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import fcntl
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_START, EXIT_REFUSED, EXIT_UNSUPPORTED = 0, 2, 3, 4

FORMAT = "memorizz.memory"
VERSION = 1
MEMORIZZ_VERSION = "0.0.0+memorizz2"
SOURCE_PROVIDER = "filesystem"

TAXONOMY: dict[str, str] = {
    "personas": "long_term.semantic",
    "entity_memory": "long_term.semantic",
    "knowledge_base": "long_term.semantic",
    "toolbox": "long_term.procedural",
    "workflow_memory": "long_term.procedural",
    "skillbox": "long_term.procedural",
    "conversation_memory": "long_term.episodic",
    "summaries": "long_term.episodic",
    "tool_log": "long_term.episodic",
    "short_term_memory": "short_term",
    "semantic_cache": "short_term",
    "shared_memory": "coordination",
    "agents": "agent_configuration",
}
STORE_KEYS = list(TAXONOMY)
ENVELOPE = ("format", "version", "taxonomy", "manifest", "stores", "integrity")
MANIFEST_REQUIRED = ("created_at", "memorizz_version", "source_provider", "scope", "counts",
                     "record_count", "includes", "warnings")
# Natural identity fields named by the spec ("such as agent_id for agents, persona_id for personas,
# and summary_id for summaries"): they must agree with the record id.
NATURAL_ID = {"agents": "agent_id", "personas": "persona_id", "summaries": "summary_id"}
# Reference fields named by the spec ("memory_id, user_id, agent_id, owner_agent_id, delegates,
# source_ids, supersedes, and source_message_ids"), less the scope fields memory_id and user_id.
REFERENCE_FIELDS = ("agent_id", "owner_agent_id", "delegates", "source_ids", "supersedes", "source_message_ids")
EMBEDDING_FIELDS = ("embedding", "embeddings")
CREDENTIAL_FIELDS = ("api_key", "apikey", "password", "secret", "token", "access_token", "credentials")
MAX_ID_CHARS = 512
MAX_RECORDS = 100_000
MAX_BYTES = 50 * 1024 * 1024
DIGEST_RE = re.compile(r"[0-9a-f]{64}")

KNOWN_BUGS = {
    "id_len_513", "python_float_repr", "ascii_escape", "extra_envelope_field",
    "data_id_unchecked", "progress_unreported", "clone_keeps_refs", "embeddings_kept",
}
BUGS: set[str] = set()


class Refused(Exception):
    """The request is refused (exit 3); `body` is written to the output."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(str(body))
        self.body = body


class CanonicalError(ValueError):
    pass


# ---------------------------------------------------------------- canonical JSON


def js_number(value: float) -> str:
    """A finite float as the shared Python/browser form (ECMAScript Number::toString)."""
    if value == 0:
        return "0"  # negative zero is 0; an integral zero omits .0
    sign = "-" if value < 0 else ""
    dec = Decimal(repr(abs(value)))  # shortest round-trip digits
    _, digits_t, exp = dec.normalize().as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    # value = 0.d1d2...dk x 10^n  (ECMAScript's n)
    k = len(digits)
    n = exp + len(digits_t)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mant}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + text


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise CanonicalError("NaN or Infinity is not allowed")
    if "python_float_repr" in BUGS:
        return repr(value)
    return js_number(value)


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii="ascii_escape" in BUGS)


def canonical(value: Any) -> str:
    """Canonical JSON text: sorted keys, compact separators, literal Unicode, JS number forms."""
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise CanonicalError("object keys must be strings")
        return "{" + ",".join(_string(k) + ":" + canonical(value[k]) for k in sorted(value)) + "}"
    raise CanonicalError(f"not a JSON value: {type(value).__name__}")


def canonical_bytes(value: Any) -> bytes:
    try:
        return canonical(value).encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalError("a string holds a lone surrogate (not UTF-8 encodable)") from None


def digest_of(archive: dict[str, Any]) -> str:
    body = {k: v for k, v in archive.items() if k != "integrity"}
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def seal(archive: dict[str, Any]) -> dict[str, Any]:
    archive["integrity"] = {"algorithm": "sha256", "digest": digest_of(archive)}
    return archive


# ---------------------------------------------------------------- strict JSON input


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def load_json(raw: bytes) -> Any:
    text = raw.decode("utf-8")  # strict: invalid UTF-8 raises
    if text.startswith("\ufeff"):
        raise ValueError("a byte-order mark is not JSON")
    return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_duplicates)


# ---------------------------------------------------------------- state


class State:
    """The store: {store_key: {id: data}} plus the armed failure, in one JSON file under a flock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / "store.json"
        self.lock_path = root / "store.lock"
        self.stores: dict[str, dict[str, Any]] = {k: {} for k in STORE_KEYS}
        self.armed: int | None = None

    @contextlib.contextmanager
    def locked(self):  # type: ignore[no-untyped-def]
        with open(self.lock_path, "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                self._load()
                yield self
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        for key in STORE_KEYS:
            self.stores[key] = dict(data.get("stores", {}).get(key, {}))
        self.armed = data.get("armed")

    def save(self) -> None:
        text = json.dumps({"stores": self.stores, "armed": self.armed}, ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(prefix=".store-", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def state_root() -> Path:
    env = os.environ.get("SECOND_OPINION_STATE")
    return Path(env) if env else Path(tempfile.gettempdir()) / "memorizz2-state"


# ---------------------------------------------------------------- export


def _refs(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _bool_param(req: dict[str, Any], name: str, default: bool) -> bool:
    value = req.get(name, default)
    if not isinstance(value, bool):
        raise Refused({"error": f"{name} must be a boolean"})
    return value


def op_export(req: dict[str, Any], state: State) -> dict[str, Any]:
    memory_id = req.get("memory_id")
    agent_id = req.get("agent_id")
    for name, value in (("memory_id", memory_id), ("agent_id", agent_id)):
        if value is not None and not isinstance(value, str):
            raise Refused({"error": f"{name} must be a string"})
    types = req.get("types")
    if types is None:
        selected = list(STORE_KEYS)
    else:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise Refused({"error": "types must be a list of store keys"})
        unknown = [t for t in types if t not in TAXONOMY]
        if unknown:
            raise Refused({"error": f"unknown store key(s) in types: {unknown}"})
        selected = [k for k in STORE_KEYS if k in types]
    embeddings = _bool_param(req, "include_embeddings", False)
    delegates = _bool_param(req, "include_delegates", True)
    history = _bool_param(req, "include_history", True)
    context = _bool_param(req, "include_context", True)
    user_scoped = "user_id" in req
    user_id = req.get("user_id")
    if user_scoped and user_id is not None and not isinstance(user_id, str):
        raise Refused({"error": "user_id must be a string or null"})

    agent_set: set[str] = set()
    if agent_id is not None:
        agent_set.add(agent_id)
        if delegates:  # the selected agent's configured delegates, and agents it owns
            for rid, data in state.stores["agents"].items():
                if rid == agent_id or data.get("agent_id") == agent_id:
                    agent_set.update(_refs(data.get("delegates")))
                if data.get("owner_agent_id") == agent_id:
                    agent_set.add(rid)

    # memconform's adapter contract (its README, "Targets"), not the spec: an agent export covers the
    # agent, its delegates and the namespaces their `memory_ids` name; an agent belongs to the
    # namespaces its `memory_ids` name. (The blind first version linked records by agent_id fields.)
    namespaces = {ns for rid in agent_set for ns in _refs((state.stores["agents"].get(rid) or {}).get("memory_ids"))}

    def in_namespace(data: dict[str, Any], ns: str) -> bool:
        return data.get("memory_id") == ns or ns in _refs(data.get("memory_ids"))

    def wanted(store: str, rid: str, data: dict[str, Any]) -> bool:
        if memory_id is not None and not in_namespace(data, memory_id):
            return False
        if user_scoped and data.get("user_id") != user_id:
            return False
        if agent_id is not None:
            own = store == "agents" and rid in agent_set
            if not (own or data.get("memory_id") in namespaces):
                return False
        return True

    stores: dict[str, list[dict[str, Any]]] = {k: [] for k in STORE_KEYS}
    omitted: set[str] = set()
    for key in selected:
        for rid, data in state.stores[key].items():
            if not wanted(key, rid, data):
                continue
            out = copy.deepcopy(data)
            for field in CREDENTIAL_FIELDS:
                if field in out:
                    del out[field]
                    omitted.add(f"{key}.{field}")
            if not embeddings:
                for field in EMBEDDING_FIELDS:
                    if field in out:
                        del out[field]
                        omitted.add(f"{key}.{field}")
            stores[key].append({"id": rid, "data": out})

    included_ids = {r["id"] for recs in stores.values() for r in recs}
    external: list[dict[str, Any]] = []
    for key in STORE_KEYS:
        for rec in stores[key]:
            for field in REFERENCE_FIELDS:
                if key == "agents" and field == "agent_id":
                    continue  # identity, not a link
                for target in _refs(rec["data"].get(field)):
                    if target not in included_ids:
                        external.append({"memory_type": key, "id": rec["id"], "field": field, "target": target})
    counts = {k: len(stores[k]) for k in STORE_KEYS}
    warnings: list[str] = []
    if omitted:
        warnings.append("credential or embedding fields were omitted (see omitted_fields)")
    if external:
        warnings.append("some references point outside the exported graph (see external_references)")
    manifest: dict[str, Any] = {
        "created_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "memorizz_version": MEMORIZZ_VERSION,
        "source_provider": SOURCE_PROVIDER,
        "scope": {
            "memory_id": memory_id,
            "agent_id": agent_id,
            "agent_ids": [r["id"] for r in stores["agents"]],
            "user_scoped": user_scoped,
            "user_id": user_id if user_scoped else None,
            "application_id": None,
            "types": selected,
        },
        "counts": counts,
        "record_count": sum(counts.values()),
        "includes": {"delegates": delegates, "history": history, "context": context, "embeddings": embeddings},
        "warnings": warnings,
    }
    if omitted:
        manifest["omitted_fields"] = sorted(omitted)
    if external:
        manifest["external_references"] = external
    archive = {
        "format": FORMAT,
        "version": VERSION,
        "taxonomy": dict(TAXONOMY),
        "manifest": manifest,
        "stores": stores,
    }
    return seal(archive)


# ---------------------------------------------------------------- validation


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate(archive: Any) -> list[str]:
    """Every reason the archive is invalid (empty: valid)."""
    if not isinstance(archive, dict):
        return ["the archive is not a JSON object"]
    errors: list[str] = []
    missing = [f for f in ENVELOPE if f not in archive]
    extra = [f for f in archive if f not in ENVELOPE]
    if missing:
        errors.append(f"missing envelope field(s): {missing}")
    if extra and "extra_envelope_field" not in BUGS:
        errors.append(f"unknown envelope field(s): {extra}")
    if "format" in archive and archive["format"] != FORMAT:
        errors.append(f"format must be {FORMAT!r}")
    if "version" in archive:
        version = archive["version"]
        if not _is_int(version):
            errors.append("version must be the integer 1")
        elif version != VERSION:
            errors.append(f"unsupported version {version}")
    if "taxonomy" in archive and archive["taxonomy"] != TAXONOMY:
        errors.append("taxonomy is not the canonical store-to-category mapping")
    errors += _validate_stores(archive.get("stores"), "stores" in archive)
    errors += _validate_manifest(archive.get("manifest"), archive.get("stores"), "manifest" in archive)
    if "integrity" in archive:
        errors += _validate_integrity(archive)
    return errors


def _validate_stores(stores: Any, present: bool) -> list[str]:
    if not present:
        return []
    if not isinstance(stores, dict):
        return ["stores must be an object"]
    errors = []
    missing = [k for k in STORE_KEYS if k not in stores]
    unknown = [k for k in stores if k not in TAXONOMY]
    if missing:
        errors.append(f"missing store key(s): {missing}")
    if unknown:
        errors.append(f"unknown store key(s): {unknown}")
    total = 0
    limit = MAX_ID_CHARS + (1 if "id_len_513" in BUGS else 0)
    for key in STORE_KEYS:
        records = stores.get(key)
        if records is None and key not in stores:
            continue
        if not isinstance(records, list):
            errors.append(f"stores.{key} must be an array")
            continue
        total += len(records)
        seen: set[str] = set()
        for i, rec in enumerate(records):
            where = f"stores.{key}[{i}]"
            if not isinstance(rec, dict) or set(rec) != {"id", "data"}:
                errors.append(f"{where} must be an object with exactly id and data")
                continue
            rid, data = rec["id"], rec["data"]
            if not isinstance(rid, str) or not rid:
                errors.append(f"{where}.id must be a nonempty string")
                continue
            if len(rid) > limit:
                errors.append(f"{where}.id is longer than {MAX_ID_CHARS} characters")
            if rid in seen:
                errors.append(f"{where}.id {rid!r} is a duplicate in {key}")
            seen.add(rid)
            if not isinstance(data, dict):
                errors.append(f"{where}.data must be an object")
                continue
            if "data_id_unchecked" in BUGS:
                continue
            for field in ("id", "_id"):
                if field in data and data[field] != rid:
                    errors.append(f"{where}.data.{field} does not match the record id")
            natural = NATURAL_ID.get(key)
            if natural and natural in data and data[natural] != rid:
                errors.append(f"{where}.data.{natural} does not agree with the record id")
    if total > MAX_RECORDS:
        errors.append(f"{total} records exceed the limit of {MAX_RECORDS}")
    return errors


def _validate_manifest(manifest: Any, stores: Any, present: bool) -> list[str]:
    if not present:
        return []
    if not isinstance(manifest, dict):
        return ["manifest must be an object"]
    errors = []
    missing = [f for f in MANIFEST_REQUIRED if f not in manifest]
    if missing:
        errors.append(f"manifest is missing required field(s): {missing}")
    for field, kind, name in (("created_at", str, "a string"), ("memorizz_version", str, "a string"),
                              ("source_provider", str, "a string"), ("scope", dict, "an object"),
                              ("includes", dict, "an object"), ("warnings", list, "an array"),
                              ("omitted_fields", list, "an array"), ("external_references", list, "an array")):
        if field in manifest and not isinstance(manifest[field], kind):
            errors.append(f"manifest.{field} must be {name}")
    if isinstance(manifest.get("created_at"), str) and not _is_utc(manifest["created_at"]):
        errors.append("manifest.created_at is not a UTC timestamp")
    counts = manifest.get("counts")
    if "counts" in manifest:
        if not isinstance(counts, dict):
            errors.append("manifest.counts must be an object")
            counts = None
        else:
            if set(counts) != set(STORE_KEYS):
                errors.append("manifest.counts must hold exactly the 13 store keys")
            for key, value in counts.items():
                if not _is_int(value) or value < 0:
                    errors.append(f"manifest.counts.{key} must be a nonnegative integer")
                elif isinstance(stores, dict) and isinstance(stores.get(key), list) and value != len(stores[key]):
                    errors.append(f"manifest.counts.{key} is {value} but the store holds {len(stores[key])}")
    if "record_count" in manifest:
        rc = manifest["record_count"]
        if not _is_int(rc) or rc < 0:
            errors.append("manifest.record_count must be a nonnegative integer")
        elif isinstance(counts, dict) and all(_is_int(v) for v in counts.values()) and rc != sum(counts.values()):
            errors.append(f"manifest.record_count {rc} is not the sum of the counts")
    return errors


def _is_utc(text: str) -> bool:
    try:
        stamp = _dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        return False
    return stamp.tzinfo is not None and stamp.utcoffset() == _dt.timedelta(0)


def _validate_integrity(archive: dict[str, Any]) -> list[str]:
    integrity = archive["integrity"]
    if not isinstance(integrity, dict):
        return ["integrity must be an object"]
    errors = []
    if set(integrity) != {"algorithm", "digest"}:
        errors.append("integrity must hold exactly algorithm and digest")
    if integrity.get("algorithm") != "sha256":
        errors.append('integrity.algorithm must be "sha256"')
    digest = integrity.get("digest")
    if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
        errors.append("integrity.digest must be 64 lowercase hexadecimal characters")
        return errors
    try:
        expected = digest_of(archive)
    except CanonicalError as exc:
        return errors + [f"the archive has no canonical form: {exc}"]
    if digest != expected:
        errors.append("checksum mismatch")
    return errors


# ---------------------------------------------------------------- import


def _report(**kw: Any) -> dict[str, Any]:
    report = {"ok": False, "dry_run": False, "planned": 0, "imported": 0, "skipped": 0,
              "conflicts": [], "id_map": {}, "errors": []}
    report.update(kw)
    return report


def _strip_for_import(store: str, data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    if "embeddings_kept" not in BUGS:
        for field in EMBEDDING_FIELDS:
            data.pop(field, None)
    if store == "agents":
        autos = data.get("automations")
        if isinstance(autos, list):
            for auto in autos:
                if isinstance(auto, dict) and "enabled" in auto:
                    auto["enabled"] = False
        for field in ("automations_enabled", "automation_enabled"):
            if field in data:
                data[field] = False
    return data


def _rewrite(value: Any, id_map: dict[str, str]) -> Any:
    if isinstance(value, str):
        return id_map.get(value, value)
    if isinstance(value, list):
        return [id_map.get(v, v) if isinstance(v, str) else v for v in value]
    return value


def _rewrite_refs(node: Any, id_map: dict[str, str]) -> Any:
    """Reference fields rewritten wherever they occur (nested coordination payloads keep their links)."""
    if isinstance(node, dict):
        return {k: (_rewrite(v, id_map) if k in REFERENCE_FIELDS and isinstance(v, (str, list))
                    else _rewrite_refs(v, id_map)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(v, id_map) for v in node]
    return node


def _clone_record(store: str, rid: str, data: dict[str, Any], id_map: dict[str, str]) -> tuple[str, dict[str, Any]]:
    new_id = id_map[rid]
    if "clone_keeps_refs" not in BUGS:
        data = _rewrite_refs(data, id_map)
    for field in ("id", "_id"):
        if field in data:
            data[field] = new_id
    natural = NATURAL_ID.get(store)
    if natural and natural in data:
        data[natural] = new_id
    return new_id, data


def op_import(req: dict[str, Any], state: State) -> tuple[int, dict[str, Any]]:
    if "archive" not in req and "mode" not in req:
        # the body is the archive itself; mode and conflict then come as call parameters
        req = {"archive": req, "mode": os.environ.get("MEMCONFORM_PARAM_MODE", "preview"),
               "conflict": os.environ.get("MEMCONFORM_PARAM_CONFLICT", "error")}
    mode = req.get("mode")
    conflict = req.get("conflict", "error")
    if mode not in ("preview", "restore", "clone"):
        return EXIT_REFUSED, _report(errors=[f"mode must be preview, restore or clone (got {mode!r})"])
    if conflict not in ("error", "skip", "replace"):
        return EXIT_REFUSED, _report(errors=[f"conflict must be error, skip or replace (got {conflict!r})"])
    dry_run = mode == "preview"
    if "archive" not in req:
        return EXIT_REFUSED, _report(dry_run=dry_run, errors=["the request has no archive"])
    archive = req["archive"]
    errors = validate(archive)
    if not errors:
        try:
            if len(canonical_bytes(archive)) > MAX_BYTES:
                errors.append(f"the archive exceeds the {MAX_BYTES} byte limit")
        except CanonicalError as exc:
            errors.append(f"the archive has no canonical form: {exc}")
    if errors:
        return EXIT_REFUSED, _report(dry_run=dry_run, errors=errors)

    records = [(key, rec["id"], rec["data"]) for key in STORE_KEYS for rec in archive["stores"][key]]
    id_map: dict[str, str] = {}
    if mode == "clone":
        for _, rid, _ in records:
            if rid not in id_map:
                id_map[rid] = str(uuid.uuid4())
        conflicts: list[dict[str, str]] = []
    else:
        conflicts = [{"memory_type": key, "id": rid} for key, rid, _ in records if rid in state.stores[key]]
    conflict_ids = {(c["memory_type"], c["id"]) for c in conflicts}
    skip = conflict == "skip"
    planned = len(records) - (len(conflicts) if skip else 0)
    skipped = len(conflicts) if skip else 0
    if dry_run:
        return EXIT_OK, _report(ok=True, dry_run=True, planned=planned, skipped=skipped,
                                conflicts=conflicts, id_map=id_map)
    if conflicts and conflict == "error":
        return EXIT_REFUSED, _report(planned=planned, conflicts=conflicts, id_map={},
                                     errors=[f"{len(conflicts)} record(s) already exist (conflict policy: error)"])

    armed, state.armed = state.armed, None
    written = 0
    written_map: dict[str, str] = {}
    failure = None
    for key, rid, data in records:
        if (key, rid) in conflict_ids and skip:
            continue
        if armed is not None and written >= armed:
            failure = f"provider failure after {written} record(s) were written (armed by arm_failure)"
            break
        data = _strip_for_import(key, data)
        if mode == "clone":
            new_id, data = _clone_record(key, rid, data, id_map)
            written_map[rid] = new_id
        else:
            new_id = rid
        state.stores[key][new_id] = data
        written += 1
    state.save()
    if failure:
        reported = 0 if "progress_unreported" in BUGS else written
        return EXIT_REFUSED, _report(planned=planned, imported=reported, skipped=skipped, conflicts=conflicts,
                                     id_map=written_map if reported else {}, errors=[failure])
    return EXIT_OK, _report(ok=True, planned=planned, imported=written, skipped=skipped,
                            conflicts=conflicts, id_map=id_map)


# ---------------------------------------------------------------- other operations


def op_arm_failure(req: dict[str, Any], state: State) -> dict[str, Any]:
    after = req.get("after")
    if not _is_int(after) or after < 0:
        raise Refused({"error": "after must be a nonnegative integer"})
    state.armed = after
    state.save()
    return {"ok": True, "armed": after}


def op_delete_namespace(req: dict[str, Any], state: State) -> dict[str, Any]:
    ns = req.get("memory_id")
    if not isinstance(ns, str) or not ns:
        raise Refused({"error": "memory_id must be a nonempty string"})
    deleted = 0
    for key in STORE_KEYS:
        doomed = [rid for rid, data in state.stores[key].items() if data.get("memory_id") == ns]
        for rid in doomed:
            del state.stores[key][rid]
        deleted += len(doomed)
    state.save()
    return {"ok": True, "deleted": deleted}


OPS = ("export", "import_archive", "arm_failure", "delete_namespace")


def run(op: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    try:
        req = load_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        body: dict[str, Any] = {"error": f"the request is not strict JSON: {exc}"}
        if op == "import_archive":
            body = _report(errors=[body["error"]])
        return EXIT_REFUSED, body
    if not isinstance(req, dict):
        return EXIT_REFUSED, {"error": "the request must be a JSON object"}
    with State(state_root()).locked() as state:
        try:
            if op == "export":
                return EXIT_OK, op_export(req, state)
            if op == "import_archive":
                return op_import(req, state)
            if op == "arm_failure":
                return EXIT_OK, op_arm_failure(req, state)
            return EXIT_OK, op_delete_namespace(req, state)
        except Refused as exc:
            return EXIT_REFUSED, exc.body


def write_output(path: str, body: dict[str, Any]) -> None:
    text = canonical(body) if "integrity" in body else json.dumps(body, ensure_ascii=False)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    bugs = {b.strip() for b in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if b.strip()}
    unknown = bugs - KNOWN_BUGS
    if unknown:
        print(f"memorizz2: unknown bug name(s): {sorted(unknown)}", file=sys.stderr)
        return EXIT_START
    BUGS.clear()
    BUGS.update(bugs)
    if len(argv) != 4:
        print("usage: app.py {op} {input} {output}", file=sys.stderr)
        return EXIT_START
    op, input_path, output_path = argv[1:]
    if op not in OPS:
        print(f"memorizz2: no such operation {op!r}", file=sys.stderr)
        return EXIT_UNSUPPORTED
    code, body = run(op, Path(input_path).read_bytes())
    write_output(output_path, body)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
