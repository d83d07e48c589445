"""One clock per target: every call it makes draws on the budget of the run and of the check running.

A call's deadline is min(its own deadline, what is left of the check's budget, what is left of the
run's), so per-call deadlines can no longer add up past the run. A target that times out, hangs or
stalls `STRIKES` times in a row is marked hung (a circuit breaker): every later call errors at once
with the reason, and the run ends on time with its report completed.

The run and check budgets do not count the time this process's threads waited for a CPU (Starvation):
on a busy machine a check of the embedded references took 17 times its quiet wall time and ran out of
budget, a verdict the machine's load decided. A target that hangs leaves our threads blocked, not
waiting for a CPU, so it is still cut at the budget; a call's own deadline stays wall time.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable

from .results import TargetError

STRIKES = 3  # timeouts in a row that mark a target hung; an answer in between resets the count
TASKS = "/proc/self/task"
STRETCH_AT_MOST = 20.0  # a budget moves on by its waits for a CPU up to 20 times itself (as a call, targets/http.py):
# a run stays bounded at any load, a spinning target's own waits included
SAMPLE_GAP_S = 0.05  # reading every thread's wait costs ~50 us: at most one sample per gap, the last total between


def thread_cpu_waits_ns() -> dict[int, int]:
    """Each live thread of this process: nanoseconds it has waited, runnable, for a CPU (Linux schedstat's
    second field); {} where the kernel does not say (another system, or schedstat off)."""
    try:
        tids = os.listdir(TASKS)
    except OSError:
        return {}
    waits = {}
    for tid in tids:
        try:
            with open(f"{TASKS}/{tid}/schedstat", "rb") as stat:
                waits[int(tid)] = int(stat.read().split()[1])
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            continue
    return waits


class Starvation:
    """Seconds this process waited for a CPU, summed sample by sample: the growth of each thread's wait since
    the sample before (a thread new since then counts whole), never more than the wall time between two
    samples (threads waiting side by side are one wait). A thread that ended between samples takes its last
    moments with it: an undercount, so a budget is never stretched by more than the waiting seen."""

    def __init__(self, read: Callable[[], dict[int, int]] | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self._read = read or thread_cpu_waits_ns
        self._now = now
        self._lock = threading.Lock()
        self._seen = self._read()
        self._at = now()
        self.total_s = 0.0

    def __call__(self) -> float:
        with self._lock:
            at = self._now()
            if at - self._at < SAMPLE_GAP_S:  # the waits meanwhile are counted at the next sample
                return self.total_s
            waits = self._read()
            grown = sum(ns - self._seen[tid] if ns >= self._seen.get(tid, ns + 1) else ns for tid, ns in waits.items())
            self.total_s += min(grown / 1e9, max(0.0, at - self._at))
            self._seen, self._at = waits, at
            return self.total_s


def no_starvation() -> float:
    return 0.0


class Clock:
    """The budgets one target's calls share. `run_deadline` is an absolute time.monotonic() value, so
    the targets of one run (one per suite) share it exactly; the check budget is set by the runner."""

    def __init__(self, run_deadline: float, run_budget_s: float, check_budget_s: float | None = None,
                 strikes: int = STRIKES, now: Callable[[], float] = time.monotonic,
                 starved: Callable[[], float] = no_starvation, run_starved_from: float | None = None) -> None:
        self.run_deadline = run_deadline
        self.run_budget_s = run_budget_s
        self.check_budget_s = check_budget_s
        self.check_deadline = math.inf
        self.this_check_s: float | None = check_budget_s  # the running check's budget (a sweep's is larger)
        self.strikes_to_hang = strikes
        self.strikes = 0
        self.hung: str | None = None
        self._now = now
        # the budgets' deadlines move on by the time waited for a CPU since the run (the check) started
        self._starved = starved
        self._run_starved_from = starved() if run_starved_from is None else run_starved_from
        self._check_starved_from = self._run_starved_from
        self._run_end, self._check_end = run_deadline, math.inf  # as last seen: what cut_short compares with

    @classmethod
    def starting_now(cls, run_budget_s: float, check_budget_s: float | None = None, strikes: int = STRIKES) -> Clock:
        return cls(time.monotonic() + run_budget_s, run_budget_s, check_budget_s, strikes, starved=Starvation())

    def sibling(self) -> Clock:
        """A clock for another target of the same run: the same run deadline, its own check budget and breaker."""
        return Clock(self.run_deadline, self.run_budget_s, self.check_budget_s, self.strikes_to_hang, self._now,
                     self._starved, self._run_starved_from)

    # -- the runner ------------------------------------------------------------------------
    def start_check(self, budgets: float = 1.0) -> None:
        """A check starts: it may spend `budgets` check budgets (a sweep of a domain table more than one)."""
        self.this_check_s = budgets * self.check_budget_s if self.check_budget_s else None
        self.check_deadline = self._now() + self.this_check_s if self.this_check_s else math.inf
        self._check_starved_from = self._starved()

    def end_check(self) -> None:
        self.check_deadline = math.inf

    # -- every call ------------------------------------------------------------------------
    def _ends(self) -> tuple[float, float]:
        """The run's and the check's deadlines, each moved on by the CPU waits since it started."""
        starved = self._starved()
        self._run_end = self.run_deadline + min(starved - self._run_starved_from, STRETCH_AT_MOST * self.run_budget_s)
        check_s = self.this_check_s or 0.0
        self._check_end = self.check_deadline + min(starved - self._check_starved_from, STRETCH_AT_MOST * check_s)
        return self._run_end, self._check_end

    def starved_s(self) -> float:
        """Seconds this process has waited for a CPU so far (0 where not measured): a call that timed out
        while we waited may wait that long again (targets/http.py)."""
        return self._starved()

    def run_end(self) -> float:
        """The run's deadline as it stands now (moved on by the CPU waits so far), in time.monotonic()."""
        return self._ends()[0]

    def budget_left(self) -> tuple[float, str]:
        """Seconds left of the tighter budget now, and which ("check" or "run")."""
        run_end, check_end = self._ends()
        return (check_end - self._now(), "check") if check_end <= run_end else (run_end - self._now(), "run")

    def spent(self) -> str | None:
        """Why no call may start now (hung, or a budget spent), or None."""
        if self.hung:
            return f"the target was marked hung: {self.hung}"
        return self._spent(self._now(), *self._ends())

    def _spent(self, now: float, run_end: float, check_end: float) -> str | None:
        if now >= run_end:
            return f"the run budget ({self.run_budget_s:g} s) is spent"
        if now >= check_end:
            return f"the check budget ({self.this_check_s:g} s) is spent"
        return None

    def deadline(self, what: str, call_s: float) -> float:
        """The absolute deadline of one call (raises TargetError, the call not made, when none is left)."""
        now, (run_end, check_end) = self._now(), self._ends()
        reason = f"the target was marked hung: {self.hung}" if self.hung else self._spent(now, run_end, check_end)
        if reason:
            raise TargetError(f"{what}: not sent: {reason}")
        return min(now + call_s, run_end, check_end)

    def left(self, what: str, call_s: float) -> float:
        """Seconds one call may take (as `deadline`, relative)."""
        return max(0.0, self.deadline(what, call_s) - self._now())

    def cut_short(self, deadline: float, call_s: float) -> str:
        """What bounded a call that ran to `deadline`: its own deadline or a budget (for the error text)."""
        slack = 0.25  # the caller may have taken its start time a moment after the deadline was set
        if deadline >= self._run_end - slack:
            return f"the run budget of {self.run_budget_s:g} s"
        if deadline >= self._check_end - slack:
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
