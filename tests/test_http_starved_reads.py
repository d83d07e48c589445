"""targets/http.py: a read that timed out while this process waited for a CPU is made again for as long as that wait
(an in-process server starved on a busy machine answers late through no fault of its own); a target that hangs, our
thread blocked and waiting for no CPU, is cut as before; what is owed back is bounded. The machine's load is
simulated: a stream that times out, and a starvation counter moved by the test."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpcore
import pytest
from memconform.targets import http


class TimesOut(httpcore.NetworkStream):
    """Times out `times` reads (each moving starvation on by `starved_each` s), then answers."""

    def __init__(self, times: int, starved_each: float, clock: list[float]) -> None:
        self.times, self.starved_each, self.clock = times, starved_each, clock
        self.steps: list[float] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.steps.append(float(timeout or 0))
        if len(self.steps) <= self.times:
            self.clock[0] += self.starved_each
            raise httpcore.ReadTimeout("timed out")
        return b"HTTP/1.1 200 OK\r\n"

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        raise AssertionError("not written")

    def close(self) -> None:
        pass


@pytest.fixture
def call() -> Iterator[list[float]]:
    """A call in progress with 10 s left and 200 s owed at most; the list holds the process's CPU waits so far."""
    starved = [0.0]
    http._CALL.deadline = time.monotonic() + 10
    http._CALL.starved = lambda: starved[0]
    http._CALL.owed_left = 200.0
    yield starved
    http._CALL.deadline = http._CALL.starved = None


def test_a_read_cut_while_we_waited_for_a_cpu_is_made_again_for_that_long(call: list[float]) -> None:
    before = http._CALL.deadline
    stream = TimesOut(times=2, starved_each=3.0, clock=call)
    assert http._DeadlineStream(stream).read(1024, 5.0) == b"HTTP/1.1 200 OK\r\n"
    assert stream.steps[0] == pytest.approx(5.0) and stream.steps[1:] == [3.0, 3.0]
    assert http._CALL.deadline == pytest.approx(before + 6) and http._CALL.owed_left == pytest.approx(194)


def test_a_target_that_hangs_is_cut_at_the_first_timeout(call: list[float]) -> None:
    stream = TimesOut(times=1, starved_each=0.0, clock=call)  # blocked in a read: no CPU waited for
    with pytest.raises(httpcore.ReadTimeout):
        http._DeadlineStream(stream).read(1024, 5.0)
    assert len(stream.steps) == 1


def test_what_is_owed_back_is_bounded_even_when_every_wait_was_for_a_cpu(call: list[float]) -> None:
    stream = TimesOut(times=10**6, starved_each=50.0, clock=call)  # an in-process server spinning on a loaded machine
    with pytest.raises(httpcore.ReadTimeout):
        http._DeadlineStream(stream).read(1024, 5.0)
    assert stream.steps[1:] == [50.0, 50.0, 50.0, 50.0] and http._CALL.owed_left == 0


def test_outside_a_call_nothing_is_owed() -> None:
    http._CALL.deadline = http._CALL.starved = None
    stream = TimesOut(times=1, starved_each=5.0, clock=[0.0])
    with pytest.raises(httpcore.ReadTimeout):
        http._DeadlineStream(stream).read(1024, 5.0)
