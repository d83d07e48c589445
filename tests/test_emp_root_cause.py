"""EMP root causes seen against the public SDK (issue 35 item 1): a reader that returns every line of an id,
not the newest, is named once by emp.reader_newest_ts_wins, and the query failures that fault alone explains
say so ("explained by emp.reader_newest_ts_wins"); a query fault of its own is not explained by it."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Failure
from memconform.render.groups import group_problems
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.lock import TORN
from memconform.suites.emp.checks.locking import glued_alone, mended
from memconform.suites.emp.checks.writing import dropped
from memconform.suites.emp.mutants.writers import GluesToTornLine
from memconform.suites.emp.reference import ReferenceEmpApp

CHECKS = ["emp.reader_newest_ts_wins", "emp.query_time", "emp.query_tags", "emp.query_every_parameter_pair"]


class EveryLineReader(ReferenceEmpApp):
    """Reads every readable line as an entry (no id resolved to its newest ts), then filters, as the SDK does."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [e for _, _, e in self.lines(path) if emp.readable(e) and not emp.is_tombstone(e)]


class EveryLineUnfiltered(EveryLineReader):
    """The control: besides, query ignores every filter (a fault no resolution would mend)."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return self.view(body["path"])


def run(name: str) -> Any:
    return execute_run(["emp"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=CHECKS)


def failures(outcome: Any, check: str) -> list[Failure]:
    return [f for r in outcome.results if r.check_id == check for f in r.failures]


@pytest.mark.slow
def test_query_failures_of_a_reader_not_resolving_ids_are_explained_by_the_newest_ts_check() -> None:
    outcome = run("EveryLineReader")
    assert failures(outcome, "emp.reader_newest_ts_wins")
    for check in ("emp.query_time", "emp.query_tags", "emp.query_every_parameter_pair"):
        found = failures(outcome, check)
        assert found and all(f.explained_by == "emp.reader_newest_ts_wins" for f in found), \
            (check, [(f.title, f.explained_by) for f in found])
    assert any("deviations established" in n["note"] for n in outcome.notes)


@pytest.mark.slow
def test_a_query_ignoring_its_filters_is_not_explained_by_the_missing_resolution() -> None:
    outcome = run("EveryLineUnfiltered")
    found = [f for f in failures(outcome, "emp.query_every_parameter_pair") if "is not what the query must return" in f.title]
    assert found and not any(f.explained_by for f in found), [(f.title, f.explained_by) for f in found]
    # a value the spec is silent on that reads as no filter (start null): its only fault is the resolution
    odd = [f for f in failures(outcome, "emp.query_every_parameter_pair") if "(query.start:null)" in f.title]
    assert odd and all(f.explained_by == "emp.reader_newest_ts_wins" for f in odd)
    wrong = [f for f in failures(outcome, "emp.query_time") if "does not match" in f.title and "superseded" not in f.title]
    assert wrong and not any(f.explained_by for f in wrong)


@pytest.mark.slow
def test_the_reference_establishes_nothing() -> None:
    outcome = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=CHECKS)
    assert [r.outcome.value for r in outcome.results] == ["passed"] * len(CHECKS)
    assert not any("deviations established" in n["note"] for n in outcome.notes)


@pytest.mark.slow
def test_updates_of_every_class_written_under_a_new_id_are_explained_by_the_same_id_check() -> None:
    checks = ["emp.writer_update_same_id", "emp.writer_updates_every_class"]
    outcome = execute_run(["emp"], "python:memconform.suites.emp.mutants:UpdateAsNewId", Profile.named("ci"),
                          report_dir=None, check_ids=checks)
    assert failures(outcome, "emp.writer_update_same_id")
    later = failures(outcome, "emp.writer_updates_every_class")
    new_id = [f for f in later if "did not append exactly one line of the id" in f.title]
    assert new_id and all(f.explained_by == "emp.writer_update_same_id" for f in new_id), [(f.title, f.explained_by) for f in later]
    # its updates are not validated either: a fault of its own, not explained by the new id
    assert all(not f.explained_by for f in later if "was written invalid" in f.title)
    alone = execute_run(["emp"], "python:memconform.suites.emp.mutants:UpdateAsNewId", Profile.named("ci"),
                        report_dir=None, check_ids=checks[1:])  # nothing established: each failure its own
    assert failures(alone, "emp.writer_updates_every_class") and not any(f.explained_by for f in failures(alone, "emp.writer_updates_every_class"))


# ---- a writer gluing its line onto a last line without a newline (writer_after_torn_line) ----------------

GLUE_CHECKS = ["emp.writer_after_torn_line", "emp.writer_after_killed_writer", "emp.file_every_line_form"]


class GluedUnderAnotherId(GluesToTornLine):
    """The control: glues too, and writes every entry under an id of its own while answering the one it was
    handed (a fault no newline mends)."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, id=str(uuid.uuid4())) for e in lines])


@pytest.mark.slow
def test_failures_of_an_append_glued_onto_a_last_line_without_newline_are_explained_by_the_torn_line_check() -> None:
    outcome = execute_run(["emp"], "python:memconform.suites.emp.mutants:GluesToTornLine", Profile.named("ci"),
                          report_dir=None, check_ids=GLUE_CHECKS)
    assert [r.outcome.value for r in outcome.results] == ["failed", "failed", "failed"]  # explained, still failed
    assert failures(outcome, "emp.writer_after_torn_line") and not any(f.explained_by for f in failures(outcome, "emp.writer_after_torn_line"))
    for check in GLUE_CHECKS[1:]:
        found = failures(outcome, check)
        assert found and all(f.explained_by == "emp.writer_after_torn_line" for f in found), [(f.title, f.explained_by) for f in found]
        assert all(f.detail.startswith("explained by emp.writer_after_torn_line: an append to a file whose last line") for f in found)
    groups = group_problems([r.to_json() for r in outcome.results])
    assert [g.check_ids for g in groups] == [GLUE_CHECKS]
    alone = execute_run(["emp"], "python:memconform.suites.emp.mutants:GluesToTornLine", Profile.named("ci"),
                        report_dir=None, check_ids=GLUE_CHECKS[1:])  # nothing established: each failure its own
    assert all(r.outcome.value == "failed" for r in alone.results)
    assert not any(f.explained_by for r in alone.results for f in r.failures)
    reference = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=GLUE_CHECKS)
    assert [r.outcome.value for r in reference.results] == ["passed"] * 3


@pytest.mark.slow
def test_a_glued_line_that_a_newline_would_not_mend_establishes_nothing() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:GluedUnderAnotherId", Profile.named("ci"), report_dir=None,
                          check_ids=GLUE_CHECKS)
    assert failures(outcome, "emp.writer_after_torn_line")
    assert not any(f.explained_by for r in outcome.results for f in r.failures)


def test_a_newline_started_before_the_writers_bytes_is_the_only_mending_taken() -> None:
    good, new = b'{"v":"1.0","id":"a","ts":1,"content":"x"}', b'{"v":"1.0","id":"b","ts":2,"content":"y"}\n'
    torn = good + b"\n" + TORN.encode()
    assert mended(torn, torn + new) == torn + b"\n" + new
    assert glued_alone(torn, torn + new, ("a", "b"))
    assert mended(torn, torn + b"\n" + new) is None  # a new line was started: nothing glued
    assert mended(good + b"\n", good + b"\n" + new) is None  # the last line had its newline
    assert mended(torn, b" " + torn[1:] + new) is None  # the bytes there were changed, not glued onto
    assert not glued_alone(torn, torn + new.replace(b'"b"', b'"c"'), ("a", "b"))  # mended, the wanted id still missing


# ---- a writer whose start-up removes other apps' locks (writer_concurrent_no_loss explained) --------------

class StartUpRemovesLocks(ReferenceEmpApp):
    """The public SDK's start-up, otherwise correct: every operation begins as a new process of it would, removing
    any memory.jsonl.lock it finds ("a stale lock from a previous crash"), however fresh and whoever's; a delete
    reads and rewrites the file under its own lock (as the SDK's does; errata E1 allows a rewrite), keeping every
    other line byte for byte."""

    def start_up(self, body: Any) -> None:
        if isinstance(body, dict) and isinstance(body.get("path"), str):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path(body["path"]))

    def append(self, body: Any) -> dict[str, Any]:
        self.start_up(body)
        return super().append(body)

    def delete(self, body: Any) -> dict[str, Any]:
        self.start_up(body)
        path = body["path"]
        self.acquire(path)
        try:
            with open(path, "rb") as fh:
                lines = fh.read().split(b"\n")
            kept = [raw for raw in lines if not holds_id(raw, body["id"])]
            with open(path, "wb") as fh:
                fh.write(b"\n".join(kept))
        finally:
            self.release(path)
        return {"ok": True}


def holds_id(raw: bytes, gone: str) -> bool:
    parsed = emp.parse_line(emp.decode(raw)) if raw.strip() else None
    return isinstance(parsed, dict) and parsed.get("id") == gone


class StartUpRemovesLocksStaleRead(StartUpRemovesLocks):
    """The control: besides, its delete reads the file before it takes its lock (a stale read, its own fault,
    which loses another app's line whether or not a lock was removed). Its disk is slow: it rewrites once the
    file has changed since its read (at most WAIT_S), so the loss shows on every run."""

    WAIT_S = 2.0  # a bound on the wait, never a window the verdict depends on

    def delete(self, body: Any) -> dict[str, Any]:
        self.start_up(body)
        path = body["path"]
        with open(path, "rb") as fh:
            read = fh.read()
        lines = read.split(b"\n")
        deadline = time.monotonic() + self.WAIT_S
        while time.monotonic() < deadline and os.path.getsize(path) == len(read):
            time.sleep(0.005)
        self.acquire(path)
        try:
            kept = [raw for raw in lines if not holds_id(raw, body["id"])]
            with open(path, "wb") as fh:
                fh.write(b"\n".join(kept))
        finally:
            self.release(path)
        return {"ok": True}


LOCK_CHECKS = ["emp.writer_waits_for_lock", "emp.writer_concurrent_no_loss"]


@pytest.mark.slow
def test_losses_under_contention_of_a_writer_whose_start_up_removes_locks_are_explained_by_the_wait_check() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:StartUpRemovesLocks", Profile.named("ci"), report_dir=None,
                          check_ids=LOCK_CHECKS)
    assert [r.outcome.value for r in outcome.results] == ["failed", "failed"]  # explained, still failed
    later = failures(outcome, "emp.writer_concurrent_no_loss")
    assert later and all(f.explained_by == "emp.writer_waits_for_lock" for f in later), [(f.title, f.explained_by) for f in later]
    assert all(f.detail.startswith("explained by emp.writer_waits_for_lock: an app removes or replaces a fresh "
                                   "memory.jsonl.lock another app holds") for f in later)
    # the empty lock memconform holds is removed on every run: the failure does not wait for a lucky interleaving
    assert any("removed or replaced a fresh memory.jsonl.lock it did not own" in f.title for f in later)
    groups = group_problems([r.to_json() for r in outcome.results])
    assert [g.check_ids for g in groups] == [LOCK_CHECKS]
    alone = execute_run(["emp"], f"python:{__name__}:StartUpRemovesLocks", Profile.named("ci"), report_dir=None,
                        check_ids=LOCK_CHECKS[1:])  # nothing established: each failure its own
    assert [r.outcome.value for r in alone.results] == ["failed"]
    assert not any(f.explained_by for f in failures(alone, "emp.writer_concurrent_no_loss"))
    reference = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=LOCK_CHECKS)
    assert [r.outcome.value for r in reference.results] == ["passed", "passed"]


@pytest.mark.slow
def test_a_stale_read_beside_the_lock_removal_is_the_writers_own_fault() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:StartUpRemovesLocksStaleRead", Profile.named("ci"), report_dir=None,
                          check_ids=LOCK_CHECKS)
    later = failures(outcome, "emp.writer_concurrent_no_loss")
    stale = [f for f in later if f.title.startswith("a delete lost a line another app wrote under its lock")]
    assert stale and not any(f.explained_by for f in stale), [(f.title, f.explained_by) for f in later]
    # with a fault of its own where the interleaving is fixed, the free-for-all's failures are not put on the removal
    free = [f for f in later if "concurrent apps" in f.title or "while no memory.jsonl.lock existed" in f.title]
    assert not any(f.explained_by for f in free)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["RewriteDropsForeign", "TakesContentlessLocks"])
def test_the_concurrency_check_catches_a_stale_read_and_a_taken_empty_lock_on_every_run(mutant: str) -> None:
    """Not a lucky interleaving: memconform is the other app and the kernel's events fix the moment (three runs)."""
    for _ in range(3):
        outcome = execute_run(["emp"], f"python:memconform.suites.emp.mutants:{mutant}", Profile.named("ci"),
                              report_dir=None, check_ids=["emp.writer_concurrent_no_loss"])
        assert [r.outcome.value for r in outcome.results] == ["failed"]


@pytest.mark.slow
def test_an_equal_ts_tie_returned_as_both_lines_is_explained_by_the_newest_ts_check() -> None:
    """A reader resolving no id returns both lines of a tie: the one fault reader_newest_ts_wins named."""
    checks = ["emp.reader_newest_ts_wins", "emp.reader_equal_ts_tie"]
    outcome = execute_run(["emp"], f"python:{__name__}:EveryLineReader", Profile.named("ci"), report_dir=None, check_ids=checks)
    assert [r.outcome.value for r in outcome.results] == ["failed", "failed"]  # explained, still failed
    tie = failures(outcome, "emp.reader_equal_ts_tie")
    assert tie and all(f.explained_by == "emp.reader_newest_ts_wins" for f in tie), [(f.title, f.explained_by) for f in tie]
    alone = execute_run(["emp"], f"python:{__name__}:EveryLineReader", Profile.named("ci"), report_dir=None, check_ids=checks[1:])
    assert failures(alone, "emp.reader_equal_ts_tie") and not any(f.explained_by for f in failures(alone, "emp.reader_equal_ts_tie"))
    both = execute_run(["emp"], "python:memconform.suites.emp.mutants:TieKeepsBoth", Profile.named("ci"), report_dir=None,
                       check_ids=checks)  # resolves ids, keeps both lines of a tie only: its own fault
    assert [r.outcome.value for r in both.results] == ["passed", "failed"]
    assert not any(f.explained_by for f in failures(both, "emp.reader_equal_ts_tie"))


# ---- a delete rewriting the file without other apps' lines (writer_delete_keeps_foreign explains) ---------

DROP_CHECKS = ["emp.writer_delete_keeps_foreign", "emp.writer_model_sequences", "emp.writer_deletes_every_class"]


class DeleteDropsOthersLines(ReferenceEmpApp):
    """Otherwise correct: a delete rewrites memory.jsonl under its lock keeping, byte for byte and in order, only
    the lines of entries it wrote itself in this run (its appends and updates), the deleted one left out; every
    other app's line is gone (the SDK's rewrite keeps only what it accepts)."""

    def __init__(self) -> None:
        super().__init__()
        self.own: set[str] = set()
        self.own_guard = threading.Lock()

    def owns(self, entry_id: Any) -> bool:
        with self.own_guard:
            return entry_id in self.own

    def adopt(self, entry_id: str) -> None:
        with self.own_guard:
            self.own.add(entry_id)

    def append(self, body: Any) -> dict[str, Any]:
        reply = super().append(body)
        self.adopt(reply["id"])
        return reply

    def update(self, body: Any) -> dict[str, Any]:
        reply = super().update(body)
        self.adopt(reply["id"])
        return reply

    def kept(self, raw: bytes, gone: str) -> bool:
        parsed = emp.parse_line(emp.decode(raw)) if raw.strip() else None
        return isinstance(parsed, dict) and self.owns(parsed.get("id")) and parsed.get("id") != gone

    def delete(self, body: Any) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            with open(path, "rb") as fh:
                lines = fh.read().split(b"\n")
            kept = [raw for raw in lines if self.kept(raw, body["id"])]
            with open(path, "wb") as fh:
                fh.write(b"".join(raw + b"\n" for raw in kept))
        finally:
            self.release(path)
        return {"ok": True}


class DropsAndKeepsDeleted(DeleteDropsOthersLines):
    """The control: besides, a delete keeps the deleted entry's lines (and takes them as its own), so the entry stays
    in every view: a fault of its own, which no dropped line of another app explains."""

    def kept(self, raw: bytes, gone: str) -> bool:
        parsed = emp.parse_line(emp.decode(raw)) if raw.strip() else None
        return super().kept(raw, gone) or (isinstance(parsed, dict) and parsed.get("id") == gone)

    def delete(self, body: Any) -> dict[str, Any]:
        self.adopt(body["id"])
        return super().delete(body)


class DropsUnreadableReserialisesRest(ReferenceEmpApp):
    """The control as the SDK does it: a delete rewrites the file from the lines it reads (other apps' included),
    re-serialised compactly, the deleted id left out; a line it cannot read (another major, not JSON) is dropped.
    The re-serialised lines are changed, not dropped: that is not the drop's doing."""

    def delete(self, body: Any) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            read = [e for _, _, e in emp.iter_lines(path)]
            kept = [e for e in read if emp.readable(e) and e["id"] != body["id"]]
            with open(path, "wb") as fh:
                fh.write(b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in kept))
        finally:
            self.release(path)
        return {"ok": True}


def run_drop_checks(name: str, checks: list[str] = DROP_CHECKS) -> Any:
    return execute_run(["emp"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=checks)


@pytest.mark.slow
def test_other_apps_lines_a_delete_drops_are_explained_by_the_keeps_foreign_check() -> None:
    outcome = run_drop_checks("DeleteDropsOthersLines")
    assert [r.outcome.value for r in outcome.results] == ["failed"] * 3  # explained, still failed
    assert failures(outcome, DROP_CHECKS[0]) and not any(f.explained_by for f in failures(outcome, DROP_CHECKS[0]))
    for check in DROP_CHECKS[1:]:
        found = failures(outcome, check)
        assert found and all(f.explained_by == DROP_CHECKS[0] for f in found), [(f.title, f.explained_by) for f in found]
        assert all(f.detail.startswith(f"explained by {DROP_CHECKS[0]}: a delete rewrites memory.jsonl without other apps' "
                                       "lines") for f in found)
    every_class = failures(outcome, "emp.writer_deletes_every_class")
    assert any(f.title.startswith("a line no reader uses") for f in every_class)
    assert any(f.title == "an entry nobody deleted left the view" for f in every_class)
    groups = group_problems([r.to_json() for r in outcome.results])
    assert [g.check_ids for g in groups] == [DROP_CHECKS]
    alone = run_drop_checks("DeleteDropsOthersLines", DROP_CHECKS[1:])  # nothing established: each failure its own
    assert [r.outcome.value for r in alone.results] == ["failed", "failed"]
    assert not any(f.explained_by for r in alone.results for f in r.failures)
    reference = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=DROP_CHECKS)
    assert [r.outcome.value for r in reference.results] == ["passed"] * 3


@pytest.mark.slow
def test_a_deleted_entry_left_in_view_beside_the_drop_is_the_writers_own_fault() -> None:
    outcome = run_drop_checks("DropsAndKeepsDeleted", [DROP_CHECKS[0], DROP_CHECKS[2]])
    shows = [f for f in failures(outcome, DROP_CHECKS[0]) if "still shows the deleted entry" in f.title]
    assert shows and not any(f.explained_by for f in shows)
    every_class = failures(outcome, "emp.writer_deletes_every_class")
    left = [f for f in every_class if "left the entry in the view" in f.title]
    assert left and not any(f.explained_by for f in left), [(f.title, f.explained_by) for f in every_class]
    # the other apps' lines its deletes dropped are still the drop's doing
    unread = [f for f in every_class if f.title.startswith("a line no reader uses")]
    assert unread and all(f.explained_by == DROP_CHECKS[0] for f in unread)


@pytest.mark.slow
def test_other_apps_lines_a_delete_changes_are_not_explained_by_the_drop() -> None:
    outcome = run_drop_checks("DropsUnreadableReserialisesRest")
    assert [r.outcome.value for r in outcome.results] == ["failed"] * 3
    # the other major's line dropped: established
    assert any("a delete rewrites memory.jsonl without other apps' lines (emp.writer_delete_keeps_foreign)" in n["note"]
               for n in outcome.notes)
    sequences = failures(outcome, "emp.writer_model_sequences")  # other apps' lines re-serialised: changed
    assert sequences and not any(f.explained_by for f in sequences), [(f.title, f.explained_by) for f in sequences]
    unread = [f for f in failures(outcome, "emp.writer_deletes_every_class") if f.title.startswith("a line no reader uses")]
    assert unread and all(f.explained_by == DROP_CHECKS[0] for f in unread)


def test_a_line_is_dropped_only_when_no_line_keeps_its_id_or_content() -> None:
    line = {"v": "1.0", "id": str(uuid.uuid4()), "ts": 1, "src": "a.b", "content": "memconform-r-caf\u00e9-0123abcd"}
    raw = json.dumps(line, ensure_ascii=False).encode()
    other = json.dumps(dict(line, id=str(uuid.uuid4()), content="memconform-r-other-4567cdef")).encode()
    assert dropped(raw, [other, b""])
    assert not dropped(raw, [json.dumps(line, separators=(",", ":")).encode()])  # re-serialised (escaped): changed
    assert not dropped(raw, [json.dumps(dict(line, content="x")).encode()])  # its id kept: changed
    assert dropped(raw, [json.dumps(dict(line, content="x")).encode()], fields=("content",))  # an update of the id
    assert not dropped(raw, [raw.replace(b"{", b"{ ", 1)[:-1]])  # torn, not JSON, its id still there
    assert not dropped(json.dumps({"id": "a", "content": "b"}).encode(), [])  # nothing unique to trace: never "dropped"
    assert dropped(b"{corrupt but another app's, unique", [other]) and not dropped(b"{corrupt but another app's, unique",
                                                                                  [b"{corrupt but another app's, unique\r"])


# ---- writes under another app's lock after removing it (writer_lock_every_content explained) ---------------

CONTENT_CHECKS = ["emp.writer_waits_for_lock", "emp.writer_lock_every_content"]
WROTE = "the app wrote while another app held memory.jsonl.lock"


class AppendsIgnoringLocks(StartUpRemovesLocks):
    """The control: an append writes without looking at the lock (another app's lock stays as it was), while an
    update or a delete begins by removing any lock it finds, as StartUpRemovesLocks does: the removal is
    established, but the appends' writes under a held lock follow no removal."""

    def append(self, body: Any) -> dict[str, Any]:
        entry = dict(body["entry"])
        entry.setdefault("id", str(uuid.uuid4()))
        self.write_lines(body["path"], [entry])
        return {"ok": True, "id": entry["id"]}

    def update(self, body: Any) -> dict[str, Any]:
        self.start_up(body)
        return ReferenceEmpApp.update(self, body)


@pytest.mark.slow
def test_writes_under_a_held_lock_after_removing_it_are_explained_by_the_wait_check() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:StartUpRemovesLocks", Profile.named("ci"), report_dir=None,
                          check_ids=CONTENT_CHECKS)
    assert [r.outcome.value for r in outcome.results] == ["failed", "failed"]  # explained, still failed
    later = failures(outcome, CONTENT_CHECKS[1])
    wrote = [f for f in later if WROTE in f.title]
    assert wrote and all(f.explained_by == CONTENT_CHECKS[0] for f in wrote), [(f.title, f.explained_by) for f in later]
    # the classes of fresh lock, in front of a file and of a missing one, that wrote within the hold: a write the
    # busy machine delays past memconform's hold is not under a held lock at all (no line), so which rounds show
    # one is the scheduler's; each that does is explained
    titles = {f.title for f in wrote}
    every = {f"{key}{where}: {WROTE}" for key in ("file.lock:fresh_token", "file.lock:fresh_empty", "file.lock:fresh_pid")
             for where in ("", ", no memory.jsonl yet")}
    assert titles and titles <= every, titles
    # so is an append acknowledged while the lock was "held" (when it returned before the hold ended)
    assert all(f.explained_by == CONTENT_CHECKS[0] for f in later), [(f.title, f.explained_by) for f in later]
    alone = execute_run(["emp"], f"python:{__name__}:StartUpRemovesLocks", Profile.named("ci"), report_dir=None,
                        check_ids=CONTENT_CHECKS[1:])  # nothing established: each failure its own
    assert [r.outcome.value for r in alone.results] == ["failed"]
    assert not any(f.explained_by for f in failures(alone, CONTENT_CHECKS[1]))
    reference = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=CONTENT_CHECKS)
    assert [r.outcome.value for r in reference.results] == ["passed", "passed"]


@pytest.mark.slow
def test_a_write_under_a_held_lock_with_no_removal_before_it_is_the_writers_own_fault() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:AppendsIgnoringLocks", Profile.named("ci"), report_dir=None,
                          check_ids=CONTENT_CHECKS)
    assert any("removed or replaced" in f.title for f in failures(outcome, CONTENT_CHECKS[0]))  # established
    later = failures(outcome, CONTENT_CHECKS[1])
    wrote = [f for f in later if WROTE in f.title]
    assert wrote and not any(f.explained_by for f in wrote), [(f.title, f.explained_by) for f in later]
    assert not any(f.explained_by for f in later if "acknowledged while another app held" in f.title)


# ---- a lock the target removes between memconform's look and its release --------------------------------------

def test_a_lock_removed_after_the_look_is_a_removal_while_held_not_a_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The EMP SDK removed a held lock between `held_as_left` and memconform's own release; the check errored
    (FileNotFoundError). The lock is removed here at that very moment, as that target did: the check fails for
    the removal, and errors nowhere."""
    from memconform.suites.emp.checks import locking

    looked = locking.held_as_left

    def removed_right_after_the_look(lock: str, token: str, held_file: tuple[int, int]) -> bool:
        ours = looked(lock, token, held_file)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # the target's removal, after the look and before memconform lets go
        return ours

    monkeypatch.setattr(locking, "held_as_left", removed_right_after_the_look)
    outcome = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None,
                          check_ids=["emp.writer_waits_for_lock"])
    [result] = outcome.results
    assert result.outcome.value == "failed", (result.outcome, result.reason)
    assert any(f.title == "the app removed or replaced memory.jsonl.lock while another app held it" for f in result.failures)
    assert locking.let_go(os.devnull + ".no-such-lock") is False  # gone already: False, no error
