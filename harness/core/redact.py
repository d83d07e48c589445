"""Secrets never reach a report, a file or the terminal; target values become strict JSON data.

Redaction works on Python values, never on serialized JSON: a secret is replaced inside strings
(values and free text), so a key that happens to be "type" or "foo" cannot rewrite the report's
own structure. Callers redact first and cut to length after, so no part of a secret survives a cut.
"""

from __future__ import annotations

import enum
import math
import re
import sys
from typing import IO, TYPE_CHECKING, Any

from .wording import visible

if TYPE_CHECKING:
    from .secret_forms import SecretForms

MASK = "***"
MASKS = ("***", "###", "~~~", "%%%", "^^^")  # one that shares no character with the secret
MIN_LEARNED_SECRET = 3  # a secret met during the run (a key in a target's file): shorter is ordinary text
MAX_DEPTH = 32  # deeper target values are cut: reports stay readable and recursion bounded
MAX_INT_BITS = 3000  # ~900 digits: beyond it Python cannot print (or a strict reader parse) the number
_BEARER = re.compile(r"(?i)(bearer\s+)(?!\$MEMCONFORM_API_KEY\b)[^\s\"']+")  # the variable's name is no secret
# what follows "Bearer" in prose ("Bearer token authentication"), outside an Authorization header: a short word of
# letters, capitalised at most, with its punctuation; a credential has digits, symbols, mixed case or length. Values
# are masked, never the spec's words.
_PROSE_WORD = re.compile(r"[A-Za-z][a-z]{0,15}[.,;:!?)]*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: str) -> str:
    """Lone surrogates (from a target's invalid \\ud800 escapes) as visible text, never as code points."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def plain(value: Any, depth: int = 0) -> Any:
    """Any Python value as strict-JSON-able data: str keys, finite numbers, bounded depth, no surrogates."""
    return _plain(value, depth, set())


def _plain(value: Any, depth: int, path: set[int]) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value, depth, path)
    if isinstance(value, int):
        return value if value.bit_length() <= MAX_INT_BITS else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _text(bytes(value).decode("utf-8", "replace"))
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if depth >= MAX_DEPTH:
            return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"
        if id(value) in path:
            return f"<{type(value).__name__} that contains itself>"
        path.add(id(value))
        try:
            if isinstance(value, dict):
                out: dict[str, Any] = {}
                for k, v in value.items():
                    key = _plain(k, depth + 1, path)
                    out[key if isinstance(key, str) else _json_key(key)] = _plain(v, depth + 1, path)
                return out
            items = [_plain(v, depth + 1, path) for v in value]
            return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
        finally:
            path.discard(id(value))
    try:
        text = str(value)
    except Exception:  # a hostile __str__: say what it was, nothing more
        text = f"<{type(value).__name__}>"
    return _text(text)


def _json_key(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


# Report fields the harness itself generates from closed vocabularies (enums, ids, counts): a
# target cannot put a secret there, and redacting them would break the report's schema or joins.
HARNESS_FIELDS = frozenset({
    "type", "report_version", "harness_version", "started_at", "finished_at", "outcome", "keyword",
    "check_id", "suite", "suites", "spec", "section", "level", "profile", "seed", "exit_code", "counts",
    "duration_s", "python", "status", "point", "not_applicable", "inconclusive", "in_clause", "warning",
    "claimed", "implemented", "optional", "checks",
    "chain",  # the footer's digest chain (hex): masking a key found in it would break it
})


def _mask_for(secret: str) -> str:
    """A mask with no character of the secret: masking can then never form the secret anew."""
    return next((m for m in MASKS if m[0] not in secret), "")


class Redactor:
    """Replaces secrets inside strings. The user's secrets are masked whatever their length (a key
    "e" makes a report hard to read, never a leak); secrets learned from a target from 3 characters."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets = sorted({_text(s) for s in (secrets or []) if s}, key=len, reverse=True)
        self._forms: dict[str, SecretForms] = {}

    def add(self, secret: str | None) -> None:
        """Learn a secret met during the run (a per-tool key from a credentials file, say)."""
        if secret and len(secret) >= MIN_LEARNED_SECRET and _text(secret) not in self.secrets:
            self.secrets = sorted([*self.secrets, _text(secret)], key=len, reverse=True)

    def forms(self, secret: str) -> SecretForms:
        """Every form of `secret` to mask (encoded, and runs of it), compiled once."""
        if secret not in self._forms:
            # only a run with secrets masks them: validate starts without secret_forms (base64, bisect, regexes)
            from .secret_forms import SecretForms

            self._forms[secret] = SecretForms(secret)
        return self._forms[secret]

    def text(self, value: str) -> str:
        value = _text(value)
        for _ in range(len(self.secrets) + 2):  # one mask could form another secret: repeat until none
            before = value
            for secret in self.secrets:
                while secret in value:  # deleting (no mask fits) can join two halves into a new one
                    value = value.replace(secret, _mask_for(secret))
                value = self.forms(secret).mask(value, _mask_for(secret))
            value = _BEARER.sub(self._bearer, value)
            if value == before:
                break
        return value

    def _bearer(self, m: re.Match[str]) -> str:
        """A bearer credential no secret of the run names, masked; a word of prose after "Bearer" kept."""
        header = "authorization" in m.string[max(0, m.start() - 24):m.start()].lower()  # a header: always a credential
        if not header and _PROSE_WORD.fullmatch(m.group(0)[len(m.group(1)):]):
            return m.group(0)
        return m.group(1) + MASK if all(s not in m.group(1) + MASK for s in self.secrets) else m.group(1)

    def binary(self, data: bytes) -> bytes:
        """Bytes that are not UTF-8 text (a raw request body) with every secret masked: each byte read
        as one character (latin-1), the secret as its UTF-8 bytes read the same way, in all its forms."""
        text = data.decode("latin-1")
        for secret in self.secrets:
            as_bytes = secret.encode("utf-8").decode("latin-1")
            mask = _mask_for(as_bytes) or MASK
            while as_bytes in text:
                text = text.replace(as_bytes, mask)
            text = self.forms(as_bytes).mask(text, mask)
        return text.encode("latin-1")

    def deep(self, value: Any, keys: bool = True) -> Any:
        """A target's value made plain, with every string (and, with `keys`, every key) redacted."""
        return self._deep(plain(value), keys)

    def _deep(self, value: Any, keys: bool) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._deep(v, keys) for v in value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = self.text(k) if keys else k
                while key in out:  # two keys redacted alike: keep both entries
                    key += "'"
                out[key] = self._deep(v, keys)
            return out
        return value

    def line(self, line: dict[str, Any]) -> dict[str, Any]:
        """A report line: its own keys and harness fields untouched, every other string redacted."""
        return self._line(plain(line))

    def _line(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (v if k in HARNESS_FIELDS else
                        self._deep(v, True) if k in ("received", "expected") else self._line(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self._line(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


class Printer:
    """The one way the CLI and the plugin write to the terminal: every line redacted first."""

    def __init__(self, redactor: Redactor, stream: IO[str] | None = None) -> None:
        self.redactor = redactor
        self.stream = stream

    def __call__(self, *parts: Any, file: IO[str] | None = None, end: str = "\n") -> None:
        text = " ".join(p if isinstance(p, str) else str(plain(p)) for p in parts)
        out = file or self.stream or sys.stdout
        out.write(visible(self.redactor.text(text)) + end)  # a target's escapes shown, never obeyed
        out.flush()
