"""Open Memory Protocol v0.1 (+0.2 extract/compress): constants, limits, credentials, options.

The contract between the OMP suite (suites/omp), the reference server (suites/omp/reference/api.py)
and its mutants. Every option is a reading of ambiguous spec text, explained in suites/omp/errata.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.core.profile import declare_option
from memconform.core.results import HarnessError

SUITE = "omp"
SPEC = "Open Memory Protocol v0.1"
VERSION = "0.1"
BASE = "/v1"

# §2.1 limits
ID_RE = re.compile(r"^mem_[A-Za-z0-9]{16}$")
MAX_CONTENT = 10_000
MAX_TAGS = 20
MAX_TAG_LEN = 50
MAX_NAMESPACE = 100
MAX_METADATA_KEYS = 10
TYPES = ("episodic", "semantic", "procedural")
# §3.3 list
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
SORTS = ("created_at_desc", "created_at_asc", "updated_at_desc")
SEARCH_MODES = ("keyword", "semantic", "hybrid")
CONFLICTS = ("skip", "overwrite", "duplicate")
# ISO 8601 in UTC: a Z or +00:00 offset (errata O6)
UTC_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|\+00:00)$")

# §4 error codes and their statuses
ERRORS = {
    "unauthorized": 401,
    "forbidden": 403,
    "memory_not_found": 404,
    "validation_error": 422,
    "rate_limited": 429,
    "internal_error": 500,
    "no_api_key": 422,
    "ai_error": 502,
}

# §5 compliance levels, as declared in /v1/health (errata O4)
LEVEL_NAMES = {"OMP-Core": "core", "OMP-Search": "search", "OMP-Full": "full"}
LEVEL_ORDER = ("core", "search", "full")
HEALTH_LEVEL_FIELDS = ("compliance", "compliance_level", "level", "conformance", "omp_level")

declare_option(SUITE, "conflict_in", "query", ("query", "both", "body"),
               "where the import conflict strategy goes: the query parameter `conflict`, where §3.3 puts it "
               "(default; a server reading only a body field is failed, naming that reading), both it and a body "
               "field `conflict`, or only the body field")
declare_option(SUITE, "keyword_match", "any", ("any", "all-words", "substring", "any-word"),
               "keyword search, case-insensitive: any of the readings (default), every word of q, q as a substring, "
               "or any one word of q")
declare_option(SUITE, "search_default_limit", "either", ("either", "20", "10"),
               "the search limit when none is given: 20 like list or 10 like the request example (default either)")
declare_option(SUITE, "search_tags_match", "either", ("either", "all", "any"),
               "the search tags filter: AND like list, or any one tag (default either)")
declare_option(SUITE, "search_total", "either", ("either", "matches", "page"),
               "search total: the matches before the limit, or the memories returned (default either)")
declare_option(SUITE, "limit_over_max", "either", ("either", "reject", "clamp"),
               "limit above 100: a 422 validation_error or served as at most 100 (default either)")
declare_option(SUITE, "bad_params", "either", ("either", "reject"),
               "a list/search parameter out of range or of a wrong spelling (limit=0, offset=-1, sort=x, empty "
               "or repeated parameters): 422, or served sanely (default either)")
declare_option(SUITE, "char_unit", "either", ("either", "code-points", "utf-16"),
               "what the §2.1 'chars' limits count: Unicode code points or UTF-16 code units (default either)")
declare_option(SUITE, "tool_key_status", "either", ("either", "403", "404"),
               "a per-tool key touching another tool's memory: 403 forbidden or 404 memory_not_found (default either)")
declare_option(SUITE, "error_message", "optional", ("optional", "required"),
               "§4 envelope: `message` may be left out, as the §3.3 404 example does (default), or is required "
               "(\"All errors use a consistent envelope\") (errata O15)")
declare_option(SUITE, "malformed_json_status", "any-4xx", ("any-4xx", "422", "400"),
               "the status for a body that is not JSON: any 4xx with the error envelope (default), or exactly 422 / 400")
declare_option(SUITE, "cross_user_status", "either", ("either", "404", "403"),
               "another user's memory id: 404 memory_not_found or 403 forbidden (default either)")
declare_option(SUITE, "assume_level", "none", ("none", "core", "search", "full"),
               "the level to assume when /v1/health names none (default: none, only OMP-Core checks run and a note says so)")
declare_option(SUITE, "ai_endpoints", "auto", ("auto", "no-key", "skip"),
               "extract/compress: `auto` tests the no-key rule only on targets that state they have no AI key "
               "(the embedded reference); `no-key` is the user's word that the target has none; `skip` never calls them")
declare_option(SUITE, "hostile_json", "rfc8259", ("rfc8259", "i-json"),
               "hostile JSON: `rfc8259` (default) lets a target accept duplicate names and escaped lone surrogates, "
               "which RFC 8259 allows (noted); `i-json` requires refusing them, as RFC 7493 does")
declare_option(SUITE, "source_timestamp", "either", ("either", "stamped", "required"),
               "a create or import item without source.timestamp: stamped by the server or refused with 422 "
               "(default either) (errata O36)")
declare_option(SUITE, "null_optional", "either", ("either", "absent", "refuse"),
               "null sent for a field §2.1 marks optional without `| null` (namespace, metadata, source.session_id, "
               "source.user_id, embedding; search filters): read as absent or refused with 422 (default either) (errata O37)")
declare_option(SUITE, "utc_offset", "either", ("either", "accept", "refuse"),
               "a timestamp written with `+00:00` instead of `Z` (\"ISO 8601 UTC\"): read as UTC or refused with 422 "
               "(default either) (errata O52)")
declare_option(SUITE, "timestamp_form", "either", ("either", "instant", "refuse"),
               "a timestamp sent in another form (another offset such as +02:00, no offset, a date alone, lower-case t/z): "
               "stored as the same instant (served in UTC, O6) or refused with 422 (default either) (errata O53)")
declare_option(SUITE, "credentials", "", (),
               "path of a JSON file {\"tool_keys\": {TOOL: KEY}, \"other_user_key\": KEY} for the OMP-Full checks")
declare_option(SUITE, "server_log", "", (),
               "path of the file the server writes its log to (its stdout/stderr redirected there, or its log file): "
               "then §7 \"Memory content MUST NOT be logged in plain text\" is checked on what it logs (errata O24)")
declare_option(SUITE, "rate_limit_burst", "300", ("100", "300", "1000"),
               "how many requests the §7 rate-limit probe sends, at most, before calling it unlimited")


@dataclass
class Credentials:
    """Keys the OMP-Full checks need beyond the global key. Every one is a secret: redact it."""

    tool_keys: dict[str, str] = field(default_factory=dict)
    other_user_key: str | None = None

    def secrets(self) -> list[str]:
        return [*self.tool_keys.values(), *([self.other_user_key] if self.other_user_key else [])]

    @classmethod
    def from_file(cls, path: str) -> Credentials:
        try:
            data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HarnessError(f"omp credentials file {path!r} cannot be read as JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("tool_keys", {}), dict):
            raise HarnessError(f"omp credentials file {path!r} must be an object with tool_keys {{TOOL: KEY}}")
        return cls(dict(data.get("tool_keys", {})), data.get("other_user_key"))


@dataclass
class TargetFacts:
    """What a target states about itself beyond the API: set by the reference and the mutants."""

    ai_key_configured: bool | None = None  # None: unknown (an external server)
    credentials: Credentials | None = None
    server_log: str | None = None  # the file the server writes its log to (option omp.server_log otherwise)
