"""Request parsing and §2.1/§3.3 validation of the OMP reference server (a mixin of OmpApi, so a mutant
overrides one rule)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from memconform.kit.hostile import strict_loads
from memconform.suites.omp.format import (
    DEFAULT_LIMIT,
    MAX_CONTENT,
    MAX_LIMIT,
    MAX_METADATA_KEYS,
    MAX_NAMESPACE,
    MAX_TAG_LEN,
    MAX_TAGS,
    TYPES,
)
from memconform.suites.omp.reference.parts import DIGITS_RE, MAX_EMBEDDING, ApiError, Req
from memconform.suites.omp.reference.store import parse_utc


class OmpValidation:
    """Parsing and validation; `enforce_limits`, `default_limit`, `max_limit` are OmpApi's class attributes."""

    enforce_limits = True
    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT

    # --- parsing and validation ------------------------------------------------------------------

    def invalid(self, kind: str, field_name: str, message: str, **details: Any) -> ApiError:
        """A validation error; kind is "type" (wrong JSON type), "limit" (a §2.1 limit) or "value"."""
        return ApiError("validation_error", message, {"field": field_name, **details})

    def parse_json(self, raw: bytes) -> Any:
        if not raw.strip():
            raise self.invalid("type", "body", "the request body is empty; expected a JSON object")

        try:  # strict: no duplicate names, NaN, lone surrogates, BOM or deep nesting (the hostile-JSON battery)
            return strict_loads(raw)
        except ValueError as exc:
            raise self.invalid("type", "body", f"the request body is not JSON: {exc}") from None

    def json_object(self, req: Req) -> dict[str, Any]:
        body = self.parse_json(req.raw)
        if not isinstance(body, dict):
            raise self.invalid("type", "body", f"the request body must be a JSON object, got {type(body).__name__}")
        return body

    def check_utc(self, value: Any, name: str) -> str:
        if not isinstance(value, str):
            raise self.invalid("type", name, f"{name} must be an ISO 8601 UTC timestamp string")
        if parse_utc(value) is None:
            raise self.invalid("value", name, f"{name} must be ISO 8601 in UTC (Z or +00:00), got {value[:40]!r}")
        return value

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        if not isinstance(value, str):
            raise self.invalid("type", name, f"{name} must be a string")
        # no minimum: the spec gives every text a maximum only, so "" is a string like any other (errata O34)
        if max_len is not None and self.enforce_limits and len(value) > max_len:
            raise self.invalid(limit_kind, name, f"{name} is {len(value)} characters; the maximum is {max_len}",
                               max=max_len)
        return value

    def check_source(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.invalid("type", "source", "source must be an object with tool and timestamp (§2.3)")
        source = {k: v for k, v in value.items() if v is not None}
        source["tool"] = self.check_string(value.get("tool"), "source.tool")
        source["timestamp"] = self.check_utc(value.get("timestamp"), "source.timestamp")
        for name in ("session_id", "user_id"):
            if name in source and not isinstance(source[name], str):
                raise self.invalid("type", f"source.{name}", f"source.{name} must be a string")
        return source

    def check_tags(self, value: Any, name: str = "tags") -> list[str]:
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise self.invalid("type", name, f"{name} must be an array of strings")
        if self.enforce_limits and len(value) > MAX_TAGS:
            raise self.invalid("limit", name, f"{len(value)} tags; the maximum is {MAX_TAGS}", max=MAX_TAGS)
        for i, tag in enumerate(value):
            self.check_string(tag, f"{name}[{i}]", MAX_TAG_LEN)
        return list(value)

    def check_metadata(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.invalid("type", "metadata", "metadata must be an object")
        if self.enforce_limits and len(value) > MAX_METADATA_KEYS:
            raise self.invalid("limit", "metadata", f"{len(value)} metadata keys; the maximum is {MAX_METADATA_KEYS}",
                               max=MAX_METADATA_KEYS)
        return value

    def check_embedding(self, value: Any) -> list[float]:
        if not isinstance(value, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value
        ):
            raise self.invalid("type", "embedding", "embedding must be an array of finite numbers")
        if len(value) > MAX_EMBEDDING:
            raise self.invalid("limit", "embedding", f"embedding has {len(value)} numbers; this server keeps at most {MAX_EMBEDDING}")
        return value

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        """The §2.1 fields of a create (partial=False) or update (partial=True) body, each checked.

        id, created_at and updated_at are the server's: ignored here (errata O8). A null namespace,
        expires_at or embedding means "none"; a null metadata means {}.
        """
        out: dict[str, Any] = {}
        if "content" in body or not partial:
            out["content"] = self.check_string(body.get("content"), "content", MAX_CONTENT)
        if "type" in body or not partial:
            kind = body.get("type")
            if not isinstance(kind, str):
                raise self.invalid("type", "type", f"type must be a string, one of {', '.join(TYPES)}")
            if self.enforce_limits and kind not in TYPES:
                raise self.invalid("value", "type", f"unknown type {kind[:40]!r}; one of {', '.join(TYPES)}")
            out["type"] = kind
        if "source" in body or not partial:
            out["source"] = self.check_source(body.get("source"))
        if "tags" in body:
            out["tags"] = self.check_tags(body["tags"])
        if body.get("namespace") is not None:
            out["namespace"] = self.check_string(body["namespace"], "namespace", MAX_NAMESPACE)
        elif "namespace" in body:
            out["namespace"] = None
        if body.get("expires_at") is not None:
            out["expires_at"] = self.check_utc(body["expires_at"], "expires_at")
        elif "expires_at" in body:
            out["expires_at"] = None
        if "metadata" in body:
            out["metadata"] = self.check_metadata(body["metadata"])
        if body.get("embedding") is not None:
            out["embedding"] = self.check_embedding(body["embedding"])
        elif "embedding" in body:
            out["embedding"] = None
        return out

    def int_param(self, params: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
        raw = params.get(name)
        if raw is None:
            return default
        if not DIGITS_RE.match(raw):
            raise self.invalid("type", name, f"{name} must be a whole number, got {raw[:40]!r}")
        value = int(raw)
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise self.invalid("value", name, f"{name} must be {bound}, got {value}", min=low, max=high)
        return value

    def body_limit(self, value: Any) -> int:
        if value is None:
            return self.default_limit
        if isinstance(value, float) and value.is_integer():  # 70.0 is an integer, as JSON Schema reads it (errata O34)
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.invalid("type", "limit", "limit must be an integer")
        if not 1 <= value <= self.max_limit:
            raise self.invalid("value", "limit", f"limit must be from 1 to {self.max_limit}, got {value}")
        return value
