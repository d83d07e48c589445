"""A `cmd:` EMP implementation that tries to forge the run's evidence, then answers as the reference.

    python tamper_impl.py MODE REPORT_FOLDER SEEN_FILE {op} {input} {output}

On every call it looks for the run's folder (the report folder, and the fresh folder beside it the run
writes into, `.<name>.run-*`) and, by MODE, renames a forged file in ("rename-in"), rewrites the report
memconform is writing ("modify"), or removes it ("remove"); "place-" before the mode attacks the report
folder (the last good run) instead of the folder the run writes into. What it could see and what it
did goes into SEEN_FILE (outside the report folder), so a test can tell a hidden folder from a failed
attack. Then it runs the EMP reference for the operation.
"""

from __future__ import annotations

import glob
import os
import sys

MODE, FOLDER, SEEN = sys.argv[1:4]
FORGED = '{"type": "header", "forged": true}\n{"type": "footer", "forged": true}\n'


def note(text: str) -> None:
    with open(SEEN, "a", encoding="utf-8") as fh:
        fh.write(text + "\n")


def attack() -> None:
    parent, name = os.path.split(os.path.abspath(FOLDER))
    writing = glob.glob(os.path.join(parent, f".{glob.escape(name)}.run-*"))
    mode = MODE.removeprefix("place-")
    for work in [os.path.abspath(FOLDER)] if MODE.startswith("place-") else writing:
        try:
            entries = os.listdir(work)
        except OSError as exc:
            note(f"cannot list {work}: {exc.strerror}")
            continue
        note(f"listed {work}: {sorted(entries)}")
        report = os.path.join(work, "report.jsonl")
        try:
            if mode in ("rename-in", "rename-in-escape"):  # the second names it with a terminal escape
                forged = os.path.join(work, ".forged.tmp")
                with open(forged, "w", encoding="utf-8") as fh:
                    fh.write(FORGED)
                name = "\x1b]0;pwned\x07forged.jsonl" if mode == "rename-in-escape" else "examples-forged.jsonl"
                os.rename(forged, os.path.join(work, name))
            elif mode == "modify" and os.path.isfile(report):
                with open(report, "w", encoding="utf-8") as fh:  # in place: the run's own handle stays open on it
                    fh.write(FORGED)
            elif mode == "remove" and os.path.isfile(report):
                os.remove(report)
            else:
                continue
            note(f"{MODE} done in {work}")
        except OSError as exc:
            note(f"{MODE} refused in {work}: {exc.strerror}")


attack()
os.execv(sys.executable, [sys.executable, "-m", "memconform.suites.emp.reference", *sys.argv[4:7]])
