"""Known-broken variants of the OMP reference server, one broken rule each.

Each entry of MUTANTS is a zero-argument factory returning a ServedTarget (like `reference:omp`)
over the reference with one small override. The docstring of each class is the rule it breaks.
The checks each must fail are listed by the suite's own tests (tests/test_omp.py), not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# ---- response shapes, limits, filters, import strategies, search, keys ----------------------------
from memconform.suites.omp.mutants.domain import EXPECTED_KILLS as DOMAIN_KILLS  # noqa: E402
from memconform.suites.omp.mutants.domain import EXPECTED_TITLES as DOMAIN_TITLES  # noqa: E402
from memconform.suites.omp.mutants.domain import MUTANT_CLASSES as DOMAIN_CLASSES  # noqa: E402
from memconform.suites.omp.mutants.paths import EXPECTED_KILLS as PATH_KILLS  # noqa: E402
from memconform.suites.omp.mutants.paths import EXPECTED_TITLES as EXPECTED_TITLES  # noqa: E402  (the failure branch each must fire)
from memconform.suites.omp.mutants.paths import MUTANT_CLASSES as PATH_CLASSES  # noqa: E402
from memconform.suites.omp.mutants.replies import (  # noqa: E402
    CreateReturns200,
    ImportReportWithoutErrors,
    KeywordAnyWord,
    LimitsOffByOne,
    ListWithoutPaging,
    OverwriteKeepsExisting,
    ReadsDropMetadata,
    SearchNamespaceIgnored,
    SearchWithoutModeUsed,
    ShortKeys,
    SourceWithoutTimestamp,
    TagsAsString,
    ToolFilterIgnored,
    TypeCapitalised,
    UnknownConflictAsSkip,
)
from memconform.suites.omp.mutants.rules import (  # noqa: E402
    ConflictIgnored,
    ContentLogged,
    DeleteReturns200AndKeeps,
    DuplicateReusesIds,
    ExportEmbeddingAsStrings,
    ExportEnvelopeWrong,
    ExtractStoresWithoutKey,
    IdFormatUuid,
    ImportAbortsOnBadMemory,
    ImportReplacesAll,
    NoValidation,
    PutChangesCreatedAt,
    PutReplacesWhole,
    SearchCaseSensitive,
    SearchModeLies,
    ServerErrorOnBadInput,
    TimestampsNotUtc,
    ToolKeyCannotDelete,
    ToolKeyUnscoped,
    UpdatedAtFrozen,
    UsersNotIsolated,
)
from memconform.suites.omp.mutants.servers import (
    AuthSkipped,
    ErrorWithoutMessage,
    HealthRequiresAuth,
    LimitDefault50,
    LimitNotCapped,
    NagleStall,
    NamespaceFilterIgnored,
    NotFoundAs200,
    OffsetIgnored,
    RacyStore,
    SortIgnored,
    StoresLoneSurrogates,
    SurrogateKeepingStore,
    TagsOr,
    TotalIsPageSize,
    TypeFilterIgnored,
    WrongErrorEnvelope,
)
from memconform.suites.omp.reference.api import (
    OmpApi,
)
from memconform.suites.omp.reference.serve import (
    ServedTarget,
    ServerSpec,
    serve_target,
)
from memconform.targets.base import Target


def _factory(name: str, api_class: type[OmpApi] = OmpApi, doc: str | None = None, **spec: Any) -> Callable[[], Target]:
    def make() -> ServedTarget:
        return serve_target(ServerSpec(api_class=api_class, **spec), label=f"mutant:omp:{name}")

    make.__name__ = name
    make.__doc__ = doc or api_class.__doc__
    return make


MUTANTS: dict[str, Callable[[], Target]] = {
    "auth_skipped": _factory("auth_skipped", AuthSkipped),
    "health_requires_auth": _factory("health_requires_auth", HealthRequiresAuth),
    "wrong_error_envelope": _factory("wrong_error_envelope", WrongErrorEnvelope),
    "not_found_as_200": _factory("not_found_as_200", NotFoundAs200),
    "error_without_message": _factory("error_without_message", ErrorWithoutMessage),
    "limit_not_capped": _factory("limit_not_capped", LimitNotCapped),
    "limit_default_50": _factory("limit_default_50", LimitDefault50),
    "offset_ignored": _factory("offset_ignored", OffsetIgnored),
    "tags_or": _factory("tags_or", TagsOr),
    "type_filter_ignored": _factory("type_filter_ignored", TypeFilterIgnored),
    "namespace_filter_ignored": _factory("namespace_filter_ignored", NamespaceFilterIgnored),
    "sort_ignored": _factory("sort_ignored", SortIgnored),
    "total_is_page_size": _factory("total_is_page_size", TotalIsPageSize),
    "id_format_uuid": _factory("id_format_uuid", IdFormatUuid),
    "timestamps_not_utc": _factory("timestamps_not_utc", TimestampsNotUtc),
    "no_validation": _factory("no_validation", NoValidation),
    "server_error_on_bad_input": _factory("server_error_on_bad_input", ServerErrorOnBadInput),
    "put_replaces_whole": _factory("put_replaces_whole", PutReplacesWhole),
    "put_changes_created_at": _factory("put_changes_created_at", PutChangesCreatedAt),
    "updated_at_frozen": _factory("updated_at_frozen", UpdatedAtFrozen),
    "delete_returns_200_and_keeps": _factory("delete_returns_200_and_keeps", DeleteReturns200AndKeeps),
    "search_case_sensitive": _factory("search_case_sensitive", SearchCaseSensitive),
    "search_mode_lies": _factory("search_mode_lies", SearchModeLies),
    "export_envelope_wrong": _factory("export_envelope_wrong", ExportEnvelopeWrong),
    "export_embedding_as_strings": _factory("export_embedding_as_strings", ExportEmbeddingAsStrings),
    "conflict_ignored": _factory("conflict_ignored", ConflictIgnored),
    "import_aborts_on_bad_memory": _factory("import_aborts_on_bad_memory", ImportAbortsOnBadMemory),
    "import_replaces_all": _factory("import_replaces_all", ImportReplacesAll),
    "duplicate_reuses_ids": _factory("duplicate_reuses_ids", DuplicateReusesIds),
    "tool_key_unscoped": _factory("tool_key_unscoped", ToolKeyUnscoped),
    "tool_key_cannot_delete": _factory("tool_key_cannot_delete", ToolKeyCannotDelete),
    "users_not_isolated": _factory("users_not_isolated", UsersNotIsolated),
    "extract_stores_without_key": _factory("extract_stores_without_key", ExtractStoresWithoutKey),
    "no_rate_limit": _factory("no_rate_limit", doc="§7: no rate limit on any key (SHOULD rate-limit per API key).",
                              rate_limits={}),
    "lost_update_under_concurrency": _factory(
        "lost_update_under_concurrency", store_class=RacyStore,
        doc="Nothing lost: concurrent creates, updates and deletes lose acknowledged writes and resurrect deleted "
            "memories (each write rewrites the user's memories from a snapshot read without the lock)."),
    "nagle_stall": _factory("nagle_stall", NagleStall),
    "create_returns_200": _factory("create_returns_200", CreateReturns200),
    "limits_off_by_one": _factory("limits_off_by_one", LimitsOffByOne),
    "import_report_without_errors": _factory("import_report_without_errors", ImportReportWithoutErrors),
    "tool_filter_ignored": _factory("tool_filter_ignored", ToolFilterIgnored),
    "list_without_paging": _factory("list_without_paging", ListWithoutPaging),
    "type_capitalised": _factory("type_capitalised", TypeCapitalised),
    "tags_as_string": _factory("tags_as_string", TagsAsString),
    "source_without_timestamp": _factory("source_without_timestamp", SourceWithoutTimestamp),
    "reads_drop_metadata": _factory("reads_drop_metadata", ReadsDropMetadata),
    "search_without_mode_used": _factory("search_without_mode_used", SearchWithoutModeUsed),
    "keyword_any_word": _factory("keyword_any_word", KeywordAnyWord),
    "short_keys": _factory("short_keys", ShortKeys),
    "content_logged": _factory("content_logged", ContentLogged),
    "overwrite_keeps_existing": _factory("overwrite_keeps_existing", OverwriteKeepsExisting),
    "unknown_conflict_as_skip": _factory("unknown_conflict_as_skip", UnknownConflictAsSkip),
    "search_namespace_ignored": _factory("search_namespace_ignored", SearchNamespaceIgnored),
    **{name: _factory(name, api_class) for name, api_class in PATH_CLASSES.items()},
    "stores_lone_surrogates": _factory("stores_lone_surrogates", StoresLoneSurrogates, store_class=SurrogateKeepingStore),
    **{name: _factory(name, api_class) for name, api_class in DOMAIN_CLASSES.items()},
}

# not a spec rule: the ~40 ms stall is a note, never a failure (tests/test_omp.py test_nodelay_stall_noted)
NOTE_ONLY = {"nagle_stall"}

# cheap, and between them every endpoint and every set-up helper of the suite: every mutant runs them
# too, so a mutant that breaks the suite's own set-up steps shows as an errored check
ALSO_RUN = {"omp.memory_id_format", "omp.create_returns_201", "omp.memory_reads_as_written", "omp.list_response_shape",
            "omp.update_partial", "omp.delete_then_gone", "omp.search_keyword", "omp.export_envelope",
            "omp.import_skip_default", "omp.health_without_key", "omp.auth_wrong_key_401", "omp.rejects_unknown_type",
            "omp.tool_key_own_tool", "omp.users_isolated", "omp.extract_without_ai_key"}
# a slow server (a 20 ms pause a write) runs only the check it must fail
KILLS_ONLY = {"lost_update_under_concurrency"}

# what each broken server must fail (tests/test_omp.py runs them; every OMP check is killed by one)
EXPECTED_KILLS: dict[str, set[str]] = {
    "stores_lone_surrogates": {"omp.hostile_json_create_refused", "omp.hostile_json_leaves_export_working"},
    "auth_skipped": {"omp.auth_missing_key_401", "omp.auth_wrong_key_401", "omp.fuzz_ignored_auth"},
    "health_requires_auth": {"omp.health_without_key", "omp.health_declares_level"},
    "wrong_error_envelope": {"omp.get_unknown_id_404", "omp.unknown_id_every_route", "omp.malformed_json_rejected",
                             "omp.rejects_wrong_types", "omp.list_rejects_bad_paging", "omp.search_rejects_bad_input",
                             "omp.auth_missing_key_401", "omp.tool_key_forbidden_other_write", "omp.users_isolated",
                             "omp.extract_without_ai_key", "omp.fuzz_error_envelopes"},
    "not_found_as_200": {"omp.get_unknown_id_404", "omp.unknown_id_every_route", "omp.delete_then_gone",
                         "omp.fuzz_status_codes", "omp.fuzz_response_schemas", "omp.fuzz_stateful_crud"},
    "limit_not_capped": {"omp.list_limit_max_100"},
    "limit_default_50": {"omp.list_default_limit_20", "omp.search_limit_and_total"},
    "offset_ignored": {"omp.list_offset_pages"},
    "tags_or": {"omp.list_filter_tags_and"},  # search tags OR is a reading (errata O2)
    "type_filter_ignored": {"omp.list_filter_type"},
    "namespace_filter_ignored": {"omp.list_filter_namespace"},
    "sort_ignored": {"omp.list_sort_orders"},
    "total_is_page_size": {"omp.list_total_counts_matches"},
    "id_format_uuid": {"omp.memory_id_format"},
    "timestamps_not_utc": {"omp.memory_timestamps_utc", "omp.export_envelope"},
    "no_validation": {"omp.rejects_content_over_max", "omp.rejects_too_many_tags", "omp.rejects_long_tag",
                      "omp.rejects_too_many_metadata_keys", "omp.rejects_long_namespace", "omp.rejects_unknown_type",
                      "omp.update_invalid_changes_nothing", "omp.import_bad_memory_reported"},
    "server_error_on_bad_input": {"omp.malformed_json_rejected", "omp.rejects_wrong_types", "omp.list_rejects_bad_paging",
                                  "omp.search_rejects_bad_input", "omp.fuzz_no_server_error",
                                  # plain json.loads: 500s, and duplicate names and UTF-16 bodies stored
                                  "omp.hostile_json_create_refused", "omp.hostile_json_import_refused",
                                  "omp.hostile_json_search_refused"},
    "put_replaces_whole": {"omp.update_partial"},
    "put_changes_created_at": {"omp.update_keeps_id_and_created_at", "omp.update_partial"},
    "updated_at_frozen": {"omp.update_partial", "omp.list_sort_orders"},
    "delete_returns_200_and_keeps": {"omp.delete_then_gone"},
    "search_case_sensitive": {"omp.search_keyword_case_insensitive"},
    "search_mode_lies": {"omp.search_mode_used_honest", "omp.semantic_search"},
    "export_envelope_wrong": {"omp.export_envelope"},
    "export_embedding_as_strings": {"omp.export_document_embedding"},
    "conflict_ignored": {"omp.import_skip_default", "omp.import_duplicate"},
    "import_aborts_on_bad_memory": {"omp.import_bad_memory_reported"},
    "import_replaces_all": {"omp.import_bad_memory_reported", "omp.import_skip_default"},
    "duplicate_reuses_ids": {"omp.import_duplicate"},
    "tool_key_unscoped": {"omp.tool_key_forbidden_other_read", "omp.tool_key_forbidden_other_write"},
    "tool_key_cannot_delete": {"omp.tool_key_own_tool"},
    "users_not_isolated": {"omp.users_isolated"},
    "extract_stores_without_key": {"omp.extract_without_ai_key", "omp.compress_without_ai_key"},
    "no_rate_limit": {"omp.rate_limited_per_key"},
    "lost_update_under_concurrency": {"omp.concurrent_writers_nothing_lost"},
    "create_returns_200": {"omp.create_returns_201"},
    "limits_off_by_one": {"omp.accepts_values_at_limits"},
    "import_report_without_errors": {"omp.import_report_shape"},
    "tool_filter_ignored": {"omp.list_filter_tool"},
    "list_without_paging": {"omp.list_response_shape"},
    "type_capitalised": {"omp.memory_content_and_type", "omp.create_returns_201"},
    "tags_as_string": {"omp.memory_tags_namespace_metadata"},
    "source_without_timestamp": {"omp.memory_source_object"},
    "reads_drop_metadata": {"omp.memory_reads_as_written"},
    "search_without_mode_used": {"omp.search_keyword"},
    "short_keys": {"omp.api_keys_at_least_32_chars"},
    "content_logged": {"omp.content_not_logged"},
    "overwrite_keeps_existing": {"omp.import_overwrite"},
    "unknown_conflict_as_skip": {"omp.import_unknown_conflict_rejected"},
    "search_namespace_ignored": {"omp.search_filter_namespace"},
    **PATH_KILLS,
    **DOMAIN_KILLS,
}
EXPECTED_TITLES = {**EXPECTED_TITLES, **DOMAIN_TITLES}

# broken only under a pinned reading: killed when the option pins it, accepted by default (errata O2)
# checks killed by a test of their own, {check id: the test}. no_validation only drops the §2.1 limits: whether
# hypothesis's random negative data hits one of them depends on the derandomized seed (an installed and an
# editable copy of the package draw differently), so the deterministic killer is the toy server that accepts
# every body
KILLED_ELSEWHERE = {"omp.fuzz_negative_data_rejected": "tests/test_omp_openapi.py (toy `lenient`: accepts every body)",
                    "omp.fuzz_valid_data_accepted": "tests/test_omp_openapi.py (toy `strict`: refuses valid tags)"}

OPTION_KILLS: dict[str, tuple[dict[str, str], set[str]]] = {
    "keyword_any_word": ({"keyword_match": "all-words"}, {"omp.search_keyword_all_words"}),
    "error_without_message": ({"error_message": "required"}, {"omp.get_unknown_id_404"}),
}


def __getattr__(name: str) -> Callable[[], Target]:
    """`memconform.suites.omp.mutants:<name>` (and `python:memconform.suites.omp.mutants:<name>`) resolve to the factory."""
    try:
        return MUTANTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


# at the sizes real servers meet (mutants/large.py)
from memconform.suites.omp.mutants.large import EXPECTED_KILLS as LARGE_KILLS  # noqa: E402
from memconform.suites.omp.mutants.large import EXPECTED_TITLES as LARGE_TITLES  # noqa: E402
from memconform.suites.omp.mutants.large import KILLS_ONLY as LARGE_KILLS_ONLY  # noqa: E402
from memconform.suites.omp.mutants.large import MUTANT_CLASSES as LARGE_CLASSES  # noqa: E402

MUTANTS.update({name: _factory(name, api_class) for name, api_class in LARGE_CLASSES.items()})
EXPECTED_KILLS.update(LARGE_KILLS)
EXPECTED_TITLES.update(LARGE_TITLES)
KILLS_ONLY |= LARGE_KILLS_ONLY
