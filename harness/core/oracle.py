"""One acceptable answer of a suite's executable model (suites/<spec>/model.py) to one request: accepted
or refused, the state after it, the reading of open spec text it follows ("" where none is open), why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

StateT = TypeVar("StateT")


@dataclass(frozen=True)
class Answer(Generic[StateT]):
    accepted: bool
    state: StateT
    reading: str = ""  # the reading this answer follows ("" where none is open)
    why: str = ""
