"""A translation written to a file and judged from that file (the CLI's `translate`), so the output is never
held whole beside its judgement.

The output goes, piece by piece, to a temporary file in the destination's folder as soon as it is made, and is
then measured against its format's size limit and judged by the checks `memconform validate` runs on a file
(harness/run/validate.py), where validate reads such a file in parts: in windows (a window plan) or by lines
(a stream). There a writer that streams its records (streamed.py) makes each native record as the text reaches
it and lets it go, or (where a manifest summing every record precedes them) spills each to a temporary file as
it is made and reads it back as the text reaches it, so no list of every native record is held. A format
validate would read back whole is built whole and judged in memory, as translate.write_read does, before it is
written: its file read back would cost its bytes and its parse besides. Only a judged file is handed back, to be renamed into place; any refusal or
failure removes it. Bytes, ledger, findings and refusals are those of write_read
(tests/test_portability_written.py).
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
from .validation import classify, judge

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
    in_memory: tuple[list[str], list[str]] | None = None  # the judgement of an output not judged from its file
    from_file = validate and judged_in_parts(target)
    try:
        _plain_mode(fd)
        # both until the text is written: a streamed section's records are made (and let go) as it is written
        with consuming(), streaming(from_file or not validate, spill_folder=folder):
            try:
                output = writer(canonical, ledger)
                tr.canonical = canonical = Document(source)  # the writer holds the records it has still to write
                streamed = list(sections(output))
                if validate and not from_file:  # read back whole, the file would cost more than the document
                    in_memory = judge(target, output)
                elif validate and declared.output_problems is not None:
                    if streamed:  # its records are not there to be asked: a format that needs both is a harness bug
                        raise HarnessError(f"the {target} output is judged from its file and streamed, but its format "
                                           "declares output_problems, which needs the records in memory")
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
            found, warnings = in_memory or judge_file(target, part, size, window)
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


def _plain_mode(fd: int) -> None:
    """The permissions a plainly created file gets (0666 less the umask), not mkstemp's owner-only 0600: the file
    renamed into place is the user's output, as readable as any file they write."""
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)


def judged_in_parts(fmt: str) -> bool:
    """Does `validate` read a file of this format in parts (a window plan, or a stream of lines)? Only then is the
    output judged from its file: a file read back whole costs its bytes and its parse, more than the document the
    writer made (docs/portability.md: twice the peak at 100k records), so such an output is built whole and judged
    in memory."""
    from memconform.core.suite import get_suite
    from memconform.kit.windows.plan import plan_of

    suite = get_suite(fmt)
    return suite.stream is not None or plan_of(suite) is not None


def judge_file(fmt: str, path: Path, size: int, window: int | None = None) -> tuple[list[str], list[str]]:
    """(blocking problems, warnings) of an output file by the suite's document checks, read as `memconform
    validate` reads a file; the same classification as validation.judge gives the document in memory."""
    from memconform.run.validate import validate_file

    # the file is the translation's own, just written: its size is its bound
    _, _, results = validate_file(path, fmt, Profile.named("ci"), None, max(size, 1), window)
    return classify(results)
