"""Known-broken OMP servers breaking one §2/§3.3 rule each: ids, timestamps, validation, updates, search,
export and import, keys and users; registered in table.py."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from memconform.suites.omp.reference.api import (
    ApiError,
    OmpApi,
    Out,
    Principal,
    Req,
)
from memconform.suites.omp.reference.parts import OfflineProvider, Provider
from memconform.suites.omp.reference.store import Filters, Scope


class IdFormatUuid(OmpApi):
    """§2.1: id is a UUID, not "mem_" + 16 alphanumerics."""

    def new_id(self) -> str:
        return str(uuid.uuid4())


class TimestampsNotUtc(OmpApi):
    """§2.1: created_at and updated_at carry a +02:00 offset instead of UTC."""

    def timestamp(self, micros: int) -> str:
        dt = datetime.fromtimestamp(micros / 1_000_000, UTC).astimezone(timezone(timedelta(hours=2)))
        return dt.isoformat(timespec="milliseconds")


class NoValidation(OmpApi):
    """§2.1: the limits are not enforced: 10,001-character content, 21 tags, 51-character tags,
    101-character namespaces, 11 metadata keys and unknown types are accepted and stored."""

    enforce_limits = False


class ServerErrorOnBadInput(OmpApi):
    """§4: a body that is not JSON, or a field of the wrong JSON type, crashes the handler: 500."""

    def parse_json(self, raw: bytes) -> Any:
        import json

        return json.loads(raw)

    def invalid(self, kind: str, field_name: str, message: str, **details: Any) -> ApiError:
        if kind == "type":
            raise TypeError(f"{field_name}: {message}")
        return super().invalid(kind, field_name, message, **details)


class PutReplacesWhole(OmpApi):
    """§3.3 update: "only provided fields are updated", yet tags, namespace, expires_at and metadata
    not in the body are reset."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        reset: dict[str, Any] = {"tags": [], "namespace": None, "expires_at": None, "metadata": {}}
        return super().apply_update(doc, {**reset, **fields}, body)


class PutChangesCreatedAt(OmpApi):
    """§3.3 update: id and created_at are excluded, yet created_at moves to now (or to the body's)
    and a body id renames the memory."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        new = super().apply_update(doc, fields, body)
        new["created_at"] = body["created_at"] if isinstance(body.get("created_at"), str) else new["updated_at"]
        if isinstance(body.get("id"), str):
            new["id"] = body["id"]
        return new


class UpdatedAtFrozen(OmpApi):
    """§2.1 updated_at: an update leaves updated_at where it was."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return dict(super().apply_update(doc, fields, body), updated_at=doc["updated_at"])


class DeleteReturns200AndKeeps(OmpApi):
    """§3.3 delete: answers 200 with the memory instead of 204, and the memory stays."""

    def op_delete(self, who: Principal, req: Req) -> Out:
        return 200, self.visible(who, req.path["memory_id"]), {}


class SearchCaseSensitive(OmpApi):
    """§3.3 search (errata O2): keyword search matches only words of the same case."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        if mode == "keyword":
            return self.store.keyword(scope, filters, q, case_sensitive=True), "keyword"
        return super().search_memories(scope, filters, q, mode)


class SearchModeLies(OmpApi):
    """§3.3 search: semantic or hybrid requested, keyword search run, and mode_used names the mode requested."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        found, _ = super().search_memories(scope, filters, q, "keyword")
        return found, mode


class ExportEnvelopeWrong(OmpApi):
    """§3.3 export: the envelope has no omp_version."""

    def export_envelope(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        out = super().export_envelope(docs)
        out.pop("omp_version")
        return out


class ExportEmbeddingAsStrings(OmpApi):
    """§2.1 export: every memory's embedding is exported as strings (a vector kept as text), not number[]."""

    def export_envelope(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        out = super().export_envelope(docs)
        out["memories"] = [dict(mem, embedding=["0.25", "-0.5", "0.125"]) for mem in out["memories"]]
        return out


class ConflictIgnored(OmpApi):
    """§3.3 import: the conflict strategy is ignored; existing ids are always overwritten."""

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        super().conflict_strategy(req, body)
        return "overwrite"


class ImportAbortsOnBadMemory(OmpApi):
    """§3.3 import (errata O7): the first invalid memory stops the import with a 422; the memories
    before it stay imported (nothing is rolled back) and those after it are never imported."""

    def import_failed(self, errors: list[dict[str, Any]], index: int, given: Any, err: ApiError) -> None:
        raise ApiError("validation_error", f"memory {index}: {err.message}", {"index": index})


class ImportReplacesAll(OmpApi):
    """§3.3 import (errata O7): an import first deletes every existing memory the key can see, so
    memories not in the file are lost whatever the strategy."""

    def before_import(self, who: Principal, strategy: str) -> None:
        with self.store.transaction():
            for doc in self.store.all(self.scope(who)):
                self.store.delete(who.user, doc["id"])


class DuplicateReusesIds(OmpApi):
    """§3.3 import: duplicate must "always create new IDs", yet keeps the file's ids (overwriting)."""

    def import_id(self, strategy: str, given: Any, user: str) -> str:
        return super().import_id("overwrite" if strategy == "duplicate" else strategy, given, user)


class ToolKeyUnscoped(OmpApi):
    """§3.2/§5 OMP-Full: a per-tool key reads and writes every tool's memories, like the global key."""

    def authenticate(self, headers: Any) -> Principal:
        who = super().authenticate(headers)
        return Principal(who.name, who.user, None)


class ToolKeyCannotDelete(OmpApi):
    """§3.2 OMP-Full: a per-tool key may create and read its own tool's memories but is refused deleting
    them (the restriction applied to every destructive call, not only other tools')."""

    def op_delete(self, who: Principal, req: Req) -> Out:
        if who.tool is not None:
            return self.error_out(ApiError("forbidden", "tool keys may not delete"))
        return super().op_delete(who, req)


class UsersNotIsolated(OmpApi):
    """§5 OMP-Full multi-user: the other user's key sees and writes the default user's memories."""

    def authenticate(self, headers: Any) -> Principal:
        who = super().authenticate(headers)
        return Principal(who.name, "default", who.tool)


class ExtractStoresWithoutKey(OmpApi):
    """§3.3 extract/compress: with no AI key configured the answer is 422 no_api_key, yet memories
    were extracted (by a local stand-in) and stored."""

    def provider_for(self, body: dict[str, Any]) -> Provider:
        return self.provider or OfflineProvider()

    def extracted(self, who: Principal, docs: list[dict[str, Any]]) -> Out:
        return self.error_out(ApiError("no_api_key", "no AI API key is configured for extract/compress"))

    def compressed(self, who: Principal, doc: dict[str, Any]) -> Out:
        return self.error_out(ApiError("no_api_key", "no AI API key is configured for extract/compress"))


class ContentLogged(OmpApi):
    """§7: "Memory content MUST NOT be logged in plain text": each audit line carries the memory's content."""

    def audit_line(self, at: str, who: Principal, op: str, memory_id: str | None) -> str:
        doc = self.store.get(who.user, memory_id) if memory_id else None
        content = doc.get("content") if isinstance(doc, dict) else None
        return f"{super().audit_line(at, who, op, memory_id)} content={content!r}"
