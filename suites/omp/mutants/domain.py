"""Known-broken OMP servers that only data drawn from the domain table reaches: an optional field left
out, a parameter repeated or empty where the suite's literals never are, an id of another shape, a
pair of parameters that only a covering array puts together. One broken rule each; registered in
mutants/table.py."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from memconform.suites.omp.reference.api import OmpApi, Out, Principal, Req
from memconform.suites.omp.reference.store import Filters


def _multi(req: Req) -> list[tuple[str, str]]:
    return list(getattr(req.params, "multi_items", lambda: list(req.params.items()))())


class MetadataRequired500(OmpApi):
    """§2.1 `metadata?`: a write without metadata crashes (500); an import stores the items before it,
    then ends with a 500 (the import is not transactional)."""

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        if not partial and "metadata" not in body:
            raise RuntimeError("Cannot convert undefined or null to object")
        return super().validate_memory(body, partial=partial)


class RepeatedFilter500(OmpApi):
    """§3.3 list: a repeated `type=` or `tool=` parameter crashes the handler (500); repeated `tags` works."""

    def op_list(self, who: Principal, req: Req) -> Out:
        names = [k for k, _ in _multi(req)]
        if names.count("type") > 1 or names.count("tool") > 1:
            raise RuntimeError("expected a string, got a list")
        return super().op_list(who, req)


class OffsetIgnoredWhenAscending(OmpApi):
    """§3.3 list: with sort=created_at_asc the offset is echoed but every page starts at the first memory."""

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = super().list_page(who, filters, sort, limit, 0 if sort == "created_at_asc" else offset)
        return docs, total


class ToolIgnoredByUpdateSort(OmpApi):
    """§3.3 list: with sort=updated_at_desc (a query of its own) the tool filter is dropped."""

    def list_page(self, who: Principal, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        if sort == "updated_at_desc":
            filters = dataclasses.replace(filters, tool=None)
        return super().list_page(who, filters, sort, limit, offset)


class SearchLimitIgnoredWithTags(OmpApi):
    """§3.3 search: when a tags filter is given the limit is not applied; every match is served."""

    def op_search(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        if body.get("tags"):
            body.pop("limit", None)
            req = dataclasses.replace(req, raw=json.dumps(body).encode())
        return super().op_search(who, req)


class ConflictEdges500(OmpApi):
    """§3.3 import: an empty, repeated or upper-case `conflict` parameter crashes the handler (500)."""

    def op_import(self, who: Principal, req: Req) -> Out:
        values = [v for k, v in _multi(req) if k == "conflict"]
        if len(values) > 1 or any(v == "" or v != v.lower() for v in values):
            raise RuntimeError("unhandled conflict strategy")
        return super().op_import(who, req)


class MalformedId500(OmpApi):
    """§3.3 get/update/delete: an id that is not "mem_" + 16 alphanumerics crashes the lookup (500) instead of 404."""

    def visible(self, who: Principal, memory_id: str) -> dict[str, Any]:
        if not re.fullmatch(r"mem_[A-Za-z0-9]{16}", memory_id):
            raise RuntimeError("invalid input syntax for type memory_id")
        return super().visible(who, memory_id)


class UpdateNullMetadata500(OmpApi):
    """§3.3 update: a patch with `"metadata": null` crashes (500); on create null is taken as {}."""

    def op_update(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        if "metadata" in body and body["metadata"] is None:
            raise RuntimeError("Cannot read properties of null (reading 'constructor')")
        return super().op_update(who, req)


MUTANT_CLASSES: dict[str, type[OmpApi]] = {
    "metadata_required_500": MetadataRequired500,
    "repeated_filter_500": RepeatedFilter500,
    "offset_ignored_when_ascending": OffsetIgnoredWhenAscending,
    "search_limit_ignored_with_tags": SearchLimitIgnoredWithTags,
    "conflict_edges_500": ConflictEdges500,
    "malformed_id_500": MalformedId500,
    "update_null_metadata_500": UpdateNullMetadata500,
}

EXPECTED_KILLS: dict[str, set[str]] = {
    "metadata_required_500": {"omp.domain_create_every_class", "omp.domain_import_every_class"},
    "repeated_filter_500": {"omp.domain_list_parameters"},
    "offset_ignored_when_ascending": {"omp.domain_list_parameters"},
    "search_limit_ignored_with_tags": {"omp.domain_search_parameters"},
    "conflict_edges_500": {"omp.domain_conflict_on_existing_id"},
    "malformed_id_500": {"omp.domain_memory_ids"},
    "update_null_metadata_500": {"omp.domain_update_every_class"},
}

EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "metadata_required_500": {("omp.domain_create_every_class", "memory.metadata:absent"),
                              ("omp.domain_import_every_class", "a server error")},
    "repeated_filter_500": {("omp.domain_list_parameters", "list.type:repeated")},
    "offset_ignored_when_ascending": {("omp.domain_list_parameters", "not the page of the matching memories")},
    "search_limit_ignored_with_tags": {("omp.domain_search_parameters", "more memories than the limit")},
    "conflict_edges_500": {("omp.domain_conflict_on_existing_id", "a server error")},
    "malformed_id_500": {("omp.domain_memory_ids", "a server error")},
    "update_null_metadata_500": {("omp.domain_update_every_class", "memory.metadata:null")},
}

# broken only in a pair of parameters the `ci` covering subset does not put together: the `default`
# profile's pairwise rows catch it (tests/test_omp_domain.py serves it under both profiles)
PAIR_ONLY: dict[str, tuple[type[OmpApi], str, str]] = {
    "tool_ignored_by_update_sort": (ToolIgnoredByUpdateSort, "omp.domain_list_parameters", "served memories outside the filters"),
}


def tool_ignored_by_update_sort() -> Any:
    """`python:memconform.suites.omp.mutants.domain:tool_ignored_by_update_sort`: the pair-only mutant, served."""
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=ToolIgnoredByUpdateSort), label="mutant:omp:tool_ignored_by_update_sort")
