"""A stand-in for the part of a check's context that records readings: `reading` and `observe` (the
real observe of harness/core/readings.py), each reading seen kept as (point, reading)."""

from __future__ import annotations

from typing import Any

from memconform.core.readings import observe


class ReadingRecorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def reading(self, point: str, seen: str) -> None:
        self.seen.append((point, seen))

    def observe(self, point: str, predictions: Any, answer: Any = None, **how: Any) -> Any:
        return observe(self, point, predictions, answer, **how)
