"""What an HTTP target exchanged during a run: a curl line for each request of a failed check, and a HAR
file (HTTP Archive 1.2) of the run, as schemathesis offers.

Bounded: the last MAX_ENTRIES exchanges are kept, each body cut at MAX_BODY bytes; the HAR says so in
its `comment` fields (HAR 1.2 allows one on the log, on postData and on content), so a reader knows
what was cut: the log's states the bounds and how many exchanges were dropped, a cut body's says how
many bytes it had. Redacted: the
Authorization header is never recorded (a curl line says `$MEMCONFORM_API_KEY`, the HAR says
`[REDACTED]`), and every string goes through the run's redactor before it is written.
"""

from __future__ import annotations

import json
import shlex
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx (with its own CLI: rich, click, pygments) is imported only by what sends
    import httpx


MAX_ENTRIES = 2000
MAX_BODY = 8 * 1024
CURL_BODY_CHARS = 4000
KEY_VARIABLE = "$MEMCONFORM_API_KEY"
HIDDEN_HEADERS = ("authorization",)
START_UP = "(start-up: before any check)"


@dataclass
class Exchange:
    number: int
    started: str
    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes | None  # None: a body not recorded (a multipart upload)
    request_size: int
    keyed: bool
    status: int | None = None  # None: no answer (the error says why)
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_body: bytes = b""
    response_size: int = 0
    elapsed_ms: float = 0.0
    error: str = ""
    check: str = ""  # the check that sent it (set by the session after the check)


def _body_of(request: httpx.Request) -> tuple[bytes | None, int]:
    import httpx  # loaded already: the request is one of its objects

    stream = request.stream
    if isinstance(stream, httpx.ByteStream):
        body = b"".join(stream)
        return body[:MAX_BODY], len(body)
    return None, int(request.headers.get("content-length", "0") or 0)


class ExchangeLog:
    """The exchanges of one target, numbered; `since(mark)` gives those of one check."""

    def __init__(self) -> None:
        self.entries: deque[Exchange] = deque(maxlen=MAX_ENTRIES)
        self.count = 0

    def mark(self) -> int:
        return self.count

    def since(self, mark: int) -> list[Exchange]:
        return [e for e in self.entries if e.number >= mark]

    def begin(self, request: httpx.Request) -> Exchange:
        body, size = _body_of(request)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HIDDEN_HEADERS]
        entry = Exchange(self.count, datetime.now(UTC).isoformat(timespec="milliseconds"), request.method,
                         str(request.url), headers, body, size, "authorization" in request.headers)
        self.count += 1
        self.entries.append(entry)
        return entry


def finish(entry: Exchange, status: int, headers: dict[str, str], body: bytes, elapsed_s: float) -> None:
    entry.status, entry.response_headers = status, list(headers.items())
    entry.response_body, entry.response_size, entry.elapsed_ms = body[:MAX_BODY], len(body), elapsed_s * 1000


def curl_line(entry: Exchange) -> str:
    """The request as a shell command; the key is the variable the user sets, never its value."""
    words = ["curl", "-sS", "-X", entry.method, entry.url]
    line = " ".join(shlex.quote(w) for w in words)
    for name, value in entry.request_headers:
        if name.lower() in ("content-type", "accept") or name.lower().startswith("x-"):
            line += " -H " + shlex.quote(f"{name}: {value}")
    if entry.keyed:
        line += f' -H "Authorization: Bearer {KEY_VARIABLE}"'
    if entry.request_body is None:
        line += f"  # a multipart body of {entry.request_size} bytes, not recorded"
    elif entry.request_size:
        text = entry.request_body.decode("utf-8", errors="replace")
        if entry.request_size > len(entry.request_body) or len(text) > CURL_BODY_CHARS:
            line += f"  # a body of {entry.request_size} bytes: too long to show; see exchanges.har (cut at {MAX_BODY})"
        else:
            line += " --data-binary " + shlex.quote(text)
    return line


def _text(body: bytes, size: int) -> str:
    text = body.decode("utf-8", errors="replace")
    return text + (f"\n[... {size - len(body)} more bytes not recorded]" if size > len(body) else "")


def _cut(body: bytes | None, size: int) -> dict[str, str]:
    """The comment of a body the log cut (nothing for one kept whole)."""
    if body is None or size <= len(body):
        return {}
    return {"comment": f"body cut: the first {len(body)} of {size} bytes recorded (at most {MAX_BODY} per body)"}


def bounds_comment(kept: int, dropped: int) -> str:
    """The log's comment: what memconform keeps of a run's exchanges, and what it dropped from this one."""
    said = (f"memconform keeps the last {MAX_ENTRIES} exchanges of a run and at most {MAX_BODY} bytes "
            f"({MAX_BODY // 1024} KiB) of each request and response body (a cut body has a comment saying so); "
            f"the Authorization header is never recorded. This run: {kept} exchanges kept")
    return said + (f", the first {dropped} not kept." if dropped else ", none dropped.")


def _har_headers(headers: list[tuple[str, str]], keyed: bool = False) -> list[dict[str, str]]:
    out = [{"name": k, "value": v} for k, v in headers]
    return out + ([{"name": "Authorization", "value": "[REDACTED]"}] if keyed else [])


def har_entry(entry: Exchange) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": entry.method, "url": entry.url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _har_headers(entry.request_headers, entry.keyed), "queryString": [],
        "headersSize": -1, "bodySize": entry.request_size}
    if entry.request_size:
        mime = next((v for k, v in entry.request_headers if k.lower() == "content-type"), "")
        body = entry.request_body
        request["postData"] = {"mimeType": mime, "text": "[multipart body not recorded]" if body is None
                               else _text(body, entry.request_size), **_cut(body, entry.request_size)}
    mime = next((v for k, v in entry.response_headers if k.lower() == "content-type"), "")
    response = {
        "status": entry.status or 0, "statusText": entry.error[:300] if entry.status is None else "",
        "httpVersion": "HTTP/1.1", "cookies": [], "headers": _har_headers(entry.response_headers),
        "content": {"size": entry.response_size, "mimeType": mime, "text": _text(entry.response_body, entry.response_size),
                    **_cut(entry.response_body, entry.response_size)},
        "redirectURL": "", "headersSize": -1, "bodySize": entry.response_size}
    return {"startedDateTime": entry.started, "time": round(entry.elapsed_ms, 3), "request": request,
            "response": response, "cache": {}, "timings": {"send": 0, "wait": round(entry.elapsed_ms, 3), "receive": 0},
            "comment": entry.check or START_UP}


def write_har(path: Path, entries: list[Exchange], dropped: int, redactor: Any, version: str) -> None:
    """HAR 1.2 of the run's exchanges, each entry's comment naming the check that sent it, the log's the bounds."""
    log: dict[str, Any] = {"version": "1.2", "creator": {"name": "memconform", "version": version},
                           "entries": [har_entry(e) for e in entries], "comment": bounds_comment(len(entries), dropped),
                           "_dropped": dropped}  # HAR 1.2: a custom field's name starts with "_"
    path.write_text(json.dumps({"log": redactor.deep(log)}, ensure_ascii=False, indent=1), encoding="utf-8")


def merge_hars(path: Path, parts: list[Path]) -> bool:
    """One HAR of several (the parts of one run written by pytest-xdist workers, redacted already): the
    entries in time order, within the same bounds; False when no part holds one."""
    logs = [json.loads(p.read_text("utf-8"))["log"] for p in parts if p.is_file()]
    if not logs:
        return False
    entries = sorted((e for log in logs for e in log["entries"]), key=lambda e: e["startedDateTime"])
    dropped = sum(int(log.get("_dropped", 0)) for log in logs) + max(0, len(entries) - MAX_ENTRIES)
    kept = entries[-MAX_ENTRIES:]
    log = {"version": "1.2", "creator": logs[0]["creator"], "entries": kept,
           "comment": bounds_comment(len(kept), dropped), "_dropped": dropped}
    path.write_text(json.dumps({"log": log}, ensure_ascii=False, indent=1), encoding="utf-8")
    return True
