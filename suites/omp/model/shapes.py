"""What a served memory and an error must say (§2.1, §4), and the validity of a memory sent (§2.1)."""

from __future__ import annotations

from typing import Any

from memconform.suites.omp import format as omp

from .base import Check, Readings, body_of, brief, instant, same_json, sent_instant, status_of

# ---- §2.1 validity ---------------------------------------------------------------------------

VALID, INVALID, OPEN = "valid", "invalid", "open"


class Validity:
    """What the spec says of a body: valid, invalid (a 422 and nothing stored), or open (either)."""

    def __init__(self) -> None:
        self.kind = VALID
        self.why: list[str] = []

    def bad(self, why: str) -> None:
        self.kind, self.why = INVALID, [*self.why, why]

    def open(self, why: str) -> None:
        if self.kind == VALID:
            self.kind = OPEN
        self.why.append(why)


class Validator:
    def __init__(self, readings: Readings) -> None:
        self.readings = readings

    def text(self, v: Validity, value: Any, name: str, max_len: int | None, *, required: bool = True) -> None:
        if value is None and not required:
            return
        if not isinstance(value, str):
            v.bad(f"{name} is not a string")
            return
        if value == "":
            v.open(f"{name} is empty (errata O34)")
        if max_len is None:
            return
        code_points, utf16 = len(value), len(value.encode("utf-16-le")) // 2
        over = {"code-points": code_points > max_len, "utf-16": utf16 > max_len}
        if all(over.values()):
            v.bad(f"{name} is over {max_len} characters")
        elif any(over.values()):
            pinned = self.readings.char_unit
            if pinned == "either":
                v.open(f"{name} is at {max_len} in one count of characters (errata O19)")
            elif over[pinned]:
                v.bad(f"{name} is over {max_len} {pinned}")

    def stamp(self, v: Validity, value: Any, name: str, *, nullable: bool = False) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, str):
            v.bad(f"{name} is not a timestamp string")
        elif instant(value) is None:
            v.open(f"{name} {value[:40]!r} is not ISO 8601 UTC (errata O35)")

    def memory(self, body: Any, *, partial: bool) -> Validity:
        v = Validity()
        if not isinstance(body, dict):
            v.bad("the body is not an object")
            return v
        if "content" in body or not partial:
            self.text(v, body.get("content"), "content", omp.MAX_CONTENT)
        if "type" in body or not partial:
            if body.get("type") not in omp.TYPES:
                v.bad(f"type {body.get('type')!r} is not a MemoryType")
        if "source" in body or not partial:
            self.source(v, body.get("source"), partial)
        if "tags" in body:
            self.tags(v, body["tags"])
        self.text(v, body.get("namespace"), "namespace", omp.MAX_NAMESPACE, required=False)
        self.stamp(v, body.get("expires_at"), "expires_at", nullable=True)
        metadata = body.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            v.bad("metadata is not an object")
        elif isinstance(metadata, dict) and len(metadata) > omp.MAX_METADATA_KEYS:
            v.bad("metadata has more than 10 keys")
        elif isinstance(metadata, dict) and "" in metadata:
            v.open("metadata has an empty key (errata O35)")
        embedding = body.get("embedding")
        if embedding is not None and not (isinstance(embedding, list) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in embedding)):
            v.bad("embedding is not an array of numbers")
        elif embedding == []:
            v.open("embedding is empty (errata O35)")
        return v

    def source(self, v: Validity, source: Any, partial: bool) -> None:
        if not isinstance(source, dict):
            v.bad("source is not an object")
            return
        for name in ("tool", "timestamp"):
            if name not in source and partial:
                v.open(f"an update's source without {name} (errata O35: replaced or merged)")
        if "tool" in source or not partial:
            self.text(v, source.get("tool"), "source.tool", None)
        if "timestamp" in source or not partial:
            self.stamp(v, source.get("timestamp"), "source.timestamp")
        for name in ("session_id", "user_id"):
            if source.get(name) is not None and not isinstance(source[name], str):
                v.bad(f"source.{name} is not a string")

    def tags(self, v: Validity, tags: Any) -> None:
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            v.bad("tags is not an array of strings")
            return
        if len(tags) > omp.MAX_TAGS:
            v.bad("more than 20 tags")
        for tag in tags:
            self.text(v, tag, "a tag", omp.MAX_TAG_LEN)
        if len(set(tags)) != len(tags):
            v.open("a tag appears twice (errata O35)")


# ---- what a served memory must say -----------------------------------------------------------

def memory_shape(doc: Any) -> str | None:
    """§2.1: the fields every served memory has, of their types."""
    if not isinstance(doc, dict):
        return "a memory is not an object"
    if not isinstance(doc.get("id"), str) or not omp.ID_RE.match(doc["id"]):
        return f"the id {doc.get('id')!r} is not \"mem_\" + 16 alphanumerics"
    for name in ("created_at", "updated_at"):
        if instant(doc.get(name)) is None:
            return f"{name} {doc.get(name)!r} is not an ISO 8601 UTC timestamp"
    if not isinstance(doc.get("tags"), list):
        return "tags is not an array"
    return None


def fields_differ(served: dict[str, Any], want: dict[str, Any], *, stored: bool = False) -> str | None:
    """What a served memory says unlike the fields written (errata O22); `stored`: also id and timestamps."""
    names = ("content", "type") + (("id",) if stored else ())
    for name in names:
        if name in want and served.get(name) != want[name]:
            return f"{name}: served {served.get(name)!r}, expected {want[name]!r}"
    if "tags" in want and sorted(set(served.get("tags") or [])) != sorted(set(want["tags"] or [])):
        return f"tags: served {served.get('tags')!r}, expected {want['tags']!r}"
    if served.get("namespace") != want.get("namespace"):
        return f"namespace: served {served.get('namespace')!r}, expected {want.get('namespace')!r}"
    if not same_json(served.get("metadata") or {}, want.get("metadata") or {}):
        return f"metadata: served {served.get('metadata')!r}, expected {want.get('metadata')!r}"
    # the same instant in whatever form each side wrote it (errata O53); the served form is O6's business
    if sent_instant(served.get("expires_at")) != sent_instant(want.get("expires_at")):
        return f"expires_at: served {served.get('expires_at')!r}, expected {want.get('expires_at')!r}"
    source, wanted = served.get("source") or {}, want.get("source") or {}
    if isinstance(wanted, dict) and wanted:
        if not isinstance(source, dict) or source.get("tool") != wanted.get("tool"):
            return f"source.tool: served {source.get('tool') if isinstance(source, dict) else source!r}, expected {wanted.get('tool')!r}"
        if sent_instant(source.get("timestamp")) != sent_instant(wanted.get("timestamp")):
            return f"source.timestamp: served {source.get('timestamp')!r}, expected {wanted.get('timestamp')!r}"
        for name in ("session_id", "user_id"):
            if source.get(name) != wanted.get(name):
                return f"source.{name}: served {source.get(name)!r}, expected {wanted.get(name)!r}"
    if stored:
        for name in ("created_at", "updated_at"):
            if name in want and sent_instant(served.get(name)) != sent_instant(want.get(name)):
                return f"{name}: served {served.get(name)!r}, stored {want.get(name)!r}"
    return None


def memory_is(want: dict[str, Any], *, status: int, stored: bool = False) -> Check:
    def check(answer: Any) -> str | None:
        if status_of(answer) != status:
            return f"answered {brief(answer)}, not {status}"
        body = body_of(answer)
        return memory_shape(body) or fields_differ(body, want, stored=stored)
    return check


def error_is(readings: Readings, status: int | None, code: str | None) -> Check:
    """A §4 error: the status (None: any 4xx), the envelope, the code (errata O15)."""
    def check(answer: Any) -> str | None:
        got = status_of(answer)
        if got >= 500:
            return f"a server error ({got})"
        if status is not None and got != status or not 400 <= got < 500:
            return f"answered {brief(answer)}, not {status or 'a 4xx'}"
        body = body_of(answer)
        if not isinstance(body, dict) or not isinstance(body.get("error"), str):
            return "the error is not the §4 envelope"
        if readings.error_message == "required" and not isinstance(body.get("message"), str):
            return "the error has no message (error_message=required)"
        if code is not None and body["error"] != code:
            return f"error code {body['error']!r}, not {code!r}"
        if body["error"] in omp.ERRORS and omp.ERRORS[body["error"]] != got:
            return f"error code {body['error']!r} does not go with {got}"
        return None
    return check


def refused(readings: Readings) -> Check:
    return error_is(readings, None, None)
