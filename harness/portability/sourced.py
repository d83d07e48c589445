"""The source of the CLI's translation read in windows, so that neither the parsed source nor every canonical
record is ever held whole.

A format whose Portable declares a `reading` (canonical.Reading: its reader in steps) and whose file has its
record sections as arrays (at the top level, or in one object of stores) is read with the window reader
`validate` uses (harness/kit/windows/reader.py): the envelope whole, each record section a window of about `window` bytes at a time. The source is judged as
`memconform validate` judges the file (in windows where the format has a window plan). A first pass over the
windows makes each canonical record and keeps only what the ledger needs of the whole document before any record
is written: the count, the ids that repeat, the warnings, and what the records leave to `finish` (the
artifacts no record cites, say). The Document handed to the writer then holds a `OnePass`: the records are read again, named
and scrubbed as translate.prepare would, and handed to the writer one by one as it writes them; a writer that reads
its records more than once (its Portable not `one_pass`) gets them as a list. Anything this path cannot read (no
record section, a shape or a text the window reader refuses, a fixture case file, a file over validate's limit)
returns None: the caller reads the file whole, and says what it says. Output, ledger and summary bytes equal the
whole path's (tests/test_portability_sourced.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memconform.core.handed import HandedFileError, open_handed
from memconform.core.results import HarnessError

from .canonical import Document, OnePass, Record
from .formats import portable
from .ledger import Ledger
from .translate import Translation, name_repeat, restore_refusals, scrub_document, scrub_record


def read_source(path: Path, source: str, target: str, window: int | None = None) -> Translation | None:
    """The first half of the CLI's translation (as translate.read_checked gives it) of the file at `path`, read in
    windows of `window` bytes (None: validate's); None when the file is to be read whole."""
    from memconform.kit.windows.reader import WINDOW_BYTES, NotWindowable, read_windowed
    from memconform.run.validate import MAX_DOCUMENT_BYTES

    from .written import judge_file

    declared = portable(source)
    reading = declared.reading
    if reading is None or declared.output_problems is not None:  # judge() asks output_problems of the whole document
        return None
    try:  # only a regular file, opened as every handed file is (a FIFO is never waited on); load() reads the rest
        fd = open_handed(path)
    except (HandedFileError, OSError):
        return None  # load() says why, in its words
    try:
        version = _identity(os.fstat(fd))
        size = version[2]
        if size > MAX_DOCUMENT_BYTES:
            return None
        wanted = {reading.windowed(section) for section in reading.sections}
        try:  # the skim: the envelope, and where each window of the record sections is
            layout = read_windowed(fd, size, wanted.__contains__, _ignore, window or WINDOW_BYTES,
                                   groups=lambda key: key == reading.group)
        except NotWindowable:
            return None
    finally:
        os.close(fd)
    envelope = layout.envelope
    if "document" in envelope and "verdict" in envelope:  # a fixture case: load() reads the document inside it
        return None
    wrong, _ = judge_file(source, path, size, window)
    _unchanged(path, version, _identity(os.stat(path)))  # the file judged is the file skimmed
    if wrong:  # translate.read_checked's refusal, word for word
        ledger = Ledger(source, target)
        ledger.refused = f"the {source} source does not pass memconform's checks: " + " | ".join(wrong[:5])
        return Translation(source, target, Document(source), None, ledger)

    def every(state: Any) -> Iterator[Record]:
        """The records of every section, in the reader's order, each section read again from its windows."""
        for section in reading.sections:
            yield from reading.records(state, section, _section_items(path, version, layout.spans, reading.windowed(section)))

    head, state = reading.begin(envelope)
    count, seen, repeats, refusals = 0, dict[str, int](), list[str](), list[str]()
    for record in every(state):
        count += 1
        repeat = name_repeat(record, source, seen)
        if repeat:
            repeats.append(repeat)
        refusals += restore_refusals(record, source)
    if reading.finish is not None:
        reading.finish(head, state)
    repeated = {key for key, n in seen.items() if n > 1}
    del seen
    ledger = Ledger(source, target, records_in=count)
    ledger.warnings += repeats + refusals  # prepare's order: every repeat, then every refused restore
    scrub_document(head, ledger)

    def records(noted: Ledger) -> Iterator[Record]:
        seen_again: dict[str, int] = {}
        for record in every(reading.begin(envelope)[1]):
            if record.key(source) in repeated:  # named as the first pass named it; warned there
                name_repeat(record, source, seen_again)
            scrub_record(record, source, noted)
            yield record

    # a pass before the writing one (canonical.again) notes in a ledger of its own, thrown away: never twice
    head.records = OnePass(count, lambda: records(ledger), lambda: records(Ledger(source, target)))
    if not portable(target).one_pass:  # its writer reads the records more than once: made whole, as read_checked does
        head.records = list(head.records)
    return Translation(source, target, head, None, ledger)


def _ignore(section: str, first: int, items: list[Any], fast: bool) -> None:
    """The skim keeps no window: the passes read them again."""


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    """What tells one version of a file from another: device, inode, size, modification time."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _unchanged(path: Path, seen: tuple[int, int, int, int], now: tuple[int, int, int, int]) -> None:
    if now != seen:  # replaced or rewritten since the skim: what is read would not be what was judged
        raise HarnessError(f"{str(path)!r} changed while it was translated: translate it again")


def _section_items(path: Path, seen: tuple[int, int, int, int], spans: list[Any], section: str) -> Iterator[Any]:
    """The record section's items, window by window, from the spans the skim found; a file changed since is a
    harness error, never a shorter translation."""
    from memconform.kit.windows.reader import NotWindowable, reread

    fd = open_handed(path)
    try:
        _unchanged(path, seen, _identity(os.fstat(fd)))
        for _, window in reread(fd, seen[2], spans, section):
            yield from window
    except NotWindowable as exc:
        raise HarnessError(f"{str(path)!r} changed while it was translated ({exc}): translate it again") from None
    finally:
        os.close(fd)
