#!/usr/bin/env python3
"""MemoRizz Memory Archive v1: a small archive store spoken to one process per operation.

    python app.py {op} {input} {output}

{input} holds the request JSON, the reply JSON is written to {output}. Exit 0 done, 3 refused
(the reply holds a report or {"error": ...}), 4 no such operation. The store lives in the folder
named by SECOND_OPINION_STATE (created when missing); every operation holds an flock on
<state>/store.lock for its whole duration and the store file is replaced atomically.

Operations: export, import_archive, arm_failure, delete_namespace (see README.md).
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))

import mzarchive as mz  # noqa: E402
from mzarchive import bug  # noqa: E402

EXIT_OK, EXIT_REFUSED, EXIT_NO_OP = 0, 3, 4
PACKAGE_VERSION = "1.0.0+second-opinion"
SOURCE_PROVIDER = "filesystem"
MAX_INPUT_BYTES = 2 * mz.MAX_BYTES  # a request is refused unread beyond this (the archive itself is measured canonically)

# Fields that name another record (their values are record ids) and fields that name a namespace.
LINK_FIELDS = ("agent_id", "owner_agent_id", "delegates", "source_ids", "supersedes", "source_message_ids")
NAMESPACE_FIELDS = ("memory_id", "memory_ids")
CREDENTIAL_FIELDS = frozenset({
    "api_key", "apikey", "password", "passwd", "secret", "client_secret", "access_token",
    "refresh_token", "auth_token", "token", "credentials", "private_key",
})


class Refused(Exception):
    def __init__(self, body: Any) -> None:
        super().__init__(str(body))
        self.body = body


# ---------------------------------------------------------------------------------------------
# State: one JSON file, {"stores": {key: {id: data}}, "armed_after": int | null}


def state_dir() -> Path:
    folder = os.environ.get("SECOND_OPINION_STATE") or os.path.join(tempfile.gettempdir(), "memorizz-second-opinion-state")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def empty_state() -> dict[str, Any]:
    return {"stores": {key: {} for key in mz.STORE_KEYS}, "armed_after": None}


@contextmanager
def locked_state(exclusive: bool) -> Iterator[dict[str, Any]]:
    """The state under an flock held for the whole operation (shared for readers)."""
    folder = state_dir()
    with open(folder / "store.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            path = folder / "store.json"
            try:
                state = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                state = empty_state()
            for key in mz.STORE_KEYS:
                state["stores"].setdefault(key, {})
            yield state
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def save_state(state: dict[str, Any]) -> None:
    """Atomic replace: write a sibling temporary file, fsync it, rename it over the store."""
    folder = state_dir()
    fd, tmp = tempfile.mkstemp(prefix=".store-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, ensure_ascii=True, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / "store.json")
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------
# Helpers over record data


def namespaces_of(data: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    if isinstance(data.get("memory_id"), str):
        out.add(data["memory_id"])
    if isinstance(data.get("memory_ids"), list):
        out.update(v for v in data["memory_ids"] if isinstance(v, str))
    return out


def link_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def walk_links(store: str, data: dict[str, Any], fields: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(path, value) for every string under one of `fields`, at any depth of data (the record's own
    natural identity field excluded)."""
    natural = mz.NATURAL_ID.get(store)

    def walk(node: Any, path: str, top: bool) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for key, value in node.items():
                sub = f"{path}.{key}" if path else key
                if key in fields and not (top and key == natural):
                    for v in link_values(value):
                        yield sub, v
                if isinstance(value, (dict, list)):
                    yield from walk(value, sub, False)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{path}[{i}]", False)

    yield from walk(data, "", True)


def strip_fields(node: Any, match: Any, path: str, removed: set[str], parent: str = "") -> Any:
    """A copy of node without the keys `match` accepts (recursively); their paths go to `removed`."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            sub = f"{path}.{key}" if path else key
            # added after memconform's run found it (not planted): a JSON Schema's property names are
            # interface, not secrets ("Tool schemas and import references remain data")
            in_schema = parent == "properties" and match is is_credential_field and not bug("schema_properties_stripped")
            if match(key) and not in_schema:
                removed.add(sub)
                continue
            out[key] = strip_fields(value, match, sub, removed, key)
        return out
    if isinstance(node, list):
        return [strip_fields(item, match, path, removed, parent) for item in node]
    return node


def is_embedding_field(key: str) -> bool:
    k = key.lower()
    return k in ("embedding", "embeddings") or k.endswith(("_embedding", "_embeddings"))


def is_credential_field(key: str) -> bool:
    k = key.lower()
    if bug("credential_suffix_missed"):
        return k in CREDENTIAL_FIELDS
    # added after memconform's run found it (not planted): `github_token`, `openai_api_key` are credentials too
    return k in CREDENTIAL_FIELDS or any(k.endswith(("_" + name, "-" + name)) for name in CREDENTIAL_FIELDS)


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------------------------
# export


def op_export(request: dict[str, Any]) -> dict[str, Any]:
    memory_id = request.get("memory_id")
    agent_id = request.get("agent_id")
    types = request.get("types")
    include_embeddings = request.get("include_embeddings", False)
    for name, value in (("memory_id", memory_id), ("agent_id", agent_id)):
        if value is not None and (not isinstance(value, str) or not value):
            raise Refused({"error": f"{name} must be a nonempty string"})
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise Refused({"error": "types must be an array of store keys"})
        unknown = [t for t in types if t not in mz.TAXONOMY]
        if unknown:
            raise Refused({"error": f"unknown store keys in types: {unknown}", "store_keys": list(mz.STORE_KEYS)})
    if not isinstance(include_embeddings, bool):
        raise Refused({"error": "include_embeddings must be a boolean"})
    user_scoped = "user_id" in request
    user_id = request.get("user_id")
    if user_scoped and user_id is not None and not isinstance(user_id, str):
        raise Refused({"error": "user_id must be a string or null"})
    includes = {
        "delegates": bool(request.get("include_delegates", True)),
        "history": bool(request.get("include_history", True)),
        "captured_context": bool(request.get("include_context", True)),
        "embeddings": include_embeddings,
    }
    selected_types = list(mz.STORE_KEYS) if types is None else [k for k in mz.STORE_KEYS if k in types]

    with locked_state(exclusive=False) as state:
        stores = state["stores"]

    agents = stores["agents"]
    agent_ids: set[str] | None = None
    agent_namespaces: set[str] = set()
    if agent_id is not None:
        agent_ids = {agent_id}
        root = agents.get(agent_id)
        if root is not None and includes["delegates"]:
            agent_ids.update(link_values(root.get("delegates")))
        for aid in agent_ids:
            if aid in agents:
                agent_namespaces |= namespaces_of(agents[aid])

    def selected(store: str, rid: str, data: dict[str, Any]) -> bool:
        if agent_ids is not None:
            if store == "agents":
                in_graph = rid in agent_ids
            else:
                in_graph = (
                    data.get("agent_id") in agent_ids
                    or data.get("owner_agent_id") in agent_ids
                    or bool(namespaces_of(data) & agent_namespaces)
                )
            if not in_graph:
                return False
        if memory_id is not None and memory_id not in namespaces_of(data):
            return False
        if user_scoped and data.get("user_id") != user_id:
            return False
        return True

    out_stores: dict[str, list[dict[str, Any]]] = {}
    omitted: set[str] = set()
    for store in mz.STORE_KEYS:
        records = []
        if store in selected_types:
            for rid, data in stores[store].items():
                if not selected(store, rid, data):
                    continue
                removed: set[str] = set()
                clean = strip_fields(data, is_credential_field, "", removed)
                if not include_embeddings:
                    clean = strip_fields(clean, is_embedding_field, "", removed)
                omitted.update(f"{store}.{p}" for p in removed)
                records.append({"id": rid, "data": clean})
        out_stores[store] = records
    if bug("unselected_stores_dropped") and types is not None:
        out_stores = {k: v for k, v in out_stores.items() if k in selected_types}

    included_ids = {r["id"] for recs in out_stores.values() for r in recs}
    external: dict[tuple[str, str, str, str], None] = {}
    for store, records in out_stores.items():
        for record in records:
            for path, target in walk_links(store, record["data"], LINK_FIELDS):
                if target not in included_ids:
                    external[(store, record["id"], path, target)] = None
    external_refs = [{"memory_type": s, "id": i, "field": f, "target": t} for (s, i, f, t) in sorted(external)]

    if agent_ids is not None:
        scope_agents = sorted(agent_ids)
    else:
        scope_agents = sorted(r["id"] for r in out_stores.get("agents", []))
    if bug("counts_omit_zero_stores"):
        counts = {k: len(v) for k, v in out_stores.items() if v}
    else:
        counts = {k: len(out_stores.get(k, [])) for k in mz.STORE_KEYS}
    warnings: list[str] = []
    if any(not is_embedding_field(p.rsplit(".", 1)[-1]) for p in omitted):
        warnings.append("credential fields were omitted (see omitted_fields)")
    if not include_embeddings and any(is_embedding_field(p.rsplit(".", 1)[-1]) for p in omitted):
        warnings.append("embeddings were excluded (include_embeddings was not requested)")
    if external_refs:
        warnings.append(f"{len(external_refs)} references point outside the exported graph (see external_references)")
    warnings.append("the export may overlap concurrent writes")

    manifest: dict[str, Any] = {
        "created_at": now_utc(),
        "memorizz_version": PACKAGE_VERSION,
        "source_provider": SOURCE_PROVIDER,
        "scope": {
            "memory_id": memory_id,
            "agent_id": agent_id,
            "agent_ids": scope_agents,
            "namespaces": sorted(agent_namespaces | ({memory_id} if memory_id else set())),
            "types": selected_types,
            "user_id": user_id if user_scoped else None,
            "user_scoped": user_scoped,
            "application_id": None,
            "application_scoped": False,
        },
        "counts": counts,
        "record_count": sum(counts.values()),
        "includes": includes,
        "warnings": warnings,
    }
    if omitted:
        manifest["omitted_fields"] = sorted(omitted)
    if external_refs:
        manifest["external_references"] = external_refs
    archive = {
        "format": mz.FORMAT,
        "version": mz.VERSION,
        "taxonomy": dict(mz.TAXONOMY),
        "manifest": manifest,
        "stores": out_stores,
    }
    return mz.seal(archive)


# ---------------------------------------------------------------------------------------------
# import


def report(mode: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "ok": False, "dry_run": mode == "preview", "planned": 0, "imported": 0, "skipped": 0,
        "conflicts": [], "id_map": {}, "errors": [],
    }
    base.update(fields)
    return base


def prepare_for_import(store: str, data: dict[str, Any]) -> dict[str, Any]:
    """Standard import: embeddings discarded, agent automations start disabled."""
    clean = strip_fields(data, is_embedding_field, "", set())
    if store == "agents" and isinstance(clean.get("automations"), list):
        clean["automations"] = [dict(a, enabled=False) if isinstance(a, dict) else a for a in clean["automations"]]
    return clean


def build_id_map(archive: dict[str, Any]) -> dict[str, str]:
    """Clone: a new id per distinct record id, a new namespace per distinct namespace (each its own)."""
    id_map: dict[str, str] = {}
    for store in mz.STORE_KEYS:
        for record in archive["stores"][store]:
            id_map.setdefault(record["id"], str(uuid.uuid4()))
    namespaces: set[str] = set()
    for store in mz.STORE_KEYS:
        for record in archive["stores"][store]:
            for _, ns in walk_links(store, record["data"], NAMESPACE_FIELDS):
                namespaces.add(ns)
    for ns in sorted(namespaces):
        id_map.setdefault(ns, f"{ns}-clone-{uuid.uuid4().hex[:12]}")
    return id_map


def remap(store: str, data: dict[str, Any], id_map: dict[str, str], new_id: str) -> dict[str, Any]:
    """Rewrite identity and reference fields (never prose): ids of records in the archive and
    namespaces get their new values; references outside the archive stay as they are."""
    if bug("clone_rewrites_prose"):
        text = json.dumps(data, ensure_ascii=False)
        for old in sorted(id_map, key=len, reverse=True):
            text = text.replace(old, id_map[old])
        return json.loads(text)
    natural = mz.NATURAL_ID.get(store)
    fields = set(LINK_FIELDS) | set(NAMESPACE_FIELDS)

    def mapped(value: Any) -> Any:
        if isinstance(value, str):
            return id_map.get(value, value)
        if isinstance(value, list):
            return [id_map.get(v, v) if isinstance(v, str) else v for v in value]
        return value

    def walk(node: Any, top: bool) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if top and key in ("id", "_id") or (top and key == natural):
                    out[key] = new_id
                elif key in fields:
                    out[key] = mapped(value) if not isinstance(value, dict) else walk(value, False)
                else:
                    out[key] = walk(value, False)
            return out
        if isinstance(node, list):
            return [walk(item, False) for item in node]
        return node

    return walk(data, True)


def read_archive_argument(request: dict[str, Any]) -> Any:
    if "archive" in request:
        archive = request["archive"]
        if isinstance(archive, str):  # an archive passed as its JSON text
            archive = mz.parse_json(archive.encode("utf-8", "surrogatepass"))
        return archive
    if "format" in request or "stores" in request:  # the request is the archive itself
        return request
    raise Refused(report(str(request.get("mode", "")), errors=["archive: missing"]))


def op_import_archive(request: dict[str, Any]) -> dict[str, Any]:
    if "archive" in request:
        mode = request.get("mode", os.environ.get("MEMCONFORM_PARAM_MODE"))
        conflict = request.get("conflict", os.environ.get("MEMCONFORM_PARAM_CONFLICT"))
    else:  # the request is a bare archive; mode and conflict come as parameters
        mode = os.environ.get("MEMCONFORM_PARAM_MODE")
        conflict = os.environ.get("MEMCONFORM_PARAM_CONFLICT")
    if conflict is None:
        conflict = "error"
    mode_text = mode if isinstance(mode, str) else ""
    if mode not in ("preview", "restore", "clone"):
        raise Refused(report(mode_text, errors=["mode: must be one of preview, restore, clone"]))
    if conflict not in ("error", "skip", "replace"):
        raise Refused(report(mode, errors=["conflict: must be one of error, skip, replace"]))
    try:
        archive = read_archive_argument(request)
    except mz.NotWellFormed as exc:
        raise Refused(report(mode, errors=[f"archive: {exc}"])) from None

    if not isinstance(archive, dict):
        raise Refused(report(mode, errors=["archive: must be a JSON object"]))
    try:  # the archive's size is measured on its canonical form (file whitespace does not count)
        body = mz.body_bytes(archive)
        size = len(body) + len(mz.canonical_bytes({"integrity": archive.get("integrity")}))
    except (ValueError, TypeError, RecursionError) as exc:
        raise Refused(report(mode, errors=[f"archive: not representable as canonical JSON: {exc}"])) from None
    if size > mz.MAX_BYTES:
        raise Refused(report(mode, errors=[f"archive: {size} bytes exceed the limit of {mz.MAX_BYTES} bytes (50 MiB)"]))
    errors = mz.validate_archive(archive, body=body)
    if errors:
        raise Refused(report(mode, errors=errors))

    id_map = build_id_map(archive) if mode == "clone" else {}
    plan: list[tuple[str, str, dict[str, Any]]] = []
    for store in mz.STORE_KEYS:
        for record in archive["stores"][store]:
            data = prepare_for_import(store, record["data"])
            if mode == "clone":
                new_id = id_map[record["id"]]
                plan.append((store, new_id, remap(store, data, id_map, new_id)))
            else:
                plan.append((store, record["id"], copy.deepcopy(data)))

    committing = mode != "preview"
    with locked_state(exclusive=committing) as state:
        stores = state["stores"]
        conflicts = [{"memory_type": s, "id": rid} for (s, rid, _) in plan if rid in stores[s]]
        conflict_keys = {(c["memory_type"], c["id"]) for c in conflicts}
        if conflict == "skip":
            to_write = [p for p in plan if (p[0], p[1]) not in conflict_keys]
        else:
            to_write = plan
        skipped = len(plan) - len(to_write)

        if mode == "preview":
            blocked = bool(conflicts) and conflict == "error"
            return report(
                mode, ok=not blocked, planned=len(to_write), skipped=skipped, conflicts=conflicts, id_map=id_map,
                errors=[f"{len(conflicts)} records already exist; conflict policy 'error' would refuse this import"] if blocked else [],
            )

        if conflicts and conflict == "error":
            if bug("restore_conflict_partial_write"):
                written = 0
                for store, rid, data in to_write:
                    if (store, rid) in conflict_keys:
                        break
                    stores[store][rid] = data
                    written += 1
                save_state(state)
                raise Refused(report(mode, planned=len(to_write), imported=written, conflicts=conflicts, id_map=id_map,
                                     errors=[f"conflict: {conflicts[0]['memory_type']} {conflicts[0]['id']} already exists"]))
            raise Refused(report(
                mode, planned=len(to_write), conflicts=conflicts, id_map=id_map,
                errors=[f"{len(conflicts)} records already exist (conflict policy 'error'); nothing was written"],
            ))

        fail_after = state.get("armed_after")
        state["armed_after"] = None  # the hook applies to this committing import only
        imported = 0
        for store, rid, data in to_write:
            if fail_after is not None and imported >= fail_after:
                save_state(state)  # what was committed stays committed
                shown = 0 if bug("failure_progress_unreported") else imported
                raise Refused(report(
                    mode, planned=len(to_write), imported=shown, skipped=skipped, conflicts=conflicts, id_map=id_map,
                    errors=[f"provider failure after {imported} of {len(to_write)} records; "
                            f"{imported} records were committed and remain (restore is not atomic)"],
                ))
            stores[store][rid] = data
            imported += 1
        save_state(state)
        return report(mode, ok=True, planned=len(to_write), imported=imported, skipped=skipped,
                      conflicts=conflicts, id_map=id_map)


# ---------------------------------------------------------------------------------------------
# test hooks


def op_arm_failure(request: dict[str, Any]) -> dict[str, Any]:
    after = request.get("after")
    if after is not None and (not isinstance(after, int) or isinstance(after, bool) or after < 0):
        raise Refused({"error": "after must be a non-negative integer or null"})
    with locked_state(exclusive=True) as state:
        state["armed_after"] = after
        save_state(state)
    return {"ok": True, "armed": after is not None, "after": after}


def op_delete_namespace(request: dict[str, Any]) -> dict[str, Any]:
    memory_id = request.get("memory_id")
    if not isinstance(memory_id, str) or not memory_id:
        raise Refused({"error": "memory_id must be a nonempty string"})
    deleted = 0
    with locked_state(exclusive=True) as state:
        for store in mz.STORE_KEYS:
            records = state["stores"][store]
            doomed = [rid for rid, data in records.items() if data.get("memory_id") == memory_id]
            for rid in doomed:
                del records[rid]
            deleted += len(doomed)
        if deleted:
            save_state(state)
    return {"ok": True, "deleted": deleted}


OPERATIONS = {
    "export": op_export,
    "import_archive": op_import_archive,
    "arm_failure": op_arm_failure,
    "delete_namespace": op_delete_namespace,
}


def write_reply(path: str, body: Any) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(body, fh, ensure_ascii=True, allow_nan=False)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: app.py {op} {input} {output}", file=sys.stderr)
        return 2
    op, input_path, output_path = argv[1], argv[2], argv[3]
    handler = OPERATIONS.get(op)
    if handler is None:
        write_reply(output_path, {"error": f"no such operation: {op}", "operations": sorted(OPERATIONS)})
        return EXIT_NO_OP
    try:
        size = os.path.getsize(input_path)
        if size > MAX_INPUT_BYTES:
            raise Refused({"error": f"request of {size} bytes refused unread (archive limit {mz.MAX_BYTES} bytes)"})
        with open(input_path, "rb") as fh:
            raw = fh.read()
        try:
            request = mz.parse_json(raw) if raw.strip() else {}
        except mz.NotWellFormed as exc:
            if op == "import_archive":
                mode = os.environ.get("MEMCONFORM_PARAM_MODE", "")
                raise Refused(report(mode, errors=[f"archive: {exc}"])) from None
            raise Refused({"error": f"request: {exc}"}) from None
        if not isinstance(request, dict):
            raise Refused({"error": "request must be a JSON object"})
        reply = handler(request)
    except Refused as refused:
        write_reply(output_path, refused.body)
        return EXIT_REFUSED
    write_reply(output_path, reply)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
