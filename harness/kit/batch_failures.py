"""A batch write with one item in its middle of a class real implementations choke on (an optional field
absent, a value at its limit, an unknown enum value, a value over its limit), judged by what the spec
allows for that class:

- a class the spec allows: every item written;
- a class it forbids: what the suite's spec lets a batch do with one bad item (all or nothing: the batch
  refused and none of it written; or partial progress reported: the bad item refused and named, the
  others written);
- a class it is silent on: any of these.

Which of them the target did is recorded as a reading (`ctx.observe`) from what was seen afterwards:
never from the branch a check took. An import that stops at the bad item, keeping those before it and
dropping those after without saying so, fits none of them and is named as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure

ALL = "every item written"
REPORTED = "the middle item refused and reported, the others written"
REFUSED = "the whole batch refused, none of it written"
WHOLE = (REFUSED,)  # all or nothing
EITHER = (REPORTED, REFUSED)  # partial progress reported, or all or nothing
BATCH = 5
MIDDLE = BATCH // 2


@dataclass(frozen=True)
class BatchResult:
    """What one batch write did: accepted (the operation said it succeeded), reported (its answer names the
    middle item as refused), stored (each item of the batch, in order: is it there afterwards)."""

    accepted: bool
    reported: bool
    stored: tuple[bool, ...]
    middle: int = MIDDLE

    def others(self) -> list[bool]:
        return [s for i, s in enumerate(self.stored) if i != self.middle]

    def predictions(self) -> dict[str, bool]:
        return {ALL: self.accepted and all(self.stored),
                REPORTED: self.accepted and self.reported and all(self.others()) and not self.stored[self.middle],
                REFUSED: not self.accepted and not any(self.stored)}

    def stopped_midway(self) -> bool:
        """The items before the middle one written, it and those after it not."""
        return all(self.stored[:self.middle]) and not any(self.stored[self.middle:])

    def summary(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "middle item reported": self.reported,
                "items written, in order": ["yes" if s else "no" for s in self.stored]}


def accepted_readings(expect: str, when_invalid: tuple[str, ...]) -> tuple[str, ...]:
    if expect == "valid":
        return (ALL,)
    if expect == "invalid":
        return when_invalid
    return (ALL, *when_invalid)


def judge(ctx: CheckContext, point: str, label: str, expect: str, outcome: BatchResult,
          when_invalid: tuple[str, ...], ask: Callable[..., Observation] | None = None) -> Iterator[Failure]:
    """The outcome against the readings this class allows; the reading seen is recorded under `point`.
    `ask(ctx, point, outcome, accepted=, shown=, title=, path=)`: the suite's table of readings, when it has
    one, predicts the readings instead of `BatchResult.predictions`."""
    allowed = accepted_readings(expect, when_invalid)
    if outcome.stopped_midway() and not outcome.reported:
        title = f"{label}: the write stopped at the middle item without saying so (the items before it kept, after it dropped)"
    else:
        title = f"{label} ({expect}): the batch did none of what the spec allows"
    if expect == "valid":  # not an open point: the spec allows the item, so the whole batch is written
        if not outcome.predictions()[ALL]:
            yield Failure(title, outcome.summary(), ALL, "$")
        return
    if ask is not None:
        seen = ask(ctx, point, outcome, accepted=allowed, shown=outcome.summary(), title=title, path="$")
    else:
        seen = ctx.observe(point, outcome.predictions(), outcome.summary(), accepted=allowed, title=title, path="$")
    if seen.failure is not None:
        yield seen.failure


def kept(label: str, before: dict[str, Any], after: dict[str, Any]) -> Iterator[Failure]:
    """What was stored before the batch, compared after it (key -> the fields judged): nothing lost or changed."""
    lost = sorted(k for k in before if k not in after)
    changed = sorted(k for k in before if k in after and after[k] != before[k])
    if lost:
        yield Failure(f"{label}: a record stored before the batch was lost", lost[:3], "still there", "$")
    if changed:
        k = changed[0]
        yield Failure(f"{label}: a record stored before the batch changed", after[k], before[k], "$", f"{len(changed)} changed")
