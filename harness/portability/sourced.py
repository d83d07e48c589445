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
returns None: the caller reads the file whole, and says what it says. A text format whose Portable declares `lines`
(canonical.LineReading) is read a line at a time the same way: judged from its file, its reader's `chosen` handed
every line in a pass that keeps only what choosing needs (the offsets of the lines that make records, in their
order), and those lines read back by offset in each pass after it. Output, ledger and summary bytes equal the whole
path's (tests/test_portability_sourced.py, tests/test_portability_sourced_lines.py).
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import os
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from memconform.core.handed import HandedFileError, open_handed
from memconform.core.results import HarnessError

from .canonical import Document, LineReading, OnePass, Reading, Record
from .formats import portable
from .ledger import Ledger
from .translate import (
    Translation,
    detect,
    name_repeat,
    refused_source,
    restore_refusals,
    scrub_document,
    scrub_record,
)


def read_source(path: Path, source: str, target: str, window: int | None = None) -> Translation | None:
    """The first half of the CLI's translation (as translate.read_checked gives it) of the file at `path`, read in
    windows of `window` bytes (None: validate's) or, for a text format, a line at a time; None when the file is to
    be read whole."""
    from .written import judge_file

    declared = portable(source)
    if declared.output_problems is not None:  # judge() asks output_problems of the whole document
        return None
    if declared.reading is not None:
        found = _windowed(path, declared.reading, window)
    elif declared.lines is not None:
        found = _lined(path, source, declared.lines)
    else:
        return None
    if found is None:
        return None
    version, parts = found
    wrong, _ = judge_file(source, path, version[2], window)
    _unchanged(path, version, _identity(os.stat(path)))  # the file judged is the file skimmed
    if wrong:  # translate.read_checked's refusal, word for word
        return refused_source(source, target, wrong)
    parts.ready()

    head, state = parts.begin()
    count, seen, repeats, refusals = 0, dict[str, int](), list[str](), list[str]()
    for record in parts.every(state):
        count += 1
        repeat = name_repeat(record, source, seen)
        if repeat:
            repeats.append(repeat)
        refusals += restore_refusals(record, source)
    parts.finish(head, state)
    repeated = {key for key, n in seen.items() if n > 1}
    del seen
    ledger = Ledger(source, target, records_in=count)
    ledger.warnings += repeats + refusals  # prepare's order: every repeat, then every refused restore
    scrub_document(head, ledger)

    def records(noted: Ledger) -> Iterator[Record]:
        seen_again: dict[str, int] = {}
        for record in parts.every(parts.again(state)):
            if record.key(source) in repeated:  # named as the first pass named it; warned there
                name_repeat(record, source, seen_again)
            scrub_record(record, source, noted)
            yield record

    # a pass before the writing one (canonical.again) notes in a ledger of its own, thrown away: never twice
    head.records = OnePass(count, lambda: records(ledger), lambda: records(Ledger(source, target)))
    if not portable(target).one_pass:  # its writer reads the records more than once: made whole, as read_checked does
        head.records = list(head.records)
    return Translation(source, target, head, None, ledger)


def refused_if_not_utf8(path: Path, source: str, target: str) -> Translation | None:
    """A text format's file whose bytes are not all UTF-8, refused with what `memconform validate` finds in the file
    (a text format's line that is not UTF-8 breaks its MUST): translate.load() reads such a text with U+FFFD in
    place of the bytes, which the document checks cannot see and the ledger would call `kept`. None for a UTF-8
    file or another format: the whole path judges the file from its bytes, as the line path does."""
    from .written import judge_file

    if not portable(source).text:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(open_handed(path), "rb") as handle:
        try:
            while piece := handle.read(1 << 20):
                decoder.decode(piece)
            decoder.decode(b"", final=True)
            return None
        except UnicodeDecodeError:
            size = os.fstat(handle.fileno()).st_size
    wrong, _ = judge_file(source, path, size)
    return refused_source(source, target, wrong) if wrong else None


Version = tuple[int, int, int, int]


class _Parts:
    """How one source file's records are read again for each pass: `begin` the Document without its records (and
    what its records need), `every` the records in the reader's order, `finish` what needs every record;
    `ready` what must be read once before the passes (after the file is judged)."""

    def ready(self) -> None:
        pass

    def begin(self) -> tuple[Document, Any]:
        raise NotImplementedError

    def every(self, state: Any) -> Iterator[Record]:
        raise NotImplementedError

    def finish(self, head: Document, state: Any) -> None:
        pass

    def again(self, first: Any) -> Any:
        """The state a later pass starts from, given the first pass's once finished."""
        return self.begin()[1]


def _windowed(path: Path, reading: Reading, window: int | None) -> tuple[Version, _Parts] | None:
    """A JSON format's file skimmed with the window reader: its envelope, and where each window of its record
    sections is; None when the windows cannot read it (or it is over validate's limit, or a fixture case)."""
    from memconform.kit.windows.reader import WINDOW_BYTES, NotWindowable, read_windowed
    from memconform.run.validate import MAX_DOCUMENT_BYTES

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
    if "document" in layout.envelope and "verdict" in layout.envelope:  # a fixture case: load() reads its document
        return None
    return version, _Windows(path, version, reading, layout)


class _Windows(_Parts):
    """The record sections read again from the windows the skim found."""

    def __init__(self, path: Path, version: Version, reading: Reading, layout: Any) -> None:
        self.path, self.version, self.reading, self.layout = path, version, reading, layout

    def begin(self) -> tuple[Document, Any]:
        return self.reading.begin(self.layout.envelope)

    def every(self, state: Any) -> Iterator[Record]:
        reading = self.reading
        for section in reading.sections:
            items = _section_items(self.path, self.version, self.layout.spans, reading.windowed(section))
            yield from reading.records(state, section, items)

    def finish(self, head: Document, state: Any) -> None:
        if self.reading.finish is not None:
            self.reading.finish(head, state)

    def again(self, first: Any) -> Any:
        return self.reading.again(first) if self.reading.again is not None else self.begin()[1]


def _lined(path: Path, source: str, lines: LineReading) -> tuple[Version, _Parts] | None:
    """A text format's file, to be read a line at a time; None when load() would not read it as lines: over
    validate's limit, no line, a first line that is not a JSON object (the whole file might then be one JSON value,
    which load() reads as JSON), or one line that is a fixture case or that a format of one JSON value claims."""
    from memconform.run.validate import MAX_DOCUMENT_BYTES

    try:
        fd = open_handed(path)
    except (HandedFileError, OSError):
        return None  # load() says why, in its words
    try:
        version = _identity(os.fstat(fd))
    finally:
        os.close(fd)
    if version[2] > MAX_DOCUMENT_BYTES:
        return None
    parts = _Lines(path, version, source, lines)
    with contextlib.closing(parts.lines()) as each:
        first = list(itertools.islice(each, 2))
    if not first or not isinstance(first[0][1], dict):
        return None
    only = first[0][1] if len(first) == 1 else None
    if only is not None and ("document" in only and "verdict" in only or not portable(detect(only) or source).text):
        return None  # load() reads it as JSON: a fixture case's document, or the object another format claims
    return version, parts


class _Lines(_Parts):
    """The records of a text format's file: the lines its reader chooses, read back by their offsets."""

    def __init__(self, path: Path, version: Version, source: str, reading: LineReading) -> None:
        self.path, self.version, self.source, self.reading = path, version, source, reading
        self.offsets: Sequence[int] = ()

    def lines(self) -> Generator[tuple[int, Any], None, None]:
        """(offset, parsed) of every line that is not blank, in file order."""
        with self._opened() as handle:
            offset = 0
            for raw in handle:
                parsed = self.reading.line(raw)
                if parsed is not None:
                    yield offset, parsed
                offset += len(raw)
            self._still(handle)

    def ready(self) -> None:
        self.offsets = self.reading.chosen(self.lines())

    def begin(self) -> tuple[Document, Any]:
        return Document(self.source), None

    def every(self, state: Any) -> Iterator[Record]:
        with self._opened() as handle:
            for offset in self.offsets:
                handle.seek(offset)
                parsed = self.reading.line(handle.readline())
                if parsed is None:
                    raise HarnessError(f"{str(self.path)!r} changed while it was translated: translate it again")
                yield self.reading.record(parsed)
            self._still(handle)

    @contextlib.contextmanager
    def _opened(self) -> Iterator[BinaryIO]:
        with os.fdopen(open_handed(self.path), "rb") as handle:
            self._still(handle)
            yield handle

    def _still(self, handle: BinaryIO) -> None:
        _unchanged(self.path, self.version, _identity(os.fstat(handle.fileno())))


def _ignore(section: str, first: int, items: list[Any], fast: bool) -> None:
    """The skim keeps no window: the passes read them again."""


def _identity(info: os.stat_result) -> Version:
    """What tells one version of a file from another: device, inode, size, modification time."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _unchanged(path: Path, seen: Version, now: Version) -> None:
    if now != seen:  # replaced or rewritten since the skim: what is read would not be what was judged
        raise HarnessError(f"{str(path)!r} changed while it was translated: translate it again")


def _section_items(path: Path, seen: Version, spans: list[Any], section: str) -> Iterator[Any]:
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
