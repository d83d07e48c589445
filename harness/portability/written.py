"""A translation written to a file and judged from that file (the CLI's `translate`), so the output is never
held whole beside its judgement.

The output goes, piece by piece, to a temporary file in the destination's folder as soon as it is made: a
writer that streams its records (streamed.py; which do: docs/portability.md) makes each native record as the
text reaches it and lets it go, so no list of every native record is held, and the rest of the output is let
go once written. The file is then measured against its format's size limit and judged by the checks
`memconform validate` runs on a file (harness/run/validate.py: in windows for a format with a window plan, by
lines for a format read as a stream, whole otherwise). Only a judged file is handed back, to be renamed into
place; any refusal or failure removes it. Bytes, ledger, findings and refusals are those of
translate.write_read (tests/test_portability_written.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memconform.core.profile import Profile
from memconform.core.results import HarnessError

from .canonical import Document, consuming
from .formats import portable
from .placement import Refused
from .streamed import sections, streaming
from .translate import Translation, Writer, chunks, limit_refusal
from .validation import classify

SLICE = 1 << 20  # characters encoded and written at a time


def write_judged(tr: Translation, folder: Path, validate: bool = True, writers: dict[str, Writer] | None = None,
                 window: int | None = None) -> tuple[Translation, Path | None]:
    """(the translation, its judged output file in `folder`) for the second half of a translation read by
    `read_checked`; the file is None when the translation is refused (the ledger says why, nothing is left in
    `folder`). The canonical records are let go as they are written (canonical.drain), the output once it is in
    the file. `window`: the window size of the file's judgement (tests shrink it; None: validate's)."""
    if tr.refused:
        return tr, None
    source, target, canonical, ledger = tr.source, tr.target, tr.canonical, tr.ledger
    declared = portable(target)
    writer = (writers or {}).get(target) or declared.write
    try:
        fd, name = tempfile.mkstemp(prefix=".memconform-translate-", suffix=".part", dir=folder)
    except OSError as exc:
        raise HarnessError(f"cannot write into {str(folder)!r}: {exc.strerror or exc}") from None
    part, handed = Path(name), False
    handle = os.fdopen(fd, "w", encoding="utf-8", newline="")
    blocking: list[str] = []
    try:
        # both until the text is written: a streamed section's records are made (and let go) as it is written
        with consuming(), streaming():
            try:
                output = writer(canonical, ledger)
                tr.canonical = canonical = Document(source)  # the writer holds the records it has still to write
                streamed = list(sections(output))
                if validate and streamed and declared.record_problems is not None:
                    for container, key, section in streamed:  # asked of each record as it is made
                        container[key] = section.tapped(
                            lambda index, item, name=section.section: blocking.extend(
                                declared.record_problems(name, index, item)))  # type: ignore[misc]
                elif validate and declared.output_problems is not None:
                    if streamed:
                        raise HarnessError(f"the {target} writer streams its records but its format declares no "
                                           "record_problems for its output_problems")
                    blocking += declared.output_problems(output)
                with handle:
                    for piece in chunks(target, output):
                        for at in range(0, len(piece), SLICE):  # a text format's output may be one string
                            handle.write(piece[at:at + SLICE])
            except Refused as exc:
                ledger.refused = str(exc)
                return Translation(source, target, Document(source), None, ledger), None
        del output  # the file holds it now
        size = part.stat().st_size
        over = limit_refusal(target, size)
        if over:
            ledger.refused = over
            return Translation(source, target, canonical, None, ledger), None
        if validate:
            found, warnings = judge_file(target, part, size, window)
            ledger.warnings += warnings
            blocking += found
            if blocking:
                ledger.refused = f"the {target} output does not pass memconform's checks: " + " | ".join(blocking[:5])
                return Translation(source, target, canonical, None, ledger), None
        handed = True
        return Translation(source, target, canonical, None, ledger), part
    except OSError as exc:
        raise HarnessError(f"cannot write into {str(folder)!r}: {exc.strerror or exc}") from None
    finally:
        if not handed:  # refused, or failed: nothing that looks written is left behind
            handle.close()
            part.unlink(missing_ok=True)


def judge_file(fmt: str, path: Path, size: int, window: int | None = None) -> tuple[list[str], list[str]]:
    """(blocking problems, warnings) of an output file by the suite's document checks, read as `memconform
    validate` reads a file; the same classification as validation.judge gives the document in memory."""
    from memconform.run.validate import validate_file

    # the file is the translation's own, just written: its size is its bound
    _, _, results = validate_file(path, fmt, Profile.named("ci"), None, max(size, 1), window)
    return classify(results)
