"""Secrets never reach a report or a log."""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"']+")


class Redactor:
    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets = sorted({s for s in (secrets or []) if s and len(s) >= 3}, key=len, reverse=True)

    def add(self, secret: str | None) -> None:
        """Learn a secret met during the run (a per-tool key from a credentials file, say)."""
        if secret and len(secret) >= 3 and secret not in self.secrets:
            self.secrets = sorted([*self.secrets, secret], key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, MASK)
        return _BEARER.sub(r"\1" + MASK, value)

    def deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.deep(v) for k, v in value.items()}
        return value
