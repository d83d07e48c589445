"""The §2.1 / §2.3 / §4 shape rules, as generators of failures over what a target answered."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit.shared_rules import is_int as is_int  # re-exported: rules.is_int
from memconform.kit.shared_rules import parse_datetime
from memconform.suites.omp import format as omp
from memconform.targets.base import Reply


def instant(value: Any) -> dt.datetime | None:
    """The moment an ISO 8601 UTC string names (errata O6), or None when it is not one."""
    return parse_datetime(value, "omp")


def sent_instant(value: Any) -> dt.datetime | None:
    """The moment a timestamp a client sent names in any ISO 8601 form (errata O53), no offset read as UTC:
    what a server that accepted it must hold; the form it writes back is `instant`'s (O6)."""
    return parse_datetime(value, "omp-sent")


def id_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    value = mem.get("id")
    if not isinstance(value, str) or not omp.ID_RE.match(value):
        yield Failure("the id is not \"mem_\" + 16 alphanumerics", value, "mem_ + 16 of [A-Za-z0-9]", f"{where}.id")


def content_type_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    content = mem.get("content")
    if not isinstance(content, str):
        yield Failure("content is not a string", content, "a string", f"{where}.content")
    elif len(content) > omp.MAX_CONTENT:
        yield Failure("content is longer than 10,000 characters", len(content), f"<= {omp.MAX_CONTENT}", f"{where}.content")
    if mem.get("type") not in omp.TYPES:
        yield Failure("type is not a MemoryType", mem.get("type"), list(omp.TYPES), f"{where}.type")


def organisation_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    tags = mem.get("tags")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        yield Failure("tags is not an array of strings", tags, "string[]", f"{where}.tags")
    else:
        if len(tags) > omp.MAX_TAGS:
            yield Failure("more than 20 tags", len(tags), f"<= {omp.MAX_TAGS}", f"{where}.tags")
        long = [t for t in tags if len(t) > omp.MAX_TAG_LEN]
        if long:
            yield Failure("a tag is longer than 50 characters", long[:3], f"<= {omp.MAX_TAG_LEN} chars", f"{where}.tags")
    namespace = mem.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or len(namespace) > omp.MAX_NAMESPACE):
        yield Failure("namespace is not a string of at most 100 characters", namespace, "string, <= 100 chars", f"{where}.namespace")
    metadata = mem.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        yield Failure("metadata is not an object", metadata, "Record<string, unknown>", f"{where}.metadata")
    elif isinstance(metadata, dict) and len(metadata) > omp.MAX_METADATA_KEYS:
        yield Failure("metadata has more than 10 keys", len(metadata), f"<= {omp.MAX_METADATA_KEYS}", f"{where}.metadata")


def timestamp_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    for name in ("created_at", "updated_at"):
        if instant(mem.get(name)) is None:
            yield Failure(f"{name} is not an ISO 8601 UTC timestamp", mem.get(name, "<absent>"), "e.g. 2026-06-29T12:00:00Z", f"{where}.{name}")
    if "expires_at" not in mem:
        yield Failure("expires_at is missing (it is `string | null`, not optional)", "<absent>", "null or ISO 8601 UTC", f"{where}.expires_at")
    elif mem["expires_at"] is not None and instant(mem["expires_at"]) is None:
        yield Failure("expires_at is neither null nor an ISO 8601 UTC timestamp", mem["expires_at"], "null or ISO 8601 UTC", f"{where}.expires_at")


EMBEDDING_SENTENCE = "§2.1: embedding?: number[] // Vector embedding of content (implementation-defined dimensions)"
SOURCE_SENTENCES = {"session_id": "§2.3: session_id?: string // Optional session/conversation ID from the source tool",
                    "user_id": "§2.3: user_id?: string // Optional user identifier within the source tool"}


def _number(value: Any) -> bool:
    """A JSON number: an int or a finite float, never a bool (NaN and Infinity are no JSON)."""
    return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and math.isfinite(value)


def embedding_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    """`embedding?: number[]`: absent, or an array of numbers of any length (the dimensions are the implementation's;
    an empty array and numbers beyond float32 are interop hole I6). null is open: read as absent (errata O37)."""
    if "embedding" not in mem or mem["embedding"] is None:
        return
    value = mem["embedding"]
    if not isinstance(value, list):
        yield Failure("embedding is not an array of numbers", value, "number[]", f"{where}.embedding", EMBEDDING_SENTENCE)
        return
    wrong = [i for i, v in enumerate(value) if not _number(v)]
    if wrong:
        yield Failure(f"embedding holds {len(wrong)} value(s) that are not numbers (the first at [{wrong[0]}])", value[wrong[0]],
                      "a JSON number", f"{where}.embedding[{wrong[0]}]", EMBEDDING_SENTENCE)


def source_failures(mem: dict[str, Any], where: str) -> Iterator[Failure]:
    source = mem.get("source")
    if not isinstance(source, dict):
        yield Failure("source is not a MemorySource object", source, "{tool, timestamp, ...}", f"{where}.source")
        return
    if not isinstance(source.get("tool"), str):  # "" is a string: the spec sets no minimum (errata O34)
        yield Failure("source.tool is missing or not a string", source.get("tool", "<absent>"), "the tool's identifier", f"{where}.source.tool")
    if instant(source.get("timestamp")) is None:
        yield Failure("source.timestamp is not an ISO 8601 UTC timestamp", source.get("timestamp", "<absent>"), "ISO 8601 UTC", f"{where}.source.timestamp")
    for name in ("session_id", "user_id"):  # optional strings; null is open, read as absent (errata O37)
        if name in source and source[name] is not None and not isinstance(source[name], str):
            yield Failure(f"source.{name} is not a string", source[name], "string", f"{where}.source.{name}", SOURCE_SENTENCES[name])


def envelope_failures(ctx: CheckContext, answer: Reply, code: str | None = None) -> Iterator[Failure]:
    """§4: a JSON {error, message, details?} whose code is a §4 code with its status (errata O15: `message`
    may be absent unless option error_message=required pins that reading)."""
    body = answer.body
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        yield Failure(f"{answer.method} {answer.path}: the error is not the §4 envelope",
                      f"{answer.content_type} {answer.raw[:160].decode('utf-8', 'replace')}",
                      '{"error": CODE, "message": "...", "details": {}}', "$.error")
        return
    if "json" not in answer.content_type.lower():
        yield Failure(f"{answer.method} {answer.path}: the error is not served as JSON", answer.content_type or "<none>",
                      "application/json", "$")
    if ctx.option("error_message") == "required" and not isinstance(body.get("message"), str):
        yield Failure(f"{answer.method} {answer.path}: the error has no message", body.get("message", "<absent>"),
                      "a human-readable message (§4)", "$.message", readings=("O15:message-required",))
    elif "message" in body and body["message"] is not None and not isinstance(body["message"], str):
        # message may be left out: the §3.3 404 example is { "error": "memory_not_found" } alone (errata O15)
        yield Failure(f"{answer.method} {answer.path}: the error message is not a string", body["message"], "a string", "$.message")
    if "details" in body and body["details"] is not None and not isinstance(body["details"], dict):
        yield Failure(f"{answer.method} {answer.path}: details is not an object", body["details"], "{}", "$.details")
    if code is not None and body["error"] != code:
        yield Failure(f"{answer.method} {answer.path}: wrong error code", body["error"], code, "$.error")
    elif body["error"] in omp.ERRORS and omp.ERRORS[body["error"]] != answer.status:
        yield Failure(f"{answer.method} {answer.path}: the error code does not go with the status", f"{answer.status} {body['error']}",
                      f"{omp.ERRORS[body['error']]} {body['error']}", "$.error")


def error_failures(ctx: CheckContext, answer: Reply, status: int | None, code: str | None) -> Iterator[Failure]:
    """An error answer: never 5xx or HTML, the status (None: any 4xx) and the §4 envelope."""
    if answer.status >= 500:
        yield Failure(f"{answer.method} {answer.path}: a server error instead of a 4xx", answer.status,
                      status or "4xx", "$", answer.raw[:160].decode("utf-8", "replace"))
        return
    if answer.ok:
        yield Failure(f"{answer.method} {answer.path}: accepted instead of refused", f"{answer.status} {answer.raw[:160].decode('utf-8', 'replace')}",
                      f"{status or '4xx'} {code or ''}".strip(), "$")
        return
    if status is not None and answer.status != status or not 400 <= answer.status < 500:
        yield Failure(f"{answer.method} {answer.path}: wrong status", answer.status, status or "4xx", "$")
    yield from envelope_failures(ctx, answer, code)


def validation_failures(ctx: CheckContext, answer: Reply) -> Iterator[Failure]:
    yield from error_failures(ctx, answer, 422, "validation_error")


def declared_level(body: Any) -> str | None:
    """The level /v1/health names in the first of compliance / compliance_level / level (errata O4)."""
    if not isinstance(body, dict):
        return None
    for name in omp.HEALTH_LEVEL_FIELDS:
        value = body.get(name)
        if isinstance(value, str):
            for title, key in omp.LEVEL_NAMES.items():
                if value.strip().lower() in (title.lower(), key):
                    return key
    return None


def sane_page(answer: Reply) -> bool:
    """A bad parameter served under the lenient reading: a page of at most 100 memories (and an honest mode)."""
    body = answer.body if isinstance(answer.body, dict) else {}
    memories = body.get("memories")
    if not (isinstance(memories, list) and len(memories) <= omp.MAX_LIMIT
            and body.get("mode_used", "keyword") in omp.SEARCH_MODES):
        return False
    # a page of memories, not any 200 with a "memories" key: a server answering everything with junk
    # must not pass as one that clamps bad paging (the hostile zoo showed it)
    return all(isinstance(m, dict) and not any(id_failures(m, "$")) and not any(content_type_failures(m, "$"))
               for m in memories)


def served_sanely_to(answer: Reply, body: Any) -> bool:
    """A sane page; search `tags` given as a string is read like list's `tags` (comma-separated), so
    every memory served holds each of them (errata O9)."""
    if not (answer.ok and sane_page(answer)):
        return False
    tags = body.get("tags") if isinstance(body, dict) else None
    if isinstance(tags, str):
        wanted = {t.strip() for t in tags.split(",") if t.strip()}
        return all(wanted <= set(m.get("tags") or []) for m in answer.body["memories"])
    return True


def served_sanely(answer: Reply, case: dict[str, Any]) -> bool:
    """served_sanely_to for the body of a request fixture."""
    return served_sanely_to(answer, case["document"].get("body"))


def o9_predictions(case: dict[str, Any], answer: Any) -> dict[str, bool]:
    """O9: a bad parameter of this fixture served as a sane page, or refused with a 4xx."""
    return {f"{case['id']}: served as a sane page": served_sanely(answer, case),
            f"{case['id']}: refused with a 4xx": 400 <= answer.status < 500}
