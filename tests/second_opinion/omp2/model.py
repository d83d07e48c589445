"""The memory object of §2: validation of what clients send, ids and timestamps."""

import math
import re
import secrets
import string
from datetime import UTC, datetime

MEMORY_TYPES = ("episodic", "semantic", "procedural")
MAX_CONTENT_CHARS = 10_000
MAX_TAGS = 20
MAX_TAG_CHARS = 50
MAX_NAMESPACE_CHARS = 100
MAX_METADATA_KEYS = 10
MAX_TOOL_CHARS = 100
ID_PATTERN = re.compile(r"mem_[A-Za-z0-9]{16}")
_ID_ALPHABET = string.ascii_lowercase + string.digits


class Invalid(ValueError):
    """A request body that fails the §2.1 schema; becomes 422 validation_error."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def new_memory_id() -> str:
    return "mem_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))


def now_utc() -> datetime:
    return datetime.now(UTC)


def format_timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(value: object, field: str) -> datetime:
    """An ISO 8601 timestamp with an explicit offset (Z or +00:00 style); a naive one is not "UTC"."""
    if not isinstance(value, str) or not value:
        raise Invalid(field, f"{field} must be an ISO 8601 UTC timestamp string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(field, f"{field} is not an ISO 8601 timestamp: {value!r}") from None
    if moment.tzinfo is None:
        raise Invalid(field, f"{field} has no UTC designator (Z or an offset): {value!r}")
    return moment


def content_length(content: str, count_bytes: bool) -> int:
    return len(content.encode("utf-8")) if count_bytes else len(content)


def check_content(value: object, count_bytes: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("content", "content must be a non-empty string")
    if content_length(value, count_bytes) > MAX_CONTENT_CHARS:
        raise Invalid("content", f"content is longer than {MAX_CONTENT_CHARS} characters")
    return value


def check_type(value: object) -> str:
    if value not in MEMORY_TYPES:
        raise Invalid("type", f"type must be one of {', '.join(MEMORY_TYPES)}")
    return value


def check_source(value: object, default_timestamp: str) -> dict:
    if not isinstance(value, dict):
        raise Invalid("source", "source must be an object with at least a tool")
    tool = value.get("tool")
    if not isinstance(tool, str) or not tool.strip() or len(tool) > MAX_TOOL_CHARS:
        raise Invalid(
            "source.tool", f"source.tool must be a non-empty string of at most {MAX_TOOL_CHARS} characters"
        )
    source = {"tool": tool}
    for optional in ("session_id", "user_id"):
        if value.get(optional) is not None:
            if not isinstance(value[optional], str):
                raise Invalid(f"source.{optional}", f"source.{optional} must be a string")
            source[optional] = value[optional]
    # The observation time may be left out by a client; the creation time is then the best known value.
    timestamp = value.get("timestamp")
    if timestamp is None:
        source["timestamp"] = default_timestamp
    else:
        parse_timestamp(timestamp, "source.timestamp")
        source["timestamp"] = timestamp
    return source


def check_tags(value: object) -> list:
    if not isinstance(value, list):
        raise Invalid("tags", "tags must be an array of strings")
    if len(value) > MAX_TAGS:
        raise Invalid("tags", f"at most {MAX_TAGS} tags")
    for tag in value:
        if not isinstance(tag, str) or not tag or len(tag) > MAX_TAG_CHARS:
            raise Invalid(
                "tags", f"each tag must be a non-empty string of at most {MAX_TAG_CHARS} characters"
            )
    return list(value)


def check_namespace(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_NAMESPACE_CHARS:
        raise Invalid(
            "namespace", f"namespace must be a non-empty string of at most {MAX_NAMESPACE_CHARS} characters"
        )
    return value


def check_expires_at(value: object) -> str | None:
    if value is None:
        return None
    parse_timestamp(value, "expires_at")
    return value


def check_metadata(value: object) -> dict:
    if not isinstance(value, dict):
        raise Invalid("metadata", "metadata must be an object")
    if len(value) > MAX_METADATA_KEYS:
        raise Invalid("metadata", f"metadata has at most {MAX_METADATA_KEYS} keys")
    return value


def check_embedding(value: object) -> list | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise Invalid("embedding", "embedding must be a non-empty array of numbers")
    for number in value:
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise Invalid("embedding", "embedding must hold finite numbers only")
    return value


def memory_from_request(body: object, created_at: str, count_bytes: bool = False) -> dict:
    """The public fields of a new memory (no id, no server timestamps) from a create or import body."""
    if not isinstance(body, dict):
        raise Invalid("body", "the request body must be a JSON object")
    memory = {
        "content": check_content(body.get("content"), count_bytes),
        "type": check_type(body.get("type")),
        "source": check_source(body.get("source"), created_at),
        "tags": check_tags(body.get("tags", [])),
        "expires_at": check_expires_at(body.get("expires_at")),
        "metadata": check_metadata(body.get("metadata", {})),
    }
    namespace = check_namespace(body.get("namespace"))
    if namespace is not None:
        memory["namespace"] = namespace
    embedding = check_embedding(body.get("embedding"))
    if embedding is not None:
        memory["embedding"] = embedding
    return memory


def changes_from_request(body: object, now: str, count_bytes: bool = False) -> dict:
    """Only the fields a PUT body carries, each checked; id, created_at and updated_at are the server's."""
    if not isinstance(body, dict):
        raise Invalid("body", "the request body must be a JSON object")
    checks = {
        "content": lambda v: check_content(v, count_bytes),
        "type": check_type,
        "source": lambda v: check_source(v, now),
        "tags": check_tags,
        "namespace": check_namespace,
        "expires_at": check_expires_at,
        "metadata": check_metadata,
        "embedding": check_embedding,
    }
    return {field: check(body[field]) for field, check in checks.items() if field in body}


def is_expired(memory: dict, moment: datetime) -> bool:
    expires_at = memory.get("expires_at")
    return expires_at is not None and parse_timestamp(expires_at, "expires_at") <= moment
