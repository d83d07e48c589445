"""An EMP app, one process per operation, whose start-up creates a missing memory.jsonl as the public EMP
SDK's initialise does: it looks for the file first thing, loads its code, and then, if the file was
missing, creates it empty, truncating whatever another app appended in between. Its appends are otherwise
the reference's (locked). A check-then-create initialiser for tests/test_emp_start_gate.py.

    python tests/emp_startup_race_app.py [--check-late] OP INPUT.json OUTPUT.json

--check-late: the look comes after the code has loaded, right before the create (as in the SDK, two
awaits apart), so only apps whose start-ups overlap can lose an entry.
"""

from __future__ import annotations

import json
import os
import sys

LATE = sys.argv[1:2] == ["--check-late"]
ARGS = sys.argv[2:] if LATE else sys.argv[1:]
MISSING = False
if ARGS[:1] == ["append"] and len(ARGS) == 3 and not LATE:
    try:  # the check, before anything else is loaded
        with open(ARGS[1], "rb") as fh:
            MISSING = not os.path.exists(json.load(fh)["path"])
    except (OSError, ValueError, KeyError, TypeError):
        MISSING = False

from typing import Any  # noqa: E402 - the app's code loads after its look at the file, as an app's start-up does

from memconform.suites.emp.reference import ReferenceEmpApp, main  # noqa: E402


class StartupCreatesMissingFile(ReferenceEmpApp):
    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        if (not os.path.exists(path)) if LATE else MISSING:
            open(path, "w").close()  # "create the file": another app's first entry, appended meanwhile, is gone
        super().locked_append(path, lines)


if __name__ == "__main__":
    sys.exit(main(ARGS, app=StartupCreatesMissingFile))
