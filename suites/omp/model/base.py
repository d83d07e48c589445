"""The model's vocabulary: readings, requests, reasons, principals and the values an answer holds."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memconform.kit.shared_rules import parse_datetime

Check = Callable[[Any], "str | None"]  # an answer -> what is wrong with it under one reading, or None
WORD_RE = re.compile(r"[^\W_]+")  # a maximal run of letters and digits (errata O2: full-text words)
SORT_FIELDS = {"created_at_desc": ("created_at", True), "created_at_asc": ("created_at", False),
               "updated_at_desc": ("updated_at", True)}
FILTERS = ("type", "tool", "tags", "namespace")
DEFAULT_USER, OTHER_USER = "user", "other-user"




# ---- readings --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Readings:
    """The readings of open spec text (errata O-numbers); "either"/"any" accepts every one of them."""

    keyword_match: str = "any"  # O2: any | all-words | substring | any-word
    search_tags_match: str = "either"  # O2: either | all | any
    search_default_limit: str = "either"  # O2: either | 20 | 10
    search_total: str = "either"  # O2: either | matches | page
    limit_over_max: str = "either"  # O9: either | reject | clamp
    bad_params: str = "either"  # O9, O30: either | reject
    tool_key_status: str = "either"  # O17: either | 403 | 404
    cross_user_status: str = "either"  # O20: either | 404 | 403
    error_message: str = "optional"  # O15: optional | required
    char_unit: str = "either"  # O19: either | code-points | utf-16
    namespace_null: str = "either"  # O8 (no option): either | clears | refused
    invalid_import: str = "either"  # O7 (no option): either | reported | refused
    import_created_at: str = "either"  # O26 (no option): either | keeps | stamps
    null_optional: str = "either"  # O37: either | absent | refuse (a null search type or namespace)
    semantic_required: bool = False  # O13: at OMP-Search a semantic search must be served

    @classmethod
    def from_options(cls, option: Callable[[str], str], level: str = "core") -> Readings:
        """The readings a run's options pin (ctx.option); the others stay open."""
        names = ("keyword_match", "search_tags_match", "search_default_limit", "search_total", "limit_over_max",
                 "bad_params", "tool_key_status", "cross_user_status", "error_message", "char_unit", "null_optional")
        return cls(**{name: option(name) for name in names}, semantic_required=level in ("search", "full"))

    def allows(self, name: str, value: str) -> bool:
        pinned = getattr(self, name)
        return pinned in ("either", "any") or pinned == value


# ---- requests and reasons --------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """One OMP request: the operation, whose key (`global`, `other-user` or `tool:NAME`), the path id,
    the JSON body, and the query parameters as sent (repeats kept, in order)."""

    op: str  # create | get | update | delete | list | search | export | import | health
    key: str = "global"
    id: str | None = None
    body: Any = None
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def list(cls, params: Mapping[str, str] | Iterable[tuple[str, str]] = (), key: str = "global") -> Request:
        pairs = tuple(params.items()) if isinstance(params, Mapping) else tuple(params)
        return cls("list", key, params=pairs)


@dataclass
class Reason:
    """Why an answer is outside the model's set: a short title, what was received, what each reading expected."""

    title: str
    received: Any
    expected: dict[str, str]

    def __str__(self) -> str:
        wants = "; ".join(f"{reading}: {want}" for reading, want in self.expected.items())
        return f"{self.title} (received {str(self.received)[:160]}; expected {wants})"


@dataclass(frozen=True)
class Principal:
    user: str
    tool: str | None = None


def principal(key: str) -> Principal:
    if key.startswith("tool:"):
        return Principal(DEFAULT_USER, key[5:])
    return Principal(OTHER_USER if key == "other-user" else DEFAULT_USER)


# ---- values ----------------------------------------------------------------------------------

def instant(value: Any) -> Any:
    return parse_datetime(value, "omp")


def sent_instant(value: Any) -> Any:
    """The moment a timestamp sent in any form names (errata O53): a served value is compared with it."""
    return parse_datetime(value, "omp-sent")


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD_RE.findall(text)]


def char_lengths(text: str) -> set[int]:
    """Its length in code points and in UTF-16 code units (errata O19)."""
    return {len(text), len(text.encode("utf-16-le")) // 2}


def same_json(a: Any, b: Any) -> bool:
    """JSON equality with numbers as doubles (errata O35: -0.0 is 0, 5.0 is 5, 2^53+1 may read as 2^53)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def status_of(answer: Any) -> int:
    return int(getattr(answer, "status", 0))


def body_of(answer: Any) -> Any:
    return getattr(answer, "body", None)


def brief(answer: Any) -> str:
    body = body_of(answer)
    text = "" if body is None else str(body)
    return f"{status_of(answer)} {text[:120]}".strip()
