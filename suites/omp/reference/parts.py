"""Parts of the OMP reference server: constants, the §4 error, keys, rate limits, AI providers, requests."""

from __future__ import annotations

import re
import secrets
import string
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from memconform.suites.omp.format import (
    ERRORS,
    MAX_CONTENT,
    Credentials,
)

SERVER_NAME = "memconform-omp-reference"
MAX_BODY = 64 * 1024 * 1024
MAX_TRANSCRIPT = 200_000
MAX_EMBEDDING = 8192
ID_ALPHABET = string.ascii_letters + string.digits
DIGITS_RE = re.compile(r"^[0-9]+$")
TOOL_A, TOOL_B = "memconform-tool-a", "memconform-tool-b"
DEFAULT_USER, OTHER_USER = "default", "other"


class ApiError(Exception):
    """A §4 error: the code decides the status unless one is given."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.details = details or {}
        self.status = status or ERRORS.get(code, 400)
        self.headers = headers or {}


@dataclass(frozen=True)
class Principal:
    """Who a key speaks for: a user, and for a per-tool key the one tool it may read and write."""

    name: str
    user: str
    tool: str | None = None


@dataclass
class KeySet:
    """The keys of one server: >= 32 characters of cryptographic randomness each (§7)."""

    global_key: str
    tool_keys: dict[str, str]
    other_user_key: str

    @classmethod
    def generate(cls) -> KeySet:
        return cls(secrets.token_urlsafe(32), {TOOL_A: secrets.token_urlsafe(32), TOOL_B: secrets.token_urlsafe(32)},
                   secrets.token_urlsafe(32))

    def principals(self) -> dict[str, Principal]:
        out = {self.global_key: Principal("global", DEFAULT_USER)}
        out.update({key: Principal(f"tool:{tool}", DEFAULT_USER, tool) for tool, key in self.tool_keys.items()})
        out[self.other_user_key] = Principal("other-user", OTHER_USER)
        return out

    def credentials(self) -> Credentials:
        return Credentials(dict(self.tool_keys), self.other_user_key)


@dataclass(frozen=True)
class RateLimit:
    """At most `requests` per key in any `per_s` seconds (§7, errata O12)."""

    requests: int = 1000
    per_s: float = 10.0


class SlidingWindow:
    """The times of a key's last `requests` requests: a new one may go when the oldest is `per_s` old.

    Exact "N per W seconds" whatever the client's pace; a continuously refilled bucket would never
    trip for a client slower than N/W requests a second, however many it sent.
    """

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self.times: deque[float] = deque(maxlen=limit.requests)
        self.lock = threading.Lock()

    def take(self) -> float:
        """0 when a request may go ahead (and it is counted), else the seconds until one may."""
        with self.lock:
            now = time.monotonic()
            if len(self.times) == self.limit.requests and now - self.times[0] < self.limit.per_s:
                return self.times[0] + self.limit.per_s - now
            self.times.append(now)
            return 0.0


# the global key never trips during a suite run; the others trip within the suite's probe burst
SUITE_RATE_LIMITS: dict[str, RateLimit] = {"global": RateLimit(100_000, 10.0), "*": RateLimit(200, 10.0)}


class ProviderError(Exception):
    """The AI provider failed: answered as 502 ai_error."""


class Provider(Protocol):
    name: str

    def extract(self, transcript: str) -> list[dict[str, Any]]:
        """Memories found in a transcript: [{"content", "type", "tags"?}]."""
        ...

    def compress(self, transcript: str) -> str:
        """One summary of a transcript."""
        ...


class OfflineProvider:
    """Deterministic and local, for tests: one semantic memory per sentence; the summary is the opening."""

    name = "offline"

    @staticmethod
    def sentences(transcript: str) -> list[str]:
        parts = re.split(r"(?<=[.!?])\s+", transcript.strip())
        return [re.sub(r"^\w[\w .-]{0,40}:\s+", "", p).strip()[:MAX_CONTENT] for p in parts if p.strip()]

    def extract(self, transcript: str) -> list[dict[str, Any]]:
        return [{"content": s, "type": "semantic", "tags": ["extracted"]} for s in self.sentences(transcript) if s]

    def compress(self, transcript: str) -> str:
        found = self.sentences(transcript)
        return f"Summary of {len(found)} sentence(s): {' '.join(found)}"[:1000]


@dataclass
class Req:
    """One request as the handlers see it: query, path parameters, raw body."""

    params: Mapping[str, str]
    path: dict[str, str]
    raw: bytes
    headers: Mapping[str, str]


Out = tuple[int, Any, dict[str, str]]
