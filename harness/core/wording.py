"""Counted words every rendering shares: "1 check", "2 checks", never "1 checks"."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"
