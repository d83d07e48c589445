"""An in-process MemoryAI implementation that forges a file into the folder the run writes into, on its
first export: a target that is not a command (a library, or an HTTP server on the same machine) can
reach the folder too, and the run must still see it."""

from __future__ import annotations

import glob
import os
from typing import Any

from memconform.suites.memoryai.reference.brain import ReferenceBrain

FOLDER = os.environ.get("TAMPER_FOLDER", "")


class ForgesIntoTheRunsFolder(ReferenceBrain):
    forged = False

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        parent, name = os.path.split(os.path.abspath(FOLDER))
        for work in glob.glob(os.path.join(parent, f".{glob.escape(name)}.run-*")):
            os.makedirs(os.path.join(work, "badges"), exist_ok=True)
            with open(os.path.join(work, "badges", "memoryai-level-1.svg"), "w", encoding="utf-8") as fh:
                fh.write("<svg>conformant</svg>")
            # and a symlink where the run writes a rendering: the run must not write through it
            os.symlink(os.path.join(os.path.dirname(FOLDER), "outside.txt"), os.path.join(work, "summary.md"))
            ForgesIntoTheRunsFolder.forged = True
        return super().export(body, **params)


class ForgesOnce(ForgesIntoTheRunsFolder):
    """The same forgery, on the first export of the process only: a whole run (certify's) goes on to its end
    against the reference, as it would against an implementation that tampers once and otherwise works."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if ForgesIntoTheRunsFolder.forged:
            return ReferenceBrain.export(self, body, **params)
        return super().export(body, **params)
