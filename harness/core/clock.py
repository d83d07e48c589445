"""One clock per target: every call it makes draws on the budget of the run and of the check running.

A call's deadline is min(its own deadline, what is left of the check's budget, what is left of the
run's), so per-call deadlines can no longer add up past the run. A target that times out, hangs or
stalls `STRIKES` times in a row is marked hung (a circuit breaker): every later call errors at once
with the reason, and the run ends on time with its report completed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from .results import TargetError

STRIKES = 3  # timeouts in a row that mark a target hung; an answer in between resets the count


class Clock:
    """The budgets one target's calls share. `run_deadline` is an absolute time.monotonic() value, so
    the targets of one run (one per suite) share it exactly; the check budget is set by the runner."""

    def __init__(self, run_deadline: float, run_budget_s: float, check_budget_s: float | None = None,
                 strikes: int = STRIKES, now: Callable[[], float] = time.monotonic) -> None:
        self.run_deadline = run_deadline
        self.run_budget_s = run_budget_s
        self.check_budget_s = check_budget_s
        self.check_deadline = math.inf
        self.this_check_s: float | None = check_budget_s  # the running check's budget (a sweep's is larger)
        self.strikes_to_hang = strikes
        self.strikes = 0
        self.hung: str | None = None
        self._now = now

    @classmethod
    def starting_now(cls, run_budget_s: float, check_budget_s: float | None = None, strikes: int = STRIKES) -> Clock:
        return cls(time.monotonic() + run_budget_s, run_budget_s, check_budget_s, strikes)

    def sibling(self) -> Clock:
        """A clock for another target of the same run: the same run deadline, its own check budget and breaker."""
        return Clock(self.run_deadline, self.run_budget_s, self.check_budget_s, self.strikes_to_hang, self._now)

    # -- the runner ------------------------------------------------------------------------
    def start_check(self, budgets: float = 1.0) -> None:
        """A check starts: it may spend `budgets` check budgets (a sweep of a domain table more than one)."""
        self.this_check_s = budgets * self.check_budget_s if self.check_budget_s else None
        self.check_deadline = self._now() + self.this_check_s if self.this_check_s else math.inf

    def end_check(self) -> None:
        self.check_deadline = math.inf

    # -- every call ------------------------------------------------------------------------
    def spent(self) -> str | None:
        """Why no call may start now (hung, or a budget spent), or None."""
        if self.hung:
            return f"the target was marked hung: {self.hung}"
        now = self._now()
        if now >= self.run_deadline:
            return f"the run budget ({self.run_budget_s:g} s) is spent"
        if now >= self.check_deadline:
            return f"the check budget ({self.this_check_s:g} s) is spent"
        return None

    def deadline(self, what: str, call_s: float) -> float:
        """The absolute deadline of one call (raises TargetError, the call not made, when none is left)."""
        reason = self.spent()
        if reason:
            raise TargetError(f"{what}: not sent: {reason}")
        return min(self._now() + call_s, self.run_deadline, self.check_deadline)

    def left(self, what: str, call_s: float) -> float:
        """Seconds one call may take (as `deadline`, relative)."""
        return max(0.0, self.deadline(what, call_s) - self._now())

    def cut_short(self, deadline: float, call_s: float) -> str:
        """What bounded a call that ran to `deadline`: its own deadline or a budget (for the error text)."""
        slack = 0.25  # the caller may have taken its start time a moment after the deadline was set
        if deadline >= self.run_deadline - slack:
            return f"the run budget of {self.run_budget_s:g} s"
        if deadline >= self.check_deadline - slack:
            return f"the check budget of {self.this_check_s:g} s"
        return f"the call deadline of {call_s:g} s"

    def timed_out(self, what: str) -> None:
        """A call ended without an answer in time (a timeout, a stall, a hang): one strike."""
        self.strikes += 1
        if self.strikes >= self.strikes_to_hang and not self.hung:
            self.hung = f"{self.strikes} calls in a row got no answer in time (the last: {what[:200]})"

    def hang(self, reason: str) -> None:
        """Mark the target hung at once (an in-process call that cannot be stopped)."""
        self.hung = self.hung or reason

    def answered(self) -> None:
        self.strikes = 0
