"""A `python:` target that stops its own process (SIGSTOP) once the run has written a result: the test
kills the stopped run with SIGKILL, a run killed mid-run without any timing deciding where.

Importable as `stop_mid_run` with tests/ on the path. It is the amps reference otherwise.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from memconform.suites.amps.reference import ReferenceAmpsStore


def _a_result_is_written() -> bool:
    """The run's fresh folder (beside the report folder `rep` in the working folder) holds a result line."""
    for stream in Path.cwd().glob(".rep.run-*/report.jsonl"):
        if any('"type": "result"' in line or '"type":"result"' in line for line in stream.read_text("utf-8").splitlines()):
            return True
    return False


class StopsMidRun(ReferenceAmpsStore):
    def _maybe_stop(self) -> None:
        if _a_result_is_written():
            os.kill(os.getpid(), signal.SIGSTOP)

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self._maybe_stop()
        return super().export(body, **params)

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        self._maybe_stop()
        return super().import_export(doc, **params)
