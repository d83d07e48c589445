"""Known-broken OMP servers of the kinds found in real implementations: filters after paging,
nulls that cannot clear, half-done imports, narrow character sets, limits in bytes, parameters that
crash, sort ignored where import restamps. One broken rule each; registered in table.py."""

from __future__ import annotations

import re
from typing import Any

from memconform.suites.omp.reference.api import ApiError, OmpApi, Out, Principal, Req
from memconform.suites.omp.reference.store import Filters, Scope

IMPORT_BODY_CAP = 256 * 1024  # a web framework default of the kind (Express: 100 KB)


class FilterAfterPaging(OmpApi):
    """§3.3 list: the page is cut from every memory first and the filters applied to the page; total
    counts the unfiltered set."""

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = self.store.page(self.scope(who), Filters(), sort, limit, offset)
        wanted = {d["id"] for d in self.store.page(self.scope(who), filters, sort, -1, 0)[0]}
        return [d for d in docs if d["id"] in wanted], total


class PutIgnoresNull(OmpApi):
    """§3.3 update: a field given as null is taken as not given, so expires_at and namespace cannot be cleared."""

    def apply_update(self, doc: dict[str, Any], fields: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return super().apply_update(doc, {k: v for k, v in fields.items() if v is not None}, body)


class SearchTypeIgnored(OmpApi):
    """§3.3 search: the type filter of the request body is validated but not applied."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        filters.type = None
        return super().search_memories(scope, filters, q, mode)


class OverwriteDeletesFirst(OmpApi):
    """§3.3 import overwrite: the existing row is deleted before the new memory is validated; an invalid
    one then fails to insert and the memory is gone."""

    def import_one(self, who: Principal, item: Any, strategy: str) -> str:
        if strategy == "overwrite" and isinstance(item, dict) and isinstance(item.get("id"), str):
            self.store.delete(who.user, item["id"])
        return super().import_one(who, item, strategy)


class OverwriteDeletesFirstLax(OverwriteDeletesFirst):
    """The public server's shape of the same bug: §2.1's limits and types are not enforced (content over
    10,000 characters and an unknown type are stored), and an overwrite deletes the existing row before
    the insert, so only a memory it does refuse (no source) reaches the loss."""

    enforce_limits = False


class ConflictFromBodyOnly(OmpApi):
    """§3.3 "conflict strategies (query param)": the strategy is read from a body field `conflict` of the
    export object, and the query parameter is ignored (the careful implementer's body-only reading)."""

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        strategy = body.get("conflict", "skip")
        if strategy not in ("skip", "overwrite", "duplicate"):
            raise self.invalid("value", "conflict", f"unknown conflict strategy {str(strategy)[:40]!r}")
        return str(strategy)


class ImportPartial500(OmpApi):
    """§3.3 import: memories are stored one by one and the first invalid one ends the import with a 500;
    those before it stay stored, those after it are dropped, and the answer does not say so."""

    def import_failed(self, errors: list[dict[str, Any]], index: int, given: Any, err: ApiError) -> None:
        raise RuntimeError(f"import failed at item {index}")


class ImportBodyCap(OmpApi):
    """§3.3 import: a body over 256 KB is refused (413), so the server's own export cannot be imported back
    once the store grows."""

    def op_import(self, who: Principal, req: Req) -> Out:
        if len(req.raw) > IMPORT_BODY_CAP:
            raise ApiError("payload_too_large", f"import bodies are limited to {IMPORT_BODY_CAP} bytes", status=413)
        return super().op_import(who, req)


class TagsAsciiOnly(OmpApi):
    """§2.1 "Arbitrary tags": tags are restricted to lower-case ASCII letters, digits and - _ : ."""

    TAG_RE = re.compile(r"^[a-z0-9_:.-]+$")

    def check_tags(self, value: Any, name: str = "tags") -> list[str]:
        tags = super().check_tags(value, name)
        for tag in tags:
            if not self.TAG_RE.match(tag):
                raise self.invalid("value", name, f"tag {tag[:40]!r} may hold only a-z, 0-9, - _ : .")
        return tags


class LimitsInBytes(OmpApi):
    """§2.1 "Max 10,000 chars" (and 50, 100): measured in UTF-8 bytes, so non-ASCII text at the limit is refused."""

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        text = super().check_string(value, name, max_len, limit_kind)
        if max_len is not None and len(text.encode("utf-8")) > max_len:
            raise self.invalid(limit_kind, name, f"{name} is over {max_len} bytes", max=max_len)
        return text


class QueryEdges500(OmpApi):
    """§3.3 list: an empty parameter (`type=`) or a repeated one (`tags=a&tags=b`) crashes the handler: 500."""

    def op_list(self, who: Principal, req: Req) -> Out:
        items = list(getattr(req.params, "multi_items", lambda: list(req.params.items()))())
        if any(v == "" for _, v in items) or len({k for k, _ in items}) != len(items):
            raise RuntimeError("query parameter handling failed")
        return super().op_list(who, req)


class ImportRestampsSortIgnored(OmpApi):
    """§3.3 list: sort is ignored (always created_at_desc); and import stamps created_at with the import
    time, so imported data all carry one timestamp and cannot show the order."""

    def list_sort(self, params: Any) -> str:
        super().list_sort(params)
        return "created_at_desc"

    def import_one(self, who: Principal, item: Any, strategy: str) -> str:
        if isinstance(item, dict):
            item = {k: v for k, v in item.items() if k not in ("created_at", "updated_at")}
        return super().import_one(who, item, strategy)


MUTANT_CLASSES: dict[str, type[OmpApi]] = {
    "filter_after_paging": FilterAfterPaging,
    "put_ignores_null": PutIgnoresNull,
    "search_type_ignored": SearchTypeIgnored,
    "overwrite_deletes_first": OverwriteDeletesFirst,
    "overwrite_deletes_first_lax": OverwriteDeletesFirstLax,
    "conflict_from_body_only": ConflictFromBodyOnly,
    "import_partial_500": ImportPartial500,
    "import_body_cap": ImportBodyCap,
    "tags_ascii_only": TagsAsciiOnly,
    "limits_in_bytes": LimitsInBytes,
    "query_edges_500": QueryEdges500,
    "import_restamps_sort_ignored": ImportRestampsSortIgnored,
}

EXPECTED_KILLS: dict[str, set[str]] = {
    "filter_after_paging": {"omp.list_filter_type", "omp.list_filter_tool", "omp.list_total_counts_matches",
                            "omp.model_based_sequences"},
    "put_ignores_null": {"omp.update_clears_nullable"},
    "search_type_ignored": {"omp.search_filters"},
    "overwrite_deletes_first": {"omp.import_failed_overwrite_keeps_old"},
    "overwrite_deletes_first_lax": {"omp.import_failed_overwrite_keeps_old", "omp.import_bad_memory_reported"},
    "conflict_from_body_only": {"omp.import_overwrite", "omp.import_duplicate"},
    "import_partial_500": {"omp.import_bad_memory_reported"},
    "import_body_cap": {"omp.export_import_round_trip"},
    "tags_ascii_only": {"omp.accepts_arbitrary_strings"},
    "limits_in_bytes": {"omp.accepts_values_at_limits"},
    "query_edges_500": {"omp.list_empty_and_repeated_parameters"},
    "import_restamps_sort_ignored": {"omp.list_sort_orders"},
}


class StaleSearchIndex(OmpApi):
    """§3.3 search after update: the keyword index keeps each memory's words as first created, so an
    updated memory is found by its old words and not by its new ones (a missed index refresh)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.first_content: dict[str, str] = {}

    def op_create(self, who: Principal, req: Req) -> Out:
        status, doc, headers = super().op_create(who, req)
        self.first_content[doc["id"]] = doc["content"]
        return status, doc, headers

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        if mode != "keyword":
            return super().search_memories(scope, filters, q, mode)
        words = set(q.lower().split())
        docs = self.store.page(scope, filters, "created_at_desc", -1, 0)[0]
        return [d for d in docs if words <= set(self.first_content.get(d["id"], d["content"]).lower().split())], "keyword"


MUTANT_CLASSES["stale_search_index"] = StaleSearchIndex
EXPECTED_KILLS["stale_search_index"] = {"omp.model_based_sequences"}


class KeywordWholeQuery(OmpApi):
    """§3.3 keyword search: q is matched as one word, so a query of two words finds nothing, not even a
    memory holding them side by side (no reading of full-text search gives that)."""

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        if mode != "keyword":
            return super().search_memories(scope, filters, q, mode)
        docs = self.store.page(scope, filters, "created_at_desc", -1, 0)[0]
        return [d for d in docs if q.lower() in d["content"].lower().split()], "keyword"


MUTANT_CLASSES["keyword_whole_query"] = KeywordWholeQuery
EXPECTED_KILLS["keyword_whole_query"] = {"omp.search_keyword_all_words"}


class LenientJson(OmpApi):
    """§4 (the hostile-JSON battery): request bodies are read by a lenient parser: duplicate names (last
    wins), NaN and Infinity, lone surrogates and a BOM are accepted and stored, and deep nesting crashes it (500)."""

    def parse_json(self, raw: bytes) -> Any:
        import json

        if not raw.strip():
            return super().parse_json(raw)
        try:
            return json.loads(raw.decode("utf-8-sig", "surrogatepass"))
        except (UnicodeDecodeError, ValueError):  # deep nesting is not caught: RecursionError, a 500
            return super().parse_json(raw)


MUTANT_CLASSES["lenient_json"] = LenientJson
EXPECTED_KILLS["lenient_json"] = {"omp.hostile_json_create_refused", "omp.hostile_json_import_refused",
                                  "omp.hostile_json_search_refused"}


# the failure branch each mutant must reach: (check id, a fragment of the failure's title)
EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "filter_after_paging": {("omp.list_filter_type", "filtered after paging"), ("omp.list_total_counts_matches", "total is not")},
    "put_ignores_null": {("omp.update_clears_nullable", "did not clear")},
    "search_type_ignored": {("omp.search_filters", "search with type")},
    "overwrite_deletes_first": {("omp.import_failed_overwrite_keeps_old", "lost the existing memory")},
    "overwrite_deletes_first_lax": {("omp.import_failed_overwrite_keeps_old", "(no source) lost the existing memory"),
                                    ("omp.import_failed_overwrite_keeps_old", "stored an invalid memory"),
                                    ("omp.import_bad_memory_reported", "the invalid memory was stored")},
    "conflict_from_body_only": {("omp.import_overwrite", "the body-only reading of errata O1"),
                                ("omp.import_duplicate", "the body-only reading of errata O1")},
    "import_partial_500": {("omp.import_bad_memory_reported", "a server error")},
    "import_body_cap": {("omp.export_import_round_trip", "import")},
    "tags_ascii_only": {("omp.accepts_arbitrary_strings", "was refused")},
    "limits_in_bytes": {("omp.accepts_values_at_limits", "(non-ASCII characters) was refused")},
    "query_edges_500": {("omp.list_empty_and_repeated_parameters", "a server error")},
    "import_restamps_sort_ignored": {("omp.list_sort_orders", "out of order")},
    "stale_search_index": {("omp.model_based_sequences", "the target left the model")},
    "keyword_whole_query": {("omp.search_keyword_all_words", "as a phrase is not found")},
    "lenient_json": {("omp.hostile_json_create_refused", ""), ("omp.hostile_json_search_refused", "")},
}
