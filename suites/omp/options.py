"""The Open Memory Protocol suite's options: each a reading of ambiguous spec text (suites/omp/errata.md says why), with
its default and alternatives. The SuiteSpec holds this table (suite.py); a run reads one with `ctx.option(name)`
and `--option omp.NAME=VALUE` pins it (harness/core/options.py).
"""

from __future__ import annotations

from memconform.core.options import Options, OptionSpec
from memconform.kit import large_export

OPTIONS = Options(
    OptionSpec("conflict_in", "query", ("query", "both", "body"),
               "where the import conflict strategy goes: the query parameter `conflict`, where §3.3 puts it "
               "(default; a server reading only a body field is failed, naming that reading), both it and a body "
               "field `conflict`, or only the body field"),
    OptionSpec("keyword_match", "any", ("any", "all-words", "substring", "any-word"),
               "keyword search, case-insensitive: any of the readings (default), every word of q, q as a substring, "
               "or any one word of q"),
    OptionSpec("search_default_limit", "either", ("either", "20", "10"),
               "the search limit when none is given: 20 like list or 10 like the request example (default either)"),
    OptionSpec("search_tags_match", "either", ("either", "all", "any"),
               "the search tags filter: AND like list, or any one tag (default either)"),
    OptionSpec("search_total", "either", ("either", "matches", "page"),
               "search total: the matches before the limit, or the memories returned (default either)"),
    OptionSpec("limit_over_max", "either", ("either", "reject", "clamp"),
               "limit above 100: a 422 validation_error or served as at most 100 (default either)"),
    OptionSpec("bad_params", "either", ("either", "reject"),
               "a list/search parameter out of range or of a wrong spelling (limit=0, offset=-1, sort=x, empty "
               "or repeated parameters): 422, or served sanely (default either)"),
    OptionSpec("char_unit", "either", ("either", "code-points", "utf-16"),
               "what the §2.1 'chars' limits count: Unicode code points or UTF-16 code units (default either)"),
    OptionSpec("tool_key_status", "either", ("either", "403", "404"),
               "a per-tool key touching another tool's memory: 403 forbidden or 404 memory_not_found (default either)"),
    OptionSpec("error_message", "optional", ("optional", "required"),
               "§4 envelope: `message` may be left out, as the §3.3 404 example does (default), or is required "
               "(\"All errors use a consistent envelope\") (errata O15)"),
    OptionSpec("malformed_json_status", "any-4xx", ("any-4xx", "422", "400"),
               "the status for a body that is not JSON: any 4xx with the error envelope (default), or exactly 422 / 400"),
    OptionSpec("cross_user_status", "either", ("either", "404", "403"),
               "another user's memory id: 404 memory_not_found or 403 forbidden (default either)"),
    OptionSpec("assume_level", "none", ("none", "core", "search", "full"),
               "the level to assume when /v1/health names none (default: none, only OMP-Core checks run and a note says so)"),
    OptionSpec("ai_endpoints", "auto", ("auto", "no-key", "skip"),
               "extract/compress: `auto` tests the no-key rule only on targets that state they have no AI key "
               "(the embedded reference); `no-key` is the user's word that the target has none; `skip` never calls them"),
    OptionSpec("hostile_json", "rfc8259", ("rfc8259", "i-json"),
               "hostile JSON: `rfc8259` (default) lets a target accept duplicate names and escaped lone surrogates, "
               "which RFC 8259 allows (noted); `i-json` requires refusing them, as RFC 7493 does"),
    OptionSpec("source_timestamp", "either", ("either", "stamped", "required"),
               "a create or import item without source.timestamp: stamped by the server or refused with 422 "
               "(default either) (errata O36)"),
    OptionSpec("null_optional", "either", ("either", "absent", "refuse"),
               "null sent for a field §2.1 marks optional without `| null` (namespace, metadata, source.session_id, "
               "source.user_id, embedding; search filters): read as absent or refused with 422 (default either) (errata O37)"),
    OptionSpec("utc_offset", "either", ("either", "accept", "refuse"),
               "a timestamp written with `+00:00` instead of `Z` (\"ISO 8601 UTC\"): read as UTC or refused with 422 "
               "(default either) (errata O52)"),
    OptionSpec("timestamp_form", "either", ("either", "instant", "refuse"),
               "a timestamp sent in another form (another offset such as +02:00, no offset, a date alone, lower-case t/z): "
               "stored as the same instant (served in UTC, O6) or refused with 422 (default either) (errata O53)"),
    OptionSpec("credentials", "", (),
               "path of a JSON file {\"tool_keys\": {TOOL: KEY}, \"other_user_key\": KEY} for the OMP-Full checks"),
    OptionSpec("server_log", "", (),
               "path of the file the server writes its log to (its stdout/stderr redirected there, or its log file): "
               "then §7 \"Memory content MUST NOT be logged in plain text\" is checked on what it logs (errata O24)"),
    OptionSpec("rate_limit_burst", "300", ("100", "300", "1000"),
               "how many requests the §7 rate-limit probe sends, at most, before calling it unlimited"),
    large_export.OPTION_SPEC,
)
