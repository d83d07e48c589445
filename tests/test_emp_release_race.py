"""emp.writer_release_keeps_taken_lock on a release that reads its lock to see it is still its own and then
removes it: a takeover landing between the read and the removal is a window no file system lets a release
close (there is no remove-if-unchanged), so it is never blamed; the attempt is repeated instead. Under load
the reference's release met that window and the check failed it (CI at b8a84e7)."""

from __future__ import annotations

import os
import threading
import time

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.emp import fswatch
from memconform.suites.emp.checks.lock import read_for_release_before
from memconform.suites.emp.reference import ReferenceEmpApp

CHECK = "emp.writer_release_keeps_taken_lock"


RELEASE_READ = threading.Event()  # the fake's release has read its lock: memconform's takeover may land


def _changed(path: str, token: str | None, wait_s: float) -> None:
    """Wait (at most wait_s) until the lock at path no longer holds token: memconform took it over."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            with open(path) as fh:
                if fh.read() != token:
                    return
        except FileNotFoundError:
            return
        time.sleep(0.005)


class ReadsThenRemovesAfterTakeover(ReferenceEmpApp):
    """Reads its lock at release (its own token), and removes it only after memconform has renamed its own over
    it: the takeover forced into the window between the check and the removal on every attempt."""

    def release(self, path: str) -> None:
        token = self._tokens_held().pop(path, None)
        lock = self.lock_path(path)
        with open(lock) as fh:
            mine = fh.read() == token
        RELEASE_READ.set()
        if mine:
            _changed(lock, token, 1.0)  # a bound on the wait; the verdict never rests on it
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass


def _outcome(target: str) -> tuple[str, list[str], str]:
    run = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=[CHECK])
    (result,) = run.results
    return result.outcome.value, [f.title for f in result.failures], result.reason or ""


def test_a_takeover_between_the_release_check_and_the_removal_is_never_blamed(monkeypatch: pytest.MonkeyPatch) -> None:
    rename = os.rename

    def takeover_after_the_release_read(src: str, dst: str) -> None:
        if dst.endswith(".lock"):  # memconform's takeover: held back until the release has read (bounded)
            RELEASE_READ.wait(5.0)
            RELEASE_READ.clear()
        rename(src, dst)

    monkeypatch.setattr(os, "rename", takeover_after_the_release_read)
    outcome, failures, reason = _outcome(f"python:{__name__}:ReadsThenRemovesAfterTakeover")
    assert failures == []
    assert outcome != "failed"
    assert "always released its lock before memconform could take it over" in reason


def test_only_a_read_after_the_write_and_before_the_takeover_is_the_release_check() -> None:
    lock, data = "memory.jsonl.lock", "memory.jsonl"
    created, written, peeked = (lock, fswatch.IN_CREATE), (data, fswatch.IN_MODIFY), (lock, fswatch.IN_CLOSE_NOWRITE)
    taken, removed = (lock, fswatch.IN_MOVED_TO), (lock, fswatch.IN_DELETE)
    assert read_for_release_before([created, written, peeked, taken, removed], lock, data)
    assert not read_for_release_before([created, peeked, written, taken, removed], lock, data)  # read before writing
    assert not read_for_release_before([created, written, taken, peeked, removed], lock, data)  # read ours: removed anyway
    assert not read_for_release_before([created, written, taken, removed], lock, data)  # never read


def test_a_release_that_never_reads_its_lock_still_fails() -> None:
    outcome, failures, _ = _outcome("python:memconform.suites.emp.mutants:ReleasesAnyLock")
    assert outcome == "failed"
    assert failures and failures[0].startswith("the app removed memory.jsonl.lock after another app had taken it over")


def test_the_reference_passes() -> None:
    assert _outcome("reference:emp")[0] == "passed"
