"""POST /v1/import: one memory at a time, each failure reported in "errors" without stopping the batch."""

from api import MAX_IMPORT, ApiError, Call, Reply, import_timestamp, valid_import_id
from model import Invalid, format_timestamp, memory_from_request, now_utc

CONFLICT_STRATEGIES = ("skip", "overwrite", "duplicate")


class ItemRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def run_import(api, call: Call) -> Reply:
    conflict = call.query.get("conflict", "skip")
    if conflict not in CONFLICT_STRATEGIES:
        raise ApiError(
            422,
            "validation_error",
            f"conflict must be one of {', '.join(CONFLICT_STRATEGIES)}",
            {"field": "conflict"},
        )
    items = export_items(call.body)
    imported, skipped, errors = 0, 0, []
    for index, item in enumerate(items):
        try:
            outcome = import_one(api, call, item, conflict)
        except ItemRefused as refusal:
            if "import_aborts_midway" in api.bugs:
                raise ApiError(
                    422, "validation_error", f"memories[{index}]: {refusal}", {"index": index}
                ) from None
            item_id = item.get("id") if isinstance(item, dict) else None
            errors.append({"index": index, "id": item_id, "error": refusal.code, "message": str(refusal)})
            continue
        if outcome == "skipped":
            skipped += 1
        else:
            imported += 1
    api.audit(
        call.principal,
        "import",
        None,
        imported=imported,
        skipped=skipped,
        errors=len(errors),
        conflict=conflict,
    )
    return Reply(200, {"imported": imported, "skipped": skipped, "errors": errors})


def export_items(body: object) -> list:
    if not isinstance(body, dict):
        raise ApiError(422, "validation_error", "the body must be an OMP export object", {"field": "body"})
    version = body.get("omp_version")
    if version is not None and version not in ("0.1", "0.2"):
        raise ApiError(
            422, "validation_error", f"unsupported omp_version {version!r}", {"field": "omp_version"}
        )
    items = body.get("memories")
    if not isinstance(items, list):
        raise ApiError(422, "validation_error", "memories must be an array", {"field": "memories"})
    if len(items) > MAX_IMPORT:
        raise ApiError(
            422, "validation_error", f"at most {MAX_IMPORT} memories per import", {"field": "memories"}
        )
    return items


def import_one(api, call: Call, item: object, conflict: str) -> str:
    stamp = format_timestamp(now_utc())
    try:
        memory = memory_from_request(item, stamp, api.count_bytes())
        created_at = import_timestamp(item, "created_at", stamp)
        updated_at = import_timestamp(item, "updated_at", created_at)
    except Invalid as error:
        raise ItemRefused("validation_error", str(error)) from None
    if not call.principal.may_write_as(memory["source"]["tool"]):
        raise ItemRefused("forbidden", f"this key may only import memories of tool {call.principal.tool!r}")
    memory.update(created_at=created_at, updated_at=updated_at)
    given_id = item.get("id")
    if given_id is not None and not valid_import_id(given_id):
        raise ItemRefused("validation_error", f"id {given_id!r} is not 'mem_' + 16 alphanumeric characters")
    with api.store.lock:
        existing = api.store.get(call.principal.user, given_id) if given_id else None
        if conflict == "duplicate":
            keep = (
                given_id
                if "import_duplicate_reuses_id" in api.bugs and given_id and existing is None
                else None
            )
            api.store.put(api.new_record(call.principal, memory, keep))
            return "imported"
        if existing is not None and conflict == "skip":
            return "skipped"
        if existing is not None and not api.readable(call.principal, existing):
            raise ItemRefused("forbidden", f"memory {given_id} belongs to another tool")
        taken_elsewhere = given_id and existing is None and api.store.get_from_anyone(given_id) is not None
        record = api.new_record(call.principal, memory, None if taken_elsewhere else given_id)
        api.store.put(record)
        return "imported"
