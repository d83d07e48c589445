"""Readings recorded from what the target was seen to do, never from the branch a check took.

A check that meets an open point of a spec (an errata id) names each plausible reading with its
prediction for the answer at hand; `observe` records every reading whose prediction held, and when
none of the accepted ones held gives a Failure naming them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .results import Failure

Prediction = bool | Callable[[Any], bool]


@dataclass(frozen=True)
class Observation:
    point: str
    matched: tuple[str, ...]  # the readings whose prediction held (recorded)
    accepted: tuple[str, ...]  # the readings the run accepts (all plausible ones unless an option pins one)
    failure: Failure | None  # when no accepted reading held

    def __bool__(self) -> bool:
        return self.failure is None

    def fits(self, reading: str) -> bool:
        return reading in self.matched


def equals(expected: Any) -> Callable[[Any], bool]:
    """A prediction: the answer is `expected` (one per reading, bound now, not when the loop has moved on)."""
    return lambda answer: bool(answer == expected)


def includes(item: Any) -> Callable[[Any], bool]:
    """A prediction: the answer, a collection, holds `item`."""
    return lambda answer: item in answer


def _holds(prediction: Prediction, answer: Any) -> bool:
    try:
        return bool(prediction(answer)) if callable(prediction) else bool(prediction)
    except (KeyError, TypeError, AttributeError, ValueError):
        return False  # an answer of an unforeseen shape fits no prediction about it


def observe(ctx: Any, point: str, predictions: Mapping[str, Prediction], answer: Any = None, *,
            accepted: Iterable[str] | None = None, title: str = "", path: str = "$",
            pinned: tuple[str, ...] = ()) -> Observation:
    """Record (ctx.reading) each reading of `point` whose prediction holds for `answer`. `accepted`:
    the readings the run accepts (default: every one given); `pinned`: the options that narrowed them,
    carried by the failure. The failure names every accepted reading and what was received."""
    matched = tuple(name for name, prediction in predictions.items() if _holds(prediction, answer))
    for name in matched:
        ctx.reading(point, name)
    allowed = tuple(predictions if accepted is None else accepted)
    if any(name in allowed for name in matched):
        return Observation(point, matched, allowed, None)
    expected = "one of the accepted readings (" + point + "): " + "; ".join(allowed)
    received = answer if not matched else {"answer": answer, "fits only": list(matched)}
    failure = Failure(title or f"the answer fits no accepted reading of {point}", received, expected, path,
                      readings=pinned)
    return Observation(point, matched, allowed, failure)
