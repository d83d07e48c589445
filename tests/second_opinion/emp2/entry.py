"""The EMP v1.0 entry: what a writer must check before writing, and what a reader accepts."""

import math
import re
import uuid

PROTOCOL_VERSION = "1.0"
KNOWN_FIELDS = frozenset({"v", "id", "ts", "src", "content", "type", "tags", "meta", "emb"})
OPTIONAL_FIELDS = ("type", "tags", "meta", "emb")
VERSION_PATTERN = re.compile(r"(\d+)\.(\d+)")
SOURCE_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+")
ENCRYPTED_PATTERN = re.compile(r"encrypted:([A-Za-z0-9_-]+):(.+)", re.DOTALL)


class Refused(Exception):
    """The operation is not done (exit 3): invalid entry, lock not obtained, unknown id."""


def is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def is_uuid4(value: object, any_version: bool = False) -> bool:
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    version_ok = any_version or (parsed.version == 4 and parsed.variant == uuid.RFC_4122)
    return version_ok and str(parsed) == value.lower()


def major_version(value: object) -> int | None:
    match = VERSION_PATTERN.fullmatch(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def is_encrypted(content: str) -> bool:
    return content.startswith("encrypted:")


def check_for_writing(entry: dict, lowercase_tags: bool = True, any_uuid_version: bool = False) -> dict:
    """Refuse anything that is not a valid v1.0 entry (Best Practices 1: check schema before writing)."""
    if major_version(entry.get("v")) != 1:
        raise Refused(f'v must be "1.MINOR", got {entry.get("v")!r}')
    if not is_uuid4(entry.get("id"), any_uuid_version):
        raise Refused(f"id must be a UUID v4, got {entry.get('id')!r}")
    if not is_number(entry.get("ts")) or entry["ts"] < 0:
        raise Refused(f"ts must be a non-negative Unix time in milliseconds, got {entry.get('ts')!r}")
    if not isinstance(entry.get("src"), str) or not SOURCE_PATTERN.fullmatch(entry["src"]):
        raise Refused(f"src must be reverse domain notation like com.company.app, got {entry.get('src')!r}")
    content = entry.get("content")
    if not isinstance(content, str):
        raise Refused("content must be a string")
    if is_encrypted(content) and not ENCRYPTED_PATTERN.fullmatch(content):
        raise Refused("encrypted content must read encrypted:ALGORITHM:data")
    check_optional_fields(entry, lowercase_tags)
    return entry


def check_optional_fields(entry: dict, lowercase_tags: bool) -> None:
    if "type" in entry and not isinstance(entry["type"], str):
        raise Refused("type must be a string")
    if "tags" in entry:
        tags = entry["tags"]
        if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
            raise Refused("tags must be an array of non-empty strings")
        if lowercase_tags and any(tag != tag.lower() for tag in tags):
            raise Refused(f"tags must be lowercase: {tags!r}")
    if "meta" in entry and not isinstance(entry["meta"], dict):
        raise Refused("meta must be an object")
    if "emb" in entry and not (isinstance(entry["emb"], list) and all(is_number(x) for x in entry["emb"])):
        raise Refused("emb must be an array of numbers")


def drop_absent_optionals(entry: dict) -> dict:
    """An optional field sent as null is taken as absent rather than refused."""
    return {k: v for k, v in entry.items() if not (k in OPTIONAL_FIELDS and v is None)}


def readable(entry: object, reject_unknown_fields: bool = False) -> bool:
    """A reader keeps any line with the five required fields of usable types and a major version it knows.

    Readers are lenient where writers are strict: a non-v4 id or an odd src from another app is still read.
    """
    if not isinstance(entry, dict):
        return False
    if reject_unknown_fields and set(entry) - KNOWN_FIELDS:
        return False
    return (
        major_version(entry.get("v")) == 1
        and isinstance(entry.get("id"), str)
        and bool(entry["id"])
        and is_number(entry.get("ts"))
        and isinstance(entry.get("src"), str)
        and isinstance(entry.get("content"), str)
    )


def is_tombstone(entry: dict) -> bool:
    """Tombstone shapes other apps are seen to write: a deleted/tombstone flag, or type "tombstone"."""
    meta = entry.get("meta")
    return (
        entry.get("deleted") is True
        or entry.get("tombstone") is True
        or entry.get("type") == "tombstone"
        or (isinstance(meta, dict) and meta.get("deleted") is True)
    )
