"""Open Memory Protocol v0.1 (+0.2 extract/compress): constants, limits, credentials.

The contract between the OMP suite (suites/omp), the reference server (suites/omp/reference/api.py)
and its mutants. The readings of ambiguous spec text a run can pin are suites/omp/options.py (errata.md says why).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
