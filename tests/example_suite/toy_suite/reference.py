"""The Toy Counter reference: one counter in memory."""

from __future__ import annotations

from typing import Any

from memconform.targets.base import Rejected


class ToyCounter:
    def __init__(self) -> None:
        self.count = 0

    def get(self, body: Any = None) -> dict[str, Any]:
        return {"toy": "counter", "count": self.count}

    def add(self, body: Any = None) -> dict[str, Any]:
        n = (body or {}).get("n")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise Rejected({"error": "n must be a non-negative integer"})
        self.count += n
        return self.get()


class AddsOneTooMany(ToyCounter):
    """Mutant: `add` is off by one."""

    def add(self, body: Any = None) -> dict[str, Any]:
        super().add(body)
        self.count += 1
        return self.get()


class AcceptsNegative(ToyCounter):
    """Mutant: a negative K is applied."""

    def add(self, body: Any = None) -> dict[str, Any]:
        self.count += (body or {}).get("n", 0)
        return self.get()


class NegativeCount(ToyCounter):
    """Mutant: the document says the count is negative."""

    def get(self, body: Any = None) -> dict[str, Any]:
        return {"toy": "counter", "count": self.count - 1}


MUTANTS = {cls.__name__: cls for cls in (AddsOneTooMany, AcceptsNegative, NegativeCount)}
EXPECTED_KILLS = {
    "AddsOneTooMany": {"toy.add_increases_by_k"},
    "AcceptsNegative": {"toy.rejects_negative_k"},
    "NegativeCount": {"toy.count_non_negative"},
}
