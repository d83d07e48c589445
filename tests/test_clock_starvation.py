"""core/clock.py: the run and check budgets do not count the time this process waited for a CPU, so a busy
machine cannot turn a verdict into "errored"; a target that hangs (our threads blocked, not waiting for a CPU)
is still cut at the budget. The machine's load is simulated: a fake clock and fake per-thread waits."""

from __future__ import annotations

import os
import threading

import pytest
from memconform.core.clock import Clock, Starvation, thread_cpu_waits_ns
from memconform.core.results import TargetError


class Fake:
    """Wall time and the process's CPU waits, both moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0
        self.starved = 0.0

    def wall(self) -> float:
        return self.now

    def waits(self) -> float:
        return self.starved

    def busy(self, wall_s: float, waited_s: float) -> None:
        """`wall_s` pass, `waited_s` of them with the process waiting for a CPU (a loaded machine)."""
        self.now += wall_s
        self.starved += waited_s


def make(run_s: float = 240, check_s: float | None = 60) -> tuple[Clock, Fake]:
    fake = Fake()
    return Clock(fake.now + run_s, run_s, check_s, now=fake.wall, starved=fake.waits), fake


def test_a_check_slowed_by_waiting_for_a_cpu_keeps_its_budget() -> None:
    clock, fake = make()
    clock.start_check()
    fake.busy(wall_s=300, waited_s=285)  # 15 s of work at 20 times its quiet wall time: past 60 s of wall
    assert clock.spent() is None
    assert clock.deadline("GET /v1/memories", 10) == fake.now + 10
    assert clock.deadline("GET /v1/memories", 60) == fake.now + 45  # what is left of the check: 60 - 15
    fake.busy(wall_s=45, waited_s=0)
    assert clock.spent() == "the check budget (60 s) is spent"


def test_a_hanging_target_is_cut_at_the_budget_whatever_the_load_before() -> None:
    clock, fake = make()
    clock.start_check()
    fake.busy(wall_s=100, waited_s=90)  # a loaded start: 10 s of the budget used
    deadline = clock.deadline("POST /v1/memories", 60)
    assert deadline == fake.now + 50
    fake.busy(wall_s=50, waited_s=0)  # then the target hangs: our thread blocked in a read, waiting for no CPU
    assert clock.spent() == "the check budget (60 s) is spent"
    assert "check budget of 60 s" in clock.cut_short(deadline, 60)
    with pytest.raises(TargetError, match="not sent: the check budget"):
        clock.deadline("GET /v1/memories", 60)


def test_the_run_budget_moves_on_by_the_waits_since_the_run_started_for_every_target_of_the_run() -> None:
    clock, fake = make(run_s=240, check_s=None)
    fake.busy(wall_s=1000, waited_s=800)
    other = clock.sibling()  # another suite's target, made later in the same run: the same run budget
    for c in (clock, other):
        assert c.spent() is None and c.deadline("op", 60) == fake.now + 40
    fake.busy(wall_s=40, waited_s=0)
    for c in (clock, other):
        assert c.spent() == "the run budget (240 s) is spent"


def test_a_call_deadline_stays_wall_time_and_is_named_as_such() -> None:
    clock, fake = make()
    clock.start_check()
    fake.busy(wall_s=100, waited_s=99)
    deadline = clock.deadline("op", 2)
    assert deadline == fake.now + 2 and clock.cut_short(deadline, 2) == "the call deadline of 2 s"


def test_starvation_sums_each_threads_growth_never_more_than_the_wall_time_between_samples() -> None:
    samples = iter([{1: 0}, {1: 2 * 10**9}, {1: 2 * 10**9, 2: 10**9, 3: 10**9},
                    {2: 3 * 10**9}, {2: 10**8}])
    walls = iter([0.0, 5.0, 5.5, 15.0, 16.0])
    starved = Starvation(read=lambda: next(samples), now=lambda: next(walls))
    assert starved() == pytest.approx(2.0)  # thread 1 waited 2 s of those 5
    assert starved() == pytest.approx(2.5)  # two new threads waited 1 s each, side by side, in 0.5 s: 0.5
    assert starved() == pytest.approx(4.5)  # threads 1 and 3 ended; thread 2 waited 2 s more
    assert starved() == pytest.approx(4.6)  # tid 2 reused by a new thread: its whole 0.1 s


def test_where_the_kernel_does_not_say_nothing_is_discounted() -> None:
    walls = iter([0.0, 100.0])
    starved = Starvation(read=dict, now=lambda: next(walls))
    assert starved() == 0.0


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="per-thread CPU waits are read from Linux /proc")
def test_every_live_thread_of_this_process_is_read_and_a_run_clock_uses_them() -> None:
    waits = thread_cpu_waits_ns()
    assert threading.get_native_id() in waits and all(ns >= 0 for ns in waits.values())
    assert isinstance(Clock.starting_now(240, 60)._starved, Starvation)


def test_samples_closer_than_the_gap_read_nothing_and_lose_nothing() -> None:
    reads = []
    samples = iter([{1: 0}, {1: 3 * 10**8}])
    walls = iter([0.0, 0.01, 0.5])

    def read() -> dict[int, int]:
        reads.append(1)
        return next(samples)

    starved = Starvation(read=read, now=lambda: next(walls))
    assert starved() == 0.0 and len(reads) == 1  # 10 ms after the first: the total so far, no read
    assert starved() == pytest.approx(0.3) and len(reads) == 2  # the wait of those 10 ms counted here


def test_model_based_sequences_keep_starting_while_the_budget_left_is_only_waited_away() -> None:
    from types import SimpleNamespace

    from memconform.core.sequence import budget_low

    clock, fake = make()
    clock.start_check()
    ctx = SimpleNamespace(target=SimpleNamespace(clock=clock))
    fake.busy(wall_s=200, waited_s=190)  # 10 s of the 60 used: a quiet machine would start more sequences
    assert clock.budget_left() == (50, "check") and budget_low(ctx) is None
    fake.busy(wall_s=40, waited_s=0)
    assert budget_low(ctx) == "10 s of the check's budget left"
    clock.end_check()
    assert clock.budget_left() == (240 - 50, "run") and clock.run_end() == fake.now + 190


def test_waits_move_a_budget_on_by_at_most_twenty_times_itself_so_a_run_stays_bounded_at_any_load() -> None:
    clock, fake = make(run_s=240, check_s=60)
    clock.start_check()
    fake.busy(wall_s=1259, waited_s=1259)  # a machine so loaded the process only ever waited
    assert clock.spent() is None
    fake.busy(wall_s=2, waited_s=2)  # past 60 s + 20 x 60 s: cut however long it waited
    assert clock.spent() == "the check budget (60 s) is spent"
    clock.end_check()
    fake.busy(wall_s=4000, waited_s=4000)  # the run: 240 s + 20 x 240 s at the most
    spent = clock.spent()
    assert spent is not None and "run budget" in spent
