"""Root causes seen against the public OMP server (issue 35 item 1): an export holding the invalid items
memconform itself imported is explained by the import that stored them, and a known strategy sent only in
the query to a body-only server is explained by that reading; an export that corrupts what it was handed,
and an unknown strategy accepted in the body too, stay failures of their own."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Failure
from memconform.run.session import execute_run
from memconform.suites.omp.mutants.paths import ConflictFromBodyOnly, FilterAfterPaging
from memconform.suites.omp.reference.api import OmpApi
from memconform.suites.omp.reference.parts import DEFAULT_USER
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target

MUTANTS = "python:memconform.suites.omp.mutants"
EXPORT_CHECKS = ["export_document_content_and_type", "export_document_timestamps_utc"]


def run(target: str, checks: list[str]) -> Any:
    return execute_run(["omp"], target, Profile.named("ci"), report_dir=None, check_ids=[f"omp.{c}" for c in checks])


def failures(outcome: Any, check: str) -> list[Failure]:
    return [f for r in outcome.results if r.check_id == f"omp.{check}" for f in r.failures]


class StoresImportsAsSent(OmpApi):
    """Imports without limits (content over 10,000 characters stored as sent), as the public server does."""

    enforce_limits = False


def stores_imports_as_sent() -> ServedTarget:
    return serve_target(ServerSpec(api_class=StoresImportsAsSent), label="fake:omp:stores-imports-as-sent")


class ExportDropsZone(StoresImportsAsSent):
    """The control: besides, its export serves every created_at without the zone (a fault of the export)."""

    def op_export(self, who: Any, req: Any) -> Any:
        status, doc, headers = super().op_export(who, req)
        doc = dict(doc, memories=[dict(m, created_at=str(m.get("created_at", "")).rstrip("Z")) for m in doc["memories"]])
        return status, doc, headers


def export_drops_zone() -> ServedTarget:
    return serve_target(ServerSpec(api_class=ExportDropsZone), label="fake:omp:export-drops-zone")


@pytest.mark.slow
def test_an_export_holding_the_over_long_memories_memconform_imported_is_explained_by_that_import() -> None:
    outcome = run(f"python:{__name__}:stores_imports_as_sent", ["import_bad_memory_reported", *EXPORT_CHECKS])
    assert any("the invalid memory was stored" in f.title for f in failures(outcome, "import_bad_memory_reported"))
    found = failures(outcome, "export_document_content_and_type")
    assert found and all(f.explained_by == "omp.import_bad_memory_reported" for f in found), \
        [(f.title, f.path, f.explained_by) for f in found]
    assert all(f.detail.startswith("explained by omp.import_bad_memory_reported: an import stored an invalid memory")
               for f in found)


@pytest.mark.slow
def test_an_export_that_changes_what_it_was_handed_is_not_explained_by_the_import() -> None:
    outcome = run(f"python:{__name__}:export_drops_zone", ["import_bad_memory_reported", *EXPORT_CHECKS])
    zone = failures(outcome, "export_document_timestamps_utc")
    assert zone and not any(f.explained_by for f in zone), [(f.path, f.explained_by) for f in zone]
    assert all(f.explained_by for f in failures(outcome, "export_document_content_and_type"))


class BodyOnlyAcceptsUnknown(ConflictFromBodyOnly):
    """The body-only reading, and an unknown strategy in the body taken as skip rather than refused."""

    def conflict_strategy(self, req: Any, body: dict[str, Any]) -> str:
        strategy = body.get("conflict", "skip")
        return str(strategy) if strategy in ("skip", "overwrite", "duplicate") else "skip"


def body_only_accepts_unknown() -> ServedTarget:
    return serve_target(ServerSpec(api_class=BodyOnlyAcceptsUnknown), label="fake:omp:body-only-accepts-unknown")


@pytest.mark.slow
def test_strategies_sent_in_the_query_to_a_body_only_server_are_explained_by_that_reading() -> None:
    checks = ["import_overwrite", "import_unknown_conflict_rejected", "domain_conflict_on_existing_id"]
    outcome = run(f"{MUTANTS}:conflict_from_body_only", checks)
    unknown = failures(outcome, "import_unknown_conflict_rejected")  # refused in the body: the reading explains it
    assert unknown and all(f.explained_by == "omp.import_overwrite" for f in unknown), [(f.title, f.explained_by) for f in unknown]
    known = [f for f in failures(outcome, "domain_conflict_on_existing_id") if "is_overwrite" in f.title or "is_duplicate" in f.title]
    assert known and all(f.explained_by == "omp.import_overwrite" for f in known), [(f.title, f.explained_by) for f in known]
    lax = run(f"python:{__name__}:body_only_accepts_unknown", checks)
    unknown = failures(lax, "import_unknown_conflict_rejected")  # accepted in the body too: a fault of its own
    assert unknown and not any(f.explained_by for f in unknown), [(f.title, f.explained_by) for f in unknown]
    reference = run("reference:omp", checks)
    assert [r.outcome.value for r in reference.results] == ["passed"] * 3


@pytest.mark.slow
def test_a_server_ignoring_sort_fails_the_sort_check_not_the_paging_one() -> None:
    """The public server serves created_at_desc whatever `sort` says; its pages are right for that order."""
    outcome = run(f"{MUTANTS}:sort_ignored", ["list_offset_pages", "list_sort_orders"])
    assert [r.outcome.value for r in outcome.results] == ["passed", "failed"], \
        [(r.check_id, [f.title for f in r.failures]) for r in outcome.results]
    paging = run(f"{MUTANTS}:offset_ignored", ["list_offset_pages"])  # the control: paging broken is still caught
    assert [r.outcome.value for r in paging.results] == ["failed"]


class TagsAfterPaging(OmpApi):
    """As the public server: every filter but `tags` in the query, `tags` applied to the page it cut, and
    total counting the matches of the other filters."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        others = dataclasses.replace(filters, tags=())
        docs, total = self.store.page(self.scope(who), others, sort, limit, offset)
        return [d for d in docs if all(t in (d.get("tags") or []) for t in filters.tags)], total


def seeded(api_class: type) -> ServedTarget:
    """Fifty memories already stored, newer than the run's imported data set (as a user's own)."""
    served = serve_target(ServerSpec(api_class=api_class), label=f"fake:omp:{api_class.__name__}")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for i in range(50):
        served.api.store.insert(DEFAULT_USER, {
            "id": f"mem_seed{i:012d}", "content": f"seeded memory {i}", "type": "semantic", "tags": ["seeded"],
            "source": {"tool": "seed-tool", "timestamp": now}, "created_at": now, "updated_at": now,
            "expires_at": None, "metadata": {}, "namespace": None})
    return served


def seeded_tags_after_paging() -> ServedTarget:
    return seeded(TagsAfterPaging)


def seeded_filter_after_paging() -> ServedTarget:
    return seeded(FilterAfterPaging)


LIST_CHECKS = ["list_filter_tags_and", "list_default_limit_20", "list_offset_pages", "list_total_counts_matches",
               "list_filter_type"]


@pytest.mark.slow
def test_with_fifty_memories_stored_the_list_failures_name_the_tags_filter_after_paging() -> None:
    outcome = run(f"python:{__name__}:seeded_tags_after_paging", LIST_CHECKS)
    assert [r.check_id for r in outcome.results][0] == "omp.list_filter_tags_and"  # registered first: it names the cause
    assert failures(outcome, "list_filter_tags_and")
    later = [f for check in LIST_CHECKS[1:] for f in failures(outcome, check)]
    assert later and all(f.explained_by == "omp.list_filter_tags_and" for f in later), [(f.title, f.explained_by) for f in later]
    # the control: every filter applied after paging: the type filter's own short page is its own fault
    every = run(f"python:{__name__}:seeded_filter_after_paging", LIST_CHECKS)
    own = [f for f in failures(every, "list_filter_type") if "filtered after paging" in f.title]
    assert own and not any(f.explained_by for f in own)
    reference = run(f"python:{__name__}:seeded_reference", LIST_CHECKS)
    assert [r.outcome.value for r in reference.results] == ["passed"] * len(LIST_CHECKS)


def seeded_reference() -> ServedTarget:
    return seeded(OmpApi)


@pytest.mark.slow
def test_a_server_ignoring_sort_has_the_domain_pages_in_other_orders_explained_by_the_sort_check() -> None:
    outcome = run(f"{MUTANTS}:sort_ignored", ["list_sort_orders", "domain_list_parameters"])
    assert failures(outcome, "list_sort_orders")
    later = failures(outcome, "domain_list_parameters")
    assert later and all(f.explained_by == "omp.list_sort_orders" for f in later), [(f.title, f.explained_by) for f in later]
    assert any("sort is ignored" in n["note"] for n in outcome.notes)
    fresh = run(f"{MUTANTS}:sort_ignored", ["domain_list_parameters"])  # nothing established: nothing explained
    assert failures(fresh, "domain_list_parameters") and not any(f.explained_by for f in failures(fresh, "domain_list_parameters"))


@pytest.mark.slow
def test_an_export_holding_a_memory_a_create_should_have_refused_is_explained_by_that_create() -> None:
    outcome = run(f"python:{__name__}:stores_imports_as_sent", ["rejects_too_many_tags", "export_document_tags_namespace_metadata"])
    assert failures(outcome, "rejects_too_many_tags")
    found = failures(outcome, "export_document_tags_namespace_metadata")
    assert found and all(f.explained_by == "omp.rejects_too_many_tags" for f in found), [(f.title, f.path, f.explained_by) for f in found]


@pytest.mark.slow
def test_export_memories_the_domain_creates_and_updates_stored_are_explained_by_them() -> None:
    checks = ["domain_create_every_class", "domain_update_every_class", "export_document_tags_namespace_metadata"]
    outcome = run(f"python:{__name__}:stores_imports_as_sent", checks)
    found = failures(outcome, "export_document_tags_namespace_metadata")
    assert found and {f.explained_by for f in found} == {"omp.domain_create_every_class", "omp.domain_update_every_class"}, \
        [(f.title, f.path, f.explained_by) for f in found]
