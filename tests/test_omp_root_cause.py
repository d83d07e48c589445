"""The root cause named (issue 35 items 3-5, OMP): a deviation a run established explains the later failures
it causes ("explained by omp.<check>", grouped under that check), checks that need a clean state read it
instead of blaming a parameter, and the last misses: a conflict strategy sent only where §3.3 puts it (the
body-only reading named when a server follows it) and an overwrite refused for a MUST reason so the
delete-then-insert path is reached."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from memconform.core import established
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.results import Failure, Outcome
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.render.groups import group_problems
from memconform.run.session import execute_run
from memconform.suites.omp import deviations, root_causes
from memconform.suites.omp.fuzzing import stored_as_sent
from memconform.suites.omp.mutants.rules import IdFormatUuid
from memconform.suites.omp.mutants.servers import SortIgnored
from memconform.suites.omp.reference.api import OmpApi
from memconform.suites.omp.reference.parts import DEFAULT_USER
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target
from memconform.targets.base import Reply

MUTANTS = "python:memconform.suites.omp.mutants"


def run(target: str, checks: list[str], **options: str) -> Any:
    profile = Profile.named("ci", options={f"omp.{k}": v for k, v in options.items()})
    return execute_run(["omp"], target, profile, report_dir=None, check_ids=checks)


def failures(outcome: Any, check: str) -> list[Failure]:
    return [f for r in outcome.results if r.check_id == f"omp.{check}" for f in r.failures]


# ---- the mechanism (core/established.py, render/groups.py) ----------------------------------------------

def test_a_deviation_explains_only_what_another_check_established() -> None:
    ctx = Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci"))
    ctx.check_id = "omp.first"
    assert established.explained(ctx, Failure("x"), "k").explained_by == ""  # nothing established: no guess
    established.establish(ctx, "k", "the thing seen")
    assert established.explained(ctx, Failure("x"), "k").explained_by == ""  # not by the check itself
    ctx.check_id = "omp.later"
    later = established.explained(ctx, Failure("y", detail="more"), "other", "k")
    assert (later.explained_by, later.detail) == ("omp.first", "explained by omp.first: the thing seen; more")
    assert established.run_notes(ctx) == ["deviations established (later failures they explain say so): the thing seen (omp.first)"]
    assert established.explained(ctx, Failure("z"), "unknown").explained_by == ""


def result(check: str, *titles: str, explained_by: str = "") -> dict[str, Any]:
    return {"check_id": check, "outcome": "failed", "keyword": "MUST", "failures": [
        {"title": t, "explained_by": explained_by} for t in titles]}


def test_an_explained_failure_is_grouped_under_the_check_that_established_its_cause() -> None:
    root = result("omp.list_filter_type", "filtered after paging")
    later = result("omp.list_empty_and_repeated_parameters", "the answer fits none", explained_by="omp.list_filter_type")
    other = result("omp.search_keyword", "no match")
    groups = group_problems([later, root, other])
    assert [g.check_ids for g in groups] == [["omp.list_filter_type", "omp.list_empty_and_repeated_parameters"],
                                            ["omp.search_keyword"]]
    alone = group_problems([later])  # the root cause not in the list: its own group, saying what explains it
    assert alone[0].cause.startswith("explained by omp.list_filter_type: ")


# ---- established in a run, and explained ---------------------------------------------------------------

@pytest.mark.slow
def test_tags_filtered_after_paging_explain_the_empty_and_repeated_parameters_failure() -> None:
    outcome = run(f"{MUTANTS}:filter_after_paging", ["list_filter_type", "list_empty_and_repeated_parameters"])
    later = failures(outcome, "list_empty_and_repeated_parameters")
    assert later and all(f.explained_by == "omp.list_filter_type" for f in later), [(f.title, f.explained_by) for f in later]
    assert all(f.detail.startswith("explained by omp.list_filter_type: list filters applied") for f in later)
    line = next(r for r in outcome.results if r.check_id == "omp.list_empty_and_repeated_parameters").to_json()
    assert {f["explained_by"] for f in line["failures"]} == {"omp.list_filter_type"}  # in report.jsonl too
    assert any("deviations established" in n["note"] for n in outcome.notes)


class PoisonedList(OmpApi):
    """A list handler that crashes on a memory stored with `tags: null` in any page it serves; an empty `limit=`
    read as "no limit" first walks every memory of the key before filtering (a handler passing -1 to SQLite),
    so it reaches that memory whatever the filters; otherwise it serves the default page."""

    def op_list(self, who: Any, req: Any) -> Any:
        if req.params.get("limit") == "" and any(doc.get("tags") is None for doc in self.store.all(self.scope(who))):
            raise RuntimeError("tags is null")
        return super().op_list(who, req)

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = super().list_page(who, filters, sort, limit, offset)
        if any(doc.get("tags") is None for doc in docs):  # any page that serves it fails the same way
            raise RuntimeError("tags is null")
        return docs, total

    def int_param(self, params: Any, name: str, default: int, low: int, high: int | None) -> int:
        return default if params.get(name) == "" else super().int_param(params, name, default, low, high)


def poisoned(seed_poison: bool) -> ServedTarget:
    served = serve_target(ServerSpec(api_class=PoisonedList), label="fake:omp:poisoned-list")
    if seed_poison:  # a memory another run (or an earlier import) left, breaking every listing that reaches it
        served.api.store.insert(DEFAULT_USER, {
            "id": "mem_poisonpoison0001", "content": "left by another run", "type": "semantic", "tags": None,
            "source": {"tool": "t", "timestamp": "2026-01-01T00:00:00Z"}, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z", "expires_at": None, "metadata": {}})
    return served


def poisoned_list() -> ServedTarget:
    return poisoned(True)


def clean_list() -> ServedTarget:
    return poisoned(False)


@pytest.mark.slow
def test_a_500_that_a_poisoned_list_causes_names_the_state_not_the_parameter() -> None:
    outcome = run(f"python:{__name__}:poisoned_list", ["list_empty_and_repeated_parameters"])
    found = failures(outcome, "list_empty_and_repeated_parameters")
    assert found and any("the key's own plain list (limit=100, no filter) answers 5xx too" in f.detail for f in found), \
        [(f.title, f.detail) for f in found]
    clean = run(f"python:{__name__}:clean_list", ["list_empty_and_repeated_parameters"])
    assert [r.outcome for r in clean.results] == [Outcome.PASSED], [f.title for f in failures(clean, "list_empty_and_repeated_parameters")]


# ---- 35 item 5: an overwrite refused for a MUST reason, the old memory checked afterwards -----------------

@pytest.mark.slow
def test_a_delete_then_insert_overwrite_behind_a_lax_validator_fails_with_the_loss_named() -> None:
    outcome = run(f"{MUTANTS}:overwrite_deletes_first_lax", ["import_bad_memory_reported", "import_failed_overwrite_keeps_old"])
    titles = [(f.title, f.explained_by) for f in failures(outcome, "import_failed_overwrite_keeps_old")]
    assert ("a failed overwrite (no source) lost the existing memory: deleted before the insert failed", "") in titles, titles
    stored = [f for f in failures(outcome, "import_failed_overwrite_keeps_old") if "stored an invalid memory" in f.title]
    assert stored and stored[0].explained_by == "omp.import_bad_memory_reported"
    assert not any("changed the existing memory" in t for t, _ in titles)  # the wrong cause is gone


class StoresInvalidKeepsOld(OmpApi):
    """Stores content over 10,000 characters and unknown types (no limits), but overwrites atomically."""

    enforce_limits = False


def stores_invalid_keeps_old() -> ServedTarget:
    return serve_target(ServerSpec(api_class=StoresInvalidKeepsOld), label="fake:omp:stores-invalid-keeps-old")


@pytest.mark.slow
def test_an_overwrite_that_stored_the_invalid_memory_is_not_called_a_failed_overwrite() -> None:
    outcome = run(f"python:{__name__}:stores_invalid_keeps_old", ["import_failed_overwrite_keeps_old"])
    titles = [f.title for f in failures(outcome, "import_failed_overwrite_keeps_old")]
    assert titles == ["an overwrite import stored an invalid memory (content over 10,000 characters, type not a MemoryType) "
                      "instead of refusing it"], titles
    reference = run("reference:omp", ["import_failed_overwrite_keeps_old"])
    assert [r.outcome for r in reference.results] == [Outcome.PASSED]


# ---- 35 item 5: the conflict strategy only where §3.3 puts it ---------------------------------------------

@pytest.mark.slow
def test_a_server_reading_the_strategy_from_the_body_only_fails_naming_that_reading() -> None:
    checks = ["import_overwrite", "import_duplicate"]
    outcome = run(f"{MUTANTS}:conflict_from_body_only", checks)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]
    for check in checks:
        first, *rest = failures(outcome, check)
        assert "reads the strategy from a body field `conflict` (the body-only reading of errata O1)" in first.title
        assert rest and all(f.detail.startswith("caused by the body-only reading") for f in rest)
    pinned = run(f"{MUTANTS}:conflict_from_body_only", checks, conflict_in="body")  # the reading pinned: served
    assert [r.outcome for r in pinned.results] == [Outcome.PASSED, Outcome.PASSED]
    reference = run("reference:omp", checks)
    assert [r.outcome for r in reference.results] == [Outcome.PASSED, Outcome.PASSED]


class IgnoresOverwrite(OmpApi):
    """The control: the strategy ignored wherever it is sent (overwrite behaves as skip)."""

    def conflict_strategy(self, req: Any, body: dict[str, Any]) -> str:
        strategy = super().conflict_strategy(req, body)
        return "skip" if strategy == "overwrite" else strategy


def ignores_overwrite() -> ServedTarget:
    return serve_target(ServerSpec(api_class=IgnoresOverwrite), label="fake:omp:ignores-overwrite")


@pytest.mark.slow
def test_a_server_ignoring_the_strategy_everywhere_is_not_said_to_read_the_body() -> None:
    outcome = run(f"python:{__name__}:ignores_overwrite", ["import_overwrite"])
    titles = [f.title for f in failures(outcome, "import_overwrite")]
    assert titles and not any("body-only" in t for t in titles), titles


# ---- 35 item 3: a check that needs a clean list scopes its own data (domain_list_parameters) -------------

class WalksEveryMemoryOnOddLimit(OmpApi):
    """The public server's list, reduced to what domain_list_parameters met: a `limit` outside 1..100 (-1,
    9007199254740993) reaches SQLite as "no limit", so the handler walks every memory the query's own filters
    (type, tool, namespace) admit, and applying the `tags` filter to a memory stored with `tags: null` crashes
    (500); it then serves every match. `crash_on_negative`: besides, a negative limit answers 500 whatever
    the data (a fault of the parameter itself)."""

    crash_on_negative = False

    def op_list(self, who: Any, req: Any) -> Any:
        raw = req.params.get("limit", "")
        walk = raw.lstrip("-").isdigit() and not 1 <= int(raw) <= self.max_limit
        if not walk:
            return super().op_list(who, req)
        if self.crash_on_negative and int(raw) < 0:
            raise RuntimeError("negative limit")
        filters, sort = self.list_filters(req.params), self.list_sort(req.params)
        walked = [doc for doc in self.store.all(self.scope(who)) if admitted_by_query(doc, filters)]
        if filters.tags and any(doc.get("tags") is None for doc in walked):
            raise RuntimeError("tags is null")
        offset = self.int_param(req.params, "offset", 0, 0, None)
        docs, total = self.list_page(who, filters, sort, 2**31, offset)
        return 200, {"memories": docs, "total": total, "limit": int(raw), "offset": offset}, {}


def admitted_by_query(doc: dict[str, Any], filters: Any) -> bool:
    """The filters the public server puts in its SQL (type, tool, namespace): the memories a walk reaches."""
    tool = doc["source"].get("tool") if isinstance(doc.get("source"), dict) else None
    return all(want is None or have == want for want, have in
               ((filters.type, doc.get("type")), (filters.tool, tool), (filters.namespace, doc.get("namespace"))))


class NegativeLimitCrashes(WalksEveryMemoryOnOddLimit):
    crash_on_negative = True


def walking(api_class: type[OmpApi], poison: bool) -> ServedTarget:
    served = serve_target(ServerSpec(api_class=api_class), label=f"fake:omp:{api_class.__name__}")
    if poison:  # what an earlier import of the run (domain_import_every_class's `tags: null`) left on the key
        served.api.store.insert(DEFAULT_USER, {
            "id": "mem_poisonpoison0002", "content": "an earlier import's tags null", "type": "semantic", "tags": None,
            "source": {"tool": "t", "timestamp": "2026-01-01T00:00:00Z"}, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z", "expires_at": None, "metadata": {}})
    return served


def walking_poisoned() -> ServedTarget:
    return walking(WalksEveryMemoryOnOddLimit, True)


def walking_clean() -> ServedTarget:
    return walking(WalksEveryMemoryOnOddLimit, False)


def negative_limit_crashes() -> ServedTarget:
    return walking(NegativeLimitCrashes, True)


@pytest.mark.slow
def test_a_memory_another_check_left_is_out_of_reach_of_the_odd_list_parameters() -> None:
    # a fresh server serves a negative and a huge limit whole: the positive control
    clean = run(f"python:{__name__}:walking_clean", ["domain_list_parameters"])
    assert [r.outcome for r in clean.results] == [Outcome.PASSED], [f.title for f in failures(clean, "domain_list_parameters")]
    # the same server holding a `tags: null` memory the run did not make: the data set's own tool keeps it out
    # of every walk, so no 500 is blamed on `limit`
    poisoned_run = run(f"python:{__name__}:walking_poisoned", ["domain_list_parameters"])
    assert [r.outcome for r in poisoned_run.results] == [Outcome.PASSED], \
        [(f.title, f.received) for f in failures(poisoned_run, "domain_list_parameters")]


@pytest.mark.slow
def test_a_negative_limit_that_crashes_by_itself_still_fails_on_the_scoped_base() -> None:
    outcome = run(f"python:{__name__}:negative_limit_crashes", ["domain_list_parameters"])
    titles = [f.title for f in failures(outcome, "domain_list_parameters")]
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED]
    assert titles and all("limit=-1" in t and "(list.limit:negative)" in t for t in titles), titles
    assert all(not f.explained_by for f in failures(outcome, "domain_list_parameters"))


# ---- 35 item 3: a fuzzed answer holding memconform's own input, stored as sent (fuzz_response_schemas) -----

class StoresElevenMetadataKeys(OmpApi):
    """The public server's one metadata fault: metadata with more than 10 keys is stored, as sent."""

    def check_metadata(self, value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else super().check_metadata(value)


class StoresElevenKeysAndUuidIds(StoresElevenMetadataKeys, IdFormatUuid):
    """The control: besides, every id it makes is a UUID (§2.1: "mem_" + 16 alphanumerics), its own fault."""


def stores_eleven_keys() -> ServedTarget:
    return serve_target(ServerSpec(api_class=StoresElevenMetadataKeys), label="fake:omp:eleven-metadata-keys")


def stores_eleven_keys_and_uuid_ids() -> ServedTarget:
    return serve_target(ServerSpec(api_class=StoresElevenKeysAndUuidIds), label="fake:omp:eleven-keys-uuid-ids")


def export_failures(outcome: Any) -> list[Failure]:
    return [f for f in failures(outcome, "fuzz_response_schemas") if "/v1/export" in f.title]


@pytest.mark.slow
def test_an_export_holding_the_eleven_key_memory_another_check_stored_is_explained_by_that_check() -> None:
    checks = ["rejects_too_many_metadata_keys", "fuzz_response_schemas"]
    outcome = run(f"python:{__name__}:stores_eleven_keys", checks)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]  # explained, never passed
    found = export_failures(outcome)
    assert found and all(f.explained_by == "omp.rejects_too_many_metadata_keys" for f in found), \
        [(f.title, f.explained_by, f.detail[:200]) for f in failures(outcome, "fuzz_response_schemas")]
    assert all(f.detail.startswith("explained by omp.rejects_too_many_metadata_keys: a create stored") for f in found)
    # what the fuzzer's own generated creates got back (its 11-key metadata echoed) is the server's, unexplained
    own = [f for f in failures(outcome, "fuzz_response_schemas") if f.title.startswith("POST /v1/memories")]
    assert own and not any(f.explained_by for f in own)
    alone = run(f"python:{__name__}:stores_eleven_keys", checks[1:])  # nothing established by another check
    assert not any(f.explained_by for f in failures(alone, "fuzz_response_schemas"))
    reference = run("reference:omp", checks)
    assert [r.outcome for r in reference.results] == [Outcome.PASSED, Outcome.PASSED]


@pytest.mark.slow
def test_an_export_fault_of_the_servers_own_beside_the_stored_input_is_not_explained() -> None:
    outcome = run(f"python:{__name__}:stores_eleven_keys_and_uuid_ids", ["rejects_too_many_metadata_keys", "fuzz_response_schemas"])
    found = export_failures(outcome)
    assert found and not any(f.explained_by for f in found), [(f.title, f.explained_by) for f in found]
    # the id fault of the server's own is what the failure shows (the 11-key memory set aside when it came first)
    assert all('does not match "^mem_' in f.detail for f in found), [f.detail[:300] for f in found]
    assert all(f.detail.startswith(("1 memories memconform sent with a value §2.1 forbids, stored as sent (named by "
                                    "omp.rejects_too_many_metadata_keys), set aside", '"')) for f in found)


# ---- 35 item 3: the model-based sequence leaving the model for tags filtered after paging ------------------

class TagsAfterPaging(OmpApi):
    """The public server's list: type, tool and namespace in the query, the page cut, then the tags filter
    applied to that page; `total` counts the matches of the other filters (tags ignored)."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = super().list_page(who, dataclasses.replace(filters, tags=()), sort, limit, offset)
        return [d for d in docs if all(t in (d.get("tags") or ()) for t in filters.tags)], total


def tags_after_paging(api_class: type[OmpApi] = TagsAfterPaging) -> ServedTarget:
    served = serve_target(ServerSpec(api_class=api_class), label=f"fake:omp:{api_class.__name__}")
    for i in range(30):  # what other checks (or runs) left on the key: the model's untagged pages are full of them
        served.api.store.insert(DEFAULT_USER, {
            "id": f"mem_otherrun{i:08d}", "content": f"left by another run {i}", "type": "semantic", "tags": ["other"],
            "source": {"tool": "t", "timestamp": "2026-01-01T00:00:00Z"}, "created_at": f"2027-01-01T00:00:{i:02d}Z",
            "updated_at": f"2027-01-01T00:00:{i:02d}Z", "expires_at": None, "metadata": {}})
    return served


@pytest.mark.slow
def test_a_model_based_divergence_that_tags_filtered_after_paging_alone_cause_is_explained_by_the_tags_check() -> None:
    checks = ["list_filter_tags_and", "model_based_sequences"]
    outcome = run(f"python:{__name__}:tags_after_paging", checks)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]  # explained, still failed
    later = failures(outcome, "model_based_sequences")
    assert later and all(f.explained_by == "omp.list_filter_tags_and" for f in later), [(f.title, f.explained_by) for f in later]
    assert later[0].detail.startswith("explained by omp.list_filter_tags_and: list filters applied to the page after paging")
    groups = group_problems([r.to_json() for r in outcome.results])
    assert [g.check_ids for g in groups] == [["omp.list_filter_tags_and", "omp.model_based_sequences"]]
    alone = run(f"python:{__name__}:tags_after_paging", checks[1:])  # nothing established: the failure is its own
    assert failures(alone, "model_based_sequences") and not any(f.explained_by for f in failures(alone, "model_based_sequences"))
    reference = run("reference:omp", checks)
    assert [r.outcome for r in reference.results] == [Outcome.PASSED, Outcome.PASSED]


class TagsAfterPagingTotalOff(TagsAfterPaging):
    """The control: besides, a page asked with tags says a total one above every count the untagged page
    gives (a fault of its own, which the tags filtered after paging do not explain)."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = super().list_page(who, filters, sort, limit, offset)
        return docs, total + 1 if filters.tags else total


def tags_after_paging_total_off() -> ServedTarget:
    return tags_after_paging(TagsAfterPagingTotalOff)


@pytest.mark.slow
def test_a_list_divergence_the_untagged_page_does_not_show_is_not_explained_by_the_tags_check() -> None:
    outcome = run(f"python:{__name__}:tags_after_paging_total_off", ["list_filter_tags_and", "model_based_sequences"])
    assert failures(outcome, "list_filter_tags_and")
    later = failures(outcome, "model_based_sequences")
    assert later and not any(f.explained_by for f in later), [(f.title, f.explained_by) for f in later]


class SchemaError:
    """A schemathesis JsonSchemaError as stored_as_sent reads it: where in the answer it points."""

    def __init__(self, *path: Any) -> None:
        self.instance_path = list(path)


def test_stored_input_is_set_aside_only_until_a_fault_of_the_servers_own_shows() -> None:
    ctx = Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci"))
    ctx.check_id = "omp.rejects_too_many_metadata_keys"
    sent = {"content": "sent with 11 keys", "metadata": {f"k{i}": i for i in range(11)}}
    established.establish(ctx, f"{deviations.CREATE_STORES_INVALID}:meta11", "a create stored a memory §2.1 forbids (metadata)")
    deviations.sent_item(ctx, sent, f"{deviations.CREATE_STORES_INVALID}:meta11")
    ctx.check_id = "omp.fuzz_response_schemas"
    theirs = {"id": "not-an-omp-id", "content": "the server's own", "metadata": {}}
    content = json.dumps({"memories": [dict(sent, id="mem_aaaaaaaaaaaaaaaa"), theirs]}).encode()
    first = SchemaError("memories", 0, "metadata")
    seen: list[Any] = []

    def clean(body: bytes) -> Any:
        seen.append(json.loads(body))
        return None

    assert stored_as_sent.explained(ctx, first, content, clean) == (first, f"{deviations.CREATE_STORES_INVALID}:meta11", "")
    assert seen == [{"memories": [theirs]}]  # judged again without the memory memconform sent
    own = SchemaError("memories", 0, "id")
    found, cause, note = stored_as_sent.explained(ctx, first, content, lambda body: own)
    assert (found, cause) == (own, "") and note.startswith("1 memories memconform sent") and "omp.rejects_too_many_metadata_keys" in note
    changed = json.dumps({"memories": [dict(sent, id="mem_aaaaaaaaaaaaaaaa", metadata={"k": 1}), theirs]}).encode()
    assert stored_as_sent.explained(ctx, first, changed, clean)[1:] == ("", "")  # not what was sent: its own
    assert stored_as_sent.explained(ctx, SchemaError("memories", 1, "id"), content, clean)[1:] == ("", "")


# ---- a page in the wrong order from a server ignoring sort and filtering tags after paging ----------------

class SortIgnoredTagsAfterPaging(SortIgnored, TagsAfterPaging):
    """The public server's list: `sort` ignored (created_at_desc always) and the tags applied after paging."""


def sort_ignored_tags_after_paging() -> ServedTarget:
    return tags_after_paging(SortIgnoredTagsAfterPaging)


@pytest.mark.slow
def test_an_order_failure_of_a_server_ignoring_sort_is_explained_by_the_sort_check_not_the_tags_one() -> None:
    outcome = run(f"python:{__name__}:sort_ignored_tags_after_paging",
                  ["list_filter_tags_and", "list_sort_orders", "domain_list_parameters"])
    order = [f for f in failures(outcome, "domain_list_parameters") if " order" in f.title and "is not in" in f.title]
    assert order and all(f.explained_by == "omp.list_sort_orders" for f in order), [(f.title, f.explained_by) for f in order]
    others = [f for f in failures(outcome, "domain_list_parameters") if f not in order]
    assert all(f.explained_by != "omp.list_sort_orders" or "created_at_desc" not in f.title for f in others)


def test_an_order_failure_is_put_on_the_ignored_sort_only_for_a_page_in_the_default_order() -> None:
    ctx = Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci"))
    ctx.check_id = "omp.list_sort_orders"
    established.establish(ctx, deviations.SORT_IGNORED, "sort is ignored")
    ctx.check_id = "omp.domain_list_parameters"
    newest_first = [{"created_at": "2026-02-03T00:00:00Z"}, {"created_at": "2026-02-01T00:00:00Z"}]
    pairs = [("tags", "t"), ("sort", "created_at_asc")]

    def judged(memories: list[Any], title: str = "GET ...: the page is not in created_at_asc order",
               asked: list[tuple[str, str]] = pairs) -> str:
        answer = Reply(status=200, body={"memories": memories}, raw=b"")
        return root_causes.explained_if_order_from_sort_ignored(ctx, Failure(title), asked, answer).explained_by

    assert judged(newest_first) == "omp.list_sort_orders"
    assert judged(newest_first[::-1]) == ""  # in no order the ignored sort gives: its own
    assert judged(newest_first, "GET ...: total does not count every match") == ""  # not an order failure
    assert judged(newest_first, asked=[("tags", "t")]) == ""  # the default order asked


# ---- 35 item 3: a fuzzed list echoing a limit over 100, which list_limit_max_100 established ----------------

def limit_not_capped() -> ServedTarget:
    from memconform.suites.omp.mutants import LimitNotCapped

    return serve_target(ServerSpec(api_class=LimitNotCapped), label="fake:omp:limit-not-capped")


@pytest.mark.slow
def test_a_fuzzed_list_echoing_a_limit_over_100_is_explained_by_the_limit_check() -> None:
    """The public server's last unexplained line: `limit` 931 echoed back on a list, the fault list_limit_max_100
    reports; with that check in the run the schema failure is explained by it (still failed), alone it is not."""
    checks = ["list_limit_max_100", "fuzz_response_schemas"]
    outcome = run(f"python:{__name__}:limit_not_capped", checks)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]
    at_limit = [f for f in failures(outcome, "fuzz_response_schemas") if f.explained_by == "omp.list_limit_max_100"]
    assert at_limit, [(f.title, f.explained_by, f.detail[:200]) for f in failures(outcome, "fuzz_response_schemas")]
    assert all(f.detail.startswith("explained by omp.list_limit_max_100: a list limit over 100 served as asked")
               for f in at_limit)
    alone = run(f"python:{__name__}:limit_not_capped", checks[1:])  # nothing established by another check
    assert failures(alone, "fuzz_response_schemas") and not any(f.explained_by for f in failures(alone, "fuzz_response_schemas"))
    reference = run("reference:omp", checks)
    assert [r.outcome for r in reference.results] == [Outcome.PASSED, Outcome.PASSED]


# ---- tags filtered after paging beside an offset fault of its own (root_causes.paged_as_asked) ---------------

class TagsAfterPagingOffsetIgnored(TagsAfterPaging):
    """Tags applied after paging, and besides `offset` ignored in every list, with tags or without (every page is
    the first): the untagged page at an offset looks full, but it is not the page asked for."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        return super().list_page(who, filters, sort, limit, 0)


class TagsAfterPagingOffsetDoubled(TagsAfterPaging):
    """Tags applied after paging, and `offset` applied twice over (offset 10 starts at the 21st memory)."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        return super().list_page(who, filters, sort, limit, 2 * offset)


def tags_after_paging_offset_ignored() -> ServedTarget:
    return tags_after_paging(TagsAfterPagingOffsetIgnored)


def tags_after_paging_offset_doubled() -> ServedTarget:
    return tags_after_paging(TagsAfterPagingOffsetDoubled)


OFFSET_CHECKS = ["list_filter_tags_and", "list_offset_pages"]


def offset_page_failures(outcome: Any, label: str) -> list[Failure]:
    return [f for f in failures(outcome, "list_offset_pages") if f"({label} page)" in f.title]


@pytest.mark.slow
def test_offset_pages_short_only_for_the_tags_filtered_after_paging_are_explained_by_the_tags_check() -> None:
    """The positive control: offset right, tags late: every offset page's failure is the tags' alone."""
    outcome = run(f"python:{__name__}:tags_after_paging", OFFSET_CHECKS)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]
    later = failures(outcome, "list_offset_pages")
    assert offset_page_failures(outcome, "second") and all(f.explained_by == "omp.list_filter_tags_and" for f in later), \
        [(f.title, f.explained_by) for f in later]


@pytest.mark.slow
@pytest.mark.parametrize(("fake", "own_pages"), [
    ("tags_after_paging_offset_ignored", ("second", "beyond")),
    # offset 500 doubled is still past every match: that page is right, and its total the tags' fault alone
    ("tags_after_paging_offset_doubled", ("second",))])
def test_an_offset_fault_beside_the_tags_filtered_after_paging_fails_on_its_own_account(fake: str, own_pages: tuple[str, ...]) -> None:
    outcome = run(f"python:{__name__}:{fake}", OFFSET_CHECKS)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED]
    # the first page (offset 0) holds no offset fault: the tags alone made it short, and it says so
    first = offset_page_failures(outcome, "first")
    assert first and all(f.explained_by == "omp.list_filter_tags_and" for f in first), [(f.title, f.explained_by) for f in first]
    # a page at an offset is not the untagged page with the tags applied afterwards: the offset's own failure
    for label in own_pages:
        own = offset_page_failures(outcome, label)
        assert own and not any(f.explained_by for f in own), (label, [(f.title, f.explained_by) for f in own])
    if "beyond" not in own_pages:
        assert all(f.explained_by == "omp.list_filter_tags_and" for f in offset_page_failures(outcome, "beyond"))


# ---- a bad paging value served as a sane page echoes what was applied (O9 with O3): not a schema failure ------

class ParseIntPaging(OmpApi):
    """The public server's paging: `limit` and `offset` read as JavaScript's parseInt reads them (`0.5` is 0, `7x` is
    7; no digits at all, the default), capped at 100, and echoed as applied; a limit of 0 serves an empty page."""

    def int_param(self, params: Any, name: str, default: int, low: int, high: int | None) -> int:
        raw = params.get(name)
        if raw is None:
            return default
        digits = re.match(r"\s*([+-]?\d+)", raw)
        value = int(digits.group(1)) if digits else default
        return max(0, min(value, high)) if high is not None else max(0, value)


class ParseIntPagingBadMemories(ParseIntPaging):
    """The control: besides, every memory a list serves says `type: "fact"` (not a MemoryType): the server's own
    fault, which no paging reading explains."""

    def list_page(self, who: Any, filters: Any, sort: str, limit: int, offset: int) -> tuple[list[Any], int]:
        docs, total = super().list_page(who, filters, sort, limit, offset)
        return [dict(d, type="fact") for d in docs], total


def parse_int_paging() -> ServedTarget:
    return serve_target(ServerSpec(api_class=ParseIntPaging), label="fake:omp:parse-int-paging")


def parse_int_paging_bad_memories() -> ServedTarget:
    return serve_target(ServerSpec(api_class=ParseIntPagingBadMemories), label="fake:omp:parse-int-paging-bad-memories")


@pytest.mark.slow
def test_a_bad_limit_served_as_an_empty_page_saying_limit_0_is_not_a_schema_failure() -> None:
    """The public server's last unexplained fuzz line: `limit=0.5` served as an empty page whose `limit` says 0.
    O9 accepts a bad list parameter served as a sane page and O3 reads `limit` as what was applied."""
    outcome = run(f"python:{__name__}:parse_int_paging", ["fuzz_response_schemas"])
    at_echo = [f for f in failures(outcome, "fuzz_response_schemas") if "is less than the minimum of 1" in f.detail]
    assert not at_echo, [(f.title, f.detail[:300]) for f in at_echo]
    control = run(f"python:{__name__}:parse_int_paging_bad_memories", ["fuzz_response_schemas"])
    assert [r.outcome for r in control.results] == [Outcome.FAILED]
    assert any(f.title.startswith("GET /v1/memories") for f in failures(control, "fuzz_response_schemas"))


# ---- a fuzzed list echoing a limit below 1 over every memory, which list_rejects_bad_paging established ---------

class BelowOneServesAll(OmpApi):
    """The public server's negative limit: a `limit` below 1 reaches SQLite as "no limit", so every memory is
    served, and the page says the limit asked."""

    def op_list(self, who: Any, req: Any) -> Any:
        raw = req.params.get("limit", "")
        if not re.fullmatch(r"-?\d+", raw) or int(raw) >= 1:
            return super().op_list(who, req)
        filters, sort = self.list_filters(req.params), self.list_sort(req.params)
        docs, total = self.list_page(who, filters, sort, 2**31, 0)
        return 200, {"memories": docs, "total": total, "limit": int(raw), "offset": 0}, {}


def below_one_serves_all() -> ServedTarget:
    served = serve_target(ServerSpec(api_class=BelowOneServesAll), label="fake:omp:below-one-serves-all")
    for i in range(120):  # more than a page can hold: what a run's earlier checks leave on the key
        served.api.store.insert(DEFAULT_USER, {
            "id": f"mem_belowone{i:08d}", "content": f"left by another check {i}", "type": "semantic", "tags": ["other"],
            "source": {"tool": "t", "timestamp": "2026-01-01T00:00:00Z"}, "created_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
            "updated_at": "2026-01-01T00:00:00Z", "expires_at": None, "metadata": {}})
    return served


@pytest.mark.slow
def test_a_fuzzed_list_echoing_a_limit_below_1_over_every_memory_is_explained_by_the_bad_paging_check() -> None:
    checks = ["list_rejects_bad_paging", "fuzz_response_schemas", "fuzz_negative_data_rejected"]
    outcome = run(f"python:{__name__}:below_one_serves_all", checks)
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED, Outcome.FAILED, Outcome.FAILED]
    negative = [f for f in failures(outcome, "fuzz_negative_data_rejected") if "more than the maximum 100" in f.detail]
    assert negative and all(f.explained_by == "omp.list_rejects_bad_paging" for f in negative), \
        [(f.title, f.explained_by, f.detail[:200]) for f in failures(outcome, "fuzz_negative_data_rejected")]
    at_limit = [f for f in failures(outcome, "fuzz_response_schemas")
                if "is less than the minimum of 1" in f.detail or "has more than 100 items" in f.detail]
    assert at_limit and all(f.explained_by == "omp.list_rejects_bad_paging" for f in at_limit), \
        [(f.title, f.explained_by, f.detail[:200]) for f in failures(outcome, "fuzz_response_schemas")]
    alone = run(f"python:{__name__}:below_one_serves_all", checks[1:])  # nothing established by another check
    assert failures(alone, "fuzz_response_schemas") and not any(f.explained_by for f in failures(alone, "fuzz_response_schemas"))
