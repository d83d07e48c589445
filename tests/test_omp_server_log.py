"""OMP §7 "Memory content MUST NOT be logged in plain text", checked on the log file the user names
(option omp.server_log) or the one the embedded reference states: the reference's audit lines pass, a
server logging content fails, a log that does not grow is inconclusive, and the log is read as any
target output is (a regular file, only what it gained, from the start again when it was cut)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome, TargetError
from memconform.run.session import execute_run
from memconform.suites.omp.reference.api import OmpApi, Principal
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target
from memconform.suites.omp.server_log import ServerLog

CHECK = ["content_not_logged"]


def run(target: str, **options: str) -> object:
    outcome = execute_run(["omp"], target, Profile.named("ci", options=options), report_dir=None, check_ids=CHECK)
    (result,) = outcome.results
    return result


def test_the_reference_logs_writes_without_their_content() -> None:
    result = run("reference:omp")
    assert result.outcome is Outcome.PASSED, (result.reason, [f.title for f in result.failures])


def test_a_server_logging_content_fails_for_each_write() -> None:
    result = run("python:memconform.suites.omp.mutants:content_logged")
    assert result.outcome is Outcome.FAILED
    assert [f.title for f in result.failures] == [
        f"the content of {w} is in the server log in plain text"
        for w in ("a created memory", "an updated, then deleted, memory", "an imported memory")]
    assert all("private note from" in str(f.received) for f in result.failures)  # the log line, as evidence


class LogsWhatItDeletes(OmpApi):
    """Audit lines without content, but a delete's line names the content it removed."""

    def visible(self, who: Principal, memory_id: str) -> dict[str, Any]:
        self.last_seen = super().visible(who, memory_id)
        return self.last_seen

    def audit_line(self, at: str, who: Principal, op: str, memory_id: str | None) -> str:
        line = super().audit_line(at, who, op, memory_id)
        return f"{line} was={self.last_seen.get('content')!r}" if op == "delete" else line


def logs_what_it_deletes() -> ServedTarget:
    return serve_target(ServerSpec(api_class=LogsWhatItDeletes), label="fake:omp:logs-what-it-deletes")


def test_a_server_logging_only_what_it_deletes_fails() -> None:
    result = run(f"python:{__name__}:logs_what_it_deletes")
    assert result.outcome is Outcome.FAILED
    assert [f.title for f in result.failures] == ["the content of an updated, then deleted, memory is in the server log in plain text"]
    assert "op=delete" in str(result.failures[0].received)


def test_a_named_log_that_does_not_grow_is_inconclusive(tmp_path: Path) -> None:
    quiet = tmp_path / "server.log"
    quiet.write_text("started\n")
    result = run("reference:omp", **{"omp.server_log": str(quiet)})  # the option wins over the stated log
    assert result.outcome is Outcome.SKIPPED and "did not grow" in result.reason


def test_without_a_log_the_check_is_skipped_saying_how_to_give_one() -> None:
    """An http:// server states no log of its own: without the option there is nothing to read."""
    served = serve_target(ServerSpec())
    try:
        outcome = execute_run(["omp"], served.base_url, Profile.named("ci"), report_dir=None,
                              api_key=served.api.keys.global_key, check_ids=CHECK)
    finally:
        served.close()
    (result,) = outcome.results
    assert result.outcome is Outcome.SKIPPED and "--option omp.server_log=PATH" in result.reason


def test_the_log_is_read_from_where_it_was_and_from_the_start_when_cut(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(b"old line\n")
    log = ServerLog(str(path))
    before = log.size()
    with open(path, "ab") as out:
        out.write(b"new line\n")
    growth = log.since(before)
    assert (growth.data, growth.grew, growth.truncated) == (b"new line\n", 9, False)
    path.write_bytes(b"x\n")  # rotated: shorter than before
    growth = log.since(before)
    assert (growth.data, growth.truncated) == (b"x\n", True)


def test_a_fifo_or_symlink_named_as_the_log_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    with pytest.raises(TargetError, match="FIFO"):
        ServerLog(str(fifo)).size()
    link = tmp_path / "link.log"
    link.symlink_to("/etc/hostname")
    with pytest.raises(TargetError, match="symbolic link"):
        ServerLog(str(link)).size()
