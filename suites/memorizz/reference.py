"""Reference MemoRizz archive producer and consumer over SQLite holding the 13 stores, in process.

Operations (suites/memorizz/errata.md, "Target operations"):
    export          {"memory_id"?, "agent_id"?, "types"?, "include_embeddings"?, "include_delegates"?} -> archive
    import_archive  {"archive", "mode": preview|restore|clone, "conflict"?: error|skip|replace} -> report
    arm_failure     {"after": N}: the next committing import fails after N records (a provider failure)
A namespace is data.memory_id (agents list theirs in data.memory_ids); records are committed one by one,
so a failed restore leaves (and reports) partial progress, as the spec says.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sqlite3
import uuid
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.kit.shared_rules import secret_key
from memconform.suites.memorizz import format as memorizz
from memconform.targets.base import Rejected

WARNING_RULES = {"created_at_utc", "external_references_reported"}  # SHOULD-level: never refuse for them
OWNER_FIELDS = ("agent_id", "owner_agent_id")


class ReferenceArchiveStore:
    PROVIDER = "memconform-reference-sqlite"
    MAX_BYTES = memorizz.SIZES["50MiB"]
    MAX_RECORDS = 100_000

    def __init__(self, db: str = ":memory:") -> None:
        self.db = sqlite3.connect(db, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS records (store TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,"
                        " PRIMARY KEY (store, id))")
        self.fail_after: int | None = None

    def close(self) -> None:
        self.db.close()

    # ---- storage -------------------------------------------------------------------------------
    def rows(self, stores: set[str] | None = None) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {k: [] for k in memorizz.STORES}
        for store, rid, data in self.db.execute("SELECT store, id, data FROM records ORDER BY rowid"):
            if stores is None or store in stores:
                out[store].append({"id": rid, "data": json.loads(data)})
        return out

    def exists(self, store: str, rid: str) -> bool:
        return self.db.execute("SELECT 1 FROM records WHERE store = ? AND id = ?", (store, rid)).fetchone() is not None

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO records (store, id, data) VALUES (?, ?, ?)",
                            (store, rid, json.dumps(data, ensure_ascii=False)))

    # ---- producer ------------------------------------------------------------------------------
    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        types = set(body.get("types") or memorizz.STORES)
        unknown = types - set(memorizz.STORES)
        if unknown:
            raise Rejected({"error": f"unknown store keys {sorted(unknown)}"})
        everything = self.rows()
        memory_id, agent_id = body.get("memory_id"), body.get("agent_id")
        agents = {r["id"]: r["data"] for r in everything["agents"]}
        agent_ids: set[str] = set()
        namespaces: set[str] = set()
        if agent_id is not None:
            if agent_id not in agents:
                raise Rejected({"error": f"agent {agent_id!r} not found"})
            queue = [agent_id]
            while queue:
                current = queue.pop()
                if current in agent_ids:
                    continue
                agent_ids.add(current)
                namespaces.update(agents[current].get("memory_ids") or [])
                if body.get("include_delegates", True):
                    queue += [d for d in agents[current].get("delegates") or [] if d in agents]
        picked: dict[str, list[dict[str, Any]]] = {k: [] for k in memorizz.STORES}
        for store in memorizz.STORES:
            if store not in types:
                continue
            for record in everything[store]:
                data = record["data"]
                if store == "agents":
                    keep = (agent_id is None or record["id"] in agent_ids) and (
                        memory_id is None or memory_id in (data.get("memory_ids") or []))
                else:
                    owner = next((data[f] for f in OWNER_FIELDS if data.get(f)), None)
                    keep = (agent_id is None or owner in agent_ids or (owner is None and data.get("memory_id") in namespaces)) \
                        and (memory_id is None or data.get("memory_id") == memory_id)
                if keep:
                    picked[store].append(record)
        return picked

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        body = dict(body or {})
        include_embeddings = body.get("include_embeddings") is True
        archive = memorizz.empty_archive(source_provider=self.PROVIDER)
        omitted: list[str] = []
        for store, records in self.select(body).items():
            for record in records:
                data = self.clean(record["data"], omitted, f"{store}.{record['id']}", keep_embeddings=include_embeddings)
                archive["stores"][store].append({"id": record["id"], "data": data})
        manifest = archive["manifest"]
        manifest["scope"].update({"agent_id": body.get("agent_id"), "memory_id": body.get("memory_id"),
                                  "agent_ids": sorted({r["id"] for r in archive["stores"]["agents"]})})
        manifest["includes"].update({"delegates": body.get("include_delegates", True) is not False,
                                     "embeddings": include_embeddings})
        external = sorted(memorizz.external_references(archive))
        if omitted:
            manifest["omitted_fields"] = sorted(set(omitted))
            manifest["warnings"].append("Credential fields were omitted; reconnect providers and tools after restore.")
        if external:
            manifest["external_references"] = external
            manifest["warnings"].append(f"{len(external)} explicit reference(s) point outside the archive.")
        manifest["warnings"].append("A memory archive, not a database snapshot: attachments are not included.")
        return self.seal(archive)

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        return memorizz.seal(archive)

    def clean(self, data: Any, omitted: list[str], where: str, keep_embeddings: bool = False,
              parent: str = "") -> Any:
        """Credentials out (a JSON Schema's property names stay); embeddings out unless asked for."""
        if isinstance(data, dict):
            out = {}
            for k, v in data.items():
                if secret_key(k) and parent != "properties" and v not in (None, ""):
                    omitted.append(f"{where}.{k}")
                    continue
                if memorizz.embedding_key(k) is not None and not keep_embeddings:  # every reading's (errata M8)
                    continue
                out[k] = self.clean(v, omitted, f"{where}.{k}", keep_embeddings, k)
            return out
        if isinstance(data, list):
            return [self.clean(v, omitted, where, keep_embeddings, parent) for v in data]
        return data

    # ---- consumer ------------------------------------------------------------------------------
    def problems(self, archive: Any) -> list[str]:
        if not isinstance(archive, dict):
            return ["the archive is not an object"]
        total = memorizz.record_total(archive)
        if total > self.MAX_RECORDS:
            return [f"{total} records, over the limit of {self.MAX_RECORDS}"]
        found = memorizz.scan(archive, memorizz.NATURAL_IDS_IMPLIED)
        out = [f"{p.rule}: {p.title} at {p.path}" for rule, ps in found.items() if rule not in WARNING_RULES for p in ps]
        if out or "integrity" not in archive:
            return out
        try:
            data = memorizz.canonical_bytes(archive)
        except ValueError as exc:
            return [f"numbers_finite: {exc}"]
        if len(data) > self.MAX_BYTES:
            return [f"{len(data)} bytes, over the limit of {self.MAX_BYTES}"]
        if not self.digest_ok(archive, data):
            return ["integrity_digest: the checksum does not match"]
        return []

    def digest_ok(self, archive: dict[str, Any], canonical: bytes) -> bool:
        return hashlib.sha256(canonical).hexdigest() == archive["integrity"]["digest"]

    def new_id(self, old: str) -> str:
        return str(uuid.uuid4())

    def id_map(self, archive: dict[str, Any]) -> dict[str, str]:
        """Clone mapping: every record id and every namespace gets a new id of its own."""
        mapping: dict[str, str] = {}
        for _, record in memorizz.records_of(archive):
            mapping.setdefault(record["id"], self.new_id(record["id"]))
            data = record["data"]
            for ns in [data.get("memory_id"), *(data.get("memory_ids") or [])]:
                if isinstance(ns, str) and ns:
                    mapping.setdefault(ns, self.new_namespace(ns, mapping))
        return mapping

    def new_namespace(self, old: str, mapping: dict[str, str]) -> str:
        return f"ns-{uuid.uuid4()}"

    def rewrite(self, value: Any, mapping: dict[str, str], key: str = "") -> Any:
        """Only documented identity and reference fields are rewritten, never prose."""
        if isinstance(value, dict):
            return {k: self.rewrite(v, mapping, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.rewrite(v, mapping, key) for v in value]
        if isinstance(value, str) and key in memorizz.REFERENCE_FIELDS:
            return mapping.get(value, value)
        return value

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid = mapping.get(record["id"], record["id"])
        data = self.rewrite(copy.deepcopy(record["data"]), mapping)
        data = self.clean(data, [], rid)  # credentials never re-enter; a standard import drops embeddings
        for key in ("id", "_id", memorizz.NATURAL_IDS_IMPLIED.get(store)):
            if key and key in data:
                data[key] = rid
        if store == "agents":
            data["automations_enabled"] = False
            if isinstance(data.get("automations"), list):  # errata M10: the list spelling too
                data["automations"] = [dict(a, enabled=False) if isinstance(a, dict) else a for a in data["automations"]]
        return rid, data

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        body = parse_or_reject(body)  # raw bytes (the hostile-JSON battery): strict JSON or refused
        body = body if isinstance(body, dict) else {}
        archive, mode, conflict = body.get("archive"), body.get("mode", "preview"), body.get("conflict", "error")
        if mode not in ("preview", "restore", "clone") or conflict not in ("error", "skip", "replace"):
            raise Rejected({"ok": False, "errors": [f"unknown mode {mode!r} or conflict policy {conflict!r}"]})
        bad = self.problems(archive)
        if bad:
            raise Rejected({"ok": False, "errors": bad[:50]})
        assert isinstance(archive, dict)
        mapping = self.id_map(archive) if mode == "clone" else {}
        planned = [(store, *self.incoming(store, record, mapping)) for store, record in memorizz.records_of(archive)]
        conflicts = self.conflicts(planned)
        report: dict[str, Any] = {"ok": not (conflicts and conflict == "error"), "dry_run": mode == "preview",
                                  "planned": len(planned), "imported": 0, "skipped": 0,
                                  "conflicts": conflicts, "id_map": mapping, "errors": [],
                                  "warnings": ["Embeddings are not restored; automations start disabled."]}
        if mode == "preview":
            return report
        if conflicts and conflict == "error":
            raise Rejected(report, "destination records already exist")
        taken = {(c["memory_type"], c["id"]) for c in conflicts}
        for store, rid, data in planned:
            if (store, rid) in taken and conflict == "skip":
                report["skipped"] += 1
                continue
            if self.fail_after is not None and report["imported"] >= self.fail_after:
                self.fail_after = None
                report["ok"] = False
                report["errors"].append({"memory_type": store, "id": rid, "error": "provider failure (armed)"})
                raise Rejected(self.progress(report), "import failed part way")
            self.write(store, rid, data)
            report["imported"] += 1
        return report

    def conflicts(self, planned: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, str]]:
        return [{"memory_type": store, "id": rid} for store, rid, _ in planned if self.exists(store, rid)]

    def progress(self, report: dict[str, Any]) -> dict[str, Any]:
        return report

    def arm_failure(self, body: Any = None, **params: Any) -> dict[str, Any]:
        after = (body or {}).get("after", 0)
        self.fail_after = None if after is None else int(after)  # {"after": null} disarms
        return {"armed": self.fail_after}

    def delete_namespace(self, body: Any = None, **params: Any) -> dict[str, Any]:
        """Remove every record of one namespace (and agents bound only to it): what a test run cleans up."""
        ns = (body or {}).get("memory_id")
        if not isinstance(ns, str) or not ns:
            raise Rejected({"error": "memory_id required"})
        return {"deleted": self.remove_namespaces([ns])[ns]}

    def delete_namespaces(self, body: Any = None, **params: Any) -> dict[str, Any]:
        """delete_namespace for many namespaces in one call: {"deleted": {memory_id: records removed}}."""
        names = (body or {}).get("memory_ids")
        if not isinstance(names, list) or not names or not all(isinstance(ns, str) and ns for ns in names):
            raise Rejected({"error": "memory_ids required: a non-empty list of namespaces"})
        return {"deleted": self.remove_namespaces(names)}

    def remove_namespaces(self, names: list[str]) -> dict[str, int]:
        wanted, gone = set(names), dict.fromkeys(names, 0)
        for store, records in self.rows().items():
            for record in records:
                data = record["data"]
                ns = next((n for n in wanted if data.get("memory_id") == n
                           or store == "agents" and (data.get("memory_ids") or []) == [n]), None)
                if ns is not None:
                    with self.db:
                        self.db.execute("DELETE FROM records WHERE store = ? AND id = ?", (store, record["id"]))
                    gone[ns] += 1
        return gone
