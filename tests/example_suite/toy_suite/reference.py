"""The Toy Counter reference: one counter in memory."""

from __future__ import annotations

from typing import Any

from memconform.targets.base import Rejected


class ToyCounter:
    def __init__(self) -> None:
        self.count = 0
        self.notes: list[dict[str, Any]] = []

    def get(self, body: Any = None) -> dict[str, Any]:
        return {"toy": "counter", "count": self.count, **({"notes": [dict(n) for n in self.notes]} if self.notes else {})}

    def load(self, body: Any = None) -> dict[str, Any]:
        """Make a counter document the current one; one that breaks SPEC.md is refused and changes nothing."""
        notes = body.get("notes", []) if isinstance(body, dict) else None
        count = body.get("count") if isinstance(body, dict) else None
        if not isinstance(body, dict) or body.get("toy") != "counter" or not isinstance(count, int) \
                or isinstance(count, bool) or count < 0 or not isinstance(notes, list):
            raise Rejected({"error": "not a counter document"})
        ids = [n.get("id") for n in notes if isinstance(n, dict)]
        if len(ids) != len(notes) or len(set(ids)) != len(ids) or not all(
                isinstance(n["id"], str) and isinstance(n.get("text"), str) and isinstance(n.get("meta", {}), dict)
                for n in notes):
            raise Rejected({"error": "each note needs a unique string id, a string text and an object meta"})
        self.count, self.notes = count, [dict(n) for n in notes]
        return self.get()

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
