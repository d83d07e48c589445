"""The HTTP exchanges of a run, for whoever reproduces a failure: curl lines on each failed or errored
check (its last CURL_PER_CHECK requests), and exchanges.har beside the report (targets/exchanges.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import __version__
from ..core.results import Outcome, Result
from ..targets.exchanges import Exchange, curl_line, write_har

CURL_PER_CHECK = 5
HAR_NAME = "exchanges.har"


def attach(result: Result, entries: list[Exchange], redactor: Any) -> None:
    """Tag the check's exchanges with its id; a failed or errored check carries its last requests as curl lines."""
    for entry in entries:
        entry.check = result.check_id
    if result.outcome in (Outcome.FAILED, Outcome.ERRORED) and entries:
        shown = entries[-CURL_PER_CHECK:]
        result.curl = [redactor.text(curl_line(e)) for e in shown]
        if len(entries) > len(shown):
            result.curl.insert(0, f"# {len(entries) - len(shown)} earlier requests of this check: see {HAR_NAME}")


def write(report_dir: Path, targets: list[Any], redactor: Any) -> Path | None:
    """exchanges.har of every HTTP target of the run (nothing for other kinds of target)."""
    logs = [t.exchanges for t in targets if getattr(t, "exchanges", None) is not None]
    if not logs:
        return None
    entries = sorted((e for log in logs for e in log.entries), key=lambda e: e.started)
    dropped = sum(log.count - len(log.entries) for log in logs)
    path = report_dir / HAR_NAME
    write_har(path, entries, dropped, redactor, __version__)
    return path
