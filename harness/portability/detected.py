"""The format of a file to translate, found without parsing it whole, and only where the answer is provably the
one translate.detect gives on the whole parsed document (what translate.load finds without --from); None
otherwise, and the caller parses the file whole as before.

Proof rests on what each format declares of its detector (formats.Portable): `detect_by_shape` (it answers an
object from its member names, which members are arrays or objects and the other members' values; a text by its
type alone) and, for a text format, `detect_lines` (it answers a text from that many first lines that are not
blank). Two light answers:

- one JSON object: the window reader's skim (kit/windows/reader.py) with every format's record sections and group
  keeps the envelope, each section an empty array: the same member names, kinds and other values as the whole
  document, so every detector answers the envelope as it would the document. Exactly one format may claim it, and
  not a text format (load() would then read the file as text), and no fixture case (load() reads its document).
- a text of lines (JSON Lines): its first line that is not white space is one whole JSON value and more follows,
  so the file is not one JSON text and load() asks the detectors of its text; the first lines each text format's
  detector looks at answer as the whole text does, and every other format answers a text by its type alone.
  Exactly one format may claim it, it must be a text format, and the file must be UTF-8 throughout (load()
  replaces what is not; the line path refuses it).

Anything else (a detector that declares neither, a file the skim or the strict reader refuses, a file over
validate's limit, a head longer than HEAD_BYTES) is None. Memory stays bounded: the skim holds a window at a
time, the lines' check its head (HEAD_BYTES at most) and a MiB of the file while it checks its UTF-8."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

from memconform.core.handed import HandedFileError, open_handed

from .formats import formats, portable

HEAD_BYTES = 1 << 24  # the first lines a text format's detector reads (its detect_lines), at most; longer: parsed whole
_JSON_WHITE = b" \t\r\n"


def detect_file(path: Path, window: int | None = None) -> str | None:
    """The format translate.load(path) would find, found from a skim of the file; None when not proved."""
    from memconform.run.validate import MAX_DOCUMENT_BYTES

    order = sorted(formats(), key=lambda f: portable(f).text)  # translate.detect's order
    if not all(portable(f).detect_by_shape for f in order):
        return None  # a detector that may look inside what a skim does not keep: only the whole parse can ask it
    try:  # only a regular file, opened as every handed file is; load() says why not, in its words
        fd = open_handed(path)
    except (HandedFileError, OSError):
        return None
    try:
        size = os.fstat(fd).st_size
        if size > MAX_DOCUMENT_BYTES:
            return None
        start = _first_content(fd, size)
        if start is None:
            return None
        if os.pread(fd, 1, start) == b"{":
            found = _from_envelope(fd, size, order, window)
            if found is not None:
                return found
        return _from_lines(fd, size, order)
    finally:
        os.close(fd)


def _first_content(fd: int, size: int) -> int | None:
    """The offset of the file's first byte that is not JSON white space, within HEAD_BYTES; None: none there."""
    at = 0
    while at < min(size, HEAD_BYTES):
        piece = os.pread(fd, 1 << 16, at)
        if not piece:
            return None
        stripped = piece.lstrip(_JSON_WHITE)
        if stripped:
            return at + len(piece) - len(stripped)
        at += len(piece)
    return None


def _from_envelope(fd: int, size: int, order: list[str], window: int | None) -> str | None:
    """The one non-text format that claims the file's envelope, read by the skim; None when not exactly one."""
    from memconform.kit.windows.reader import WINDOW_BYTES, NotWindowable, read_windowed

    sections: set[str] = set()
    groups: set[str] = set()
    for name in order:
        reading = portable(name).reading
        if reading is not None:
            sections.update(reading.windowed(s) for s in reading.sections)
            if reading.group is not None:
                groups.add(reading.group)
    try:
        layout = read_windowed(fd, size, sections.__contains__, _ignore, window or WINDOW_BYTES,
                               groups=groups.__contains__)
    except NotWindowable:
        return None
    envelope = layout.envelope
    if "document" in envelope and "verdict" in envelope:  # a fixture case: load() detects its document
        return None
    claims = [name for name in order if portable(name).detect(envelope)]
    if len(claims) != 1 or portable(claims[0]).text:
        return None  # none (load() says so), two (detect's order would decide: left to it), or a text format's object
    return claims[0]


def _from_lines(fd: int, size: int, order: list[str]) -> str | None:
    """The one text format that claims the file's first lines, where the file is provably not one JSON text."""
    from memconform.core.json_reader import JsonRejected, read_json

    wanted = max((portable(f).detect_lines or 0 for f in order if portable(f).text), default=0)
    if wanted <= 0 or not all(portable(f).detect_lines for f in order if portable(f).text):
        return None
    head = _head(fd, size, wanted)
    if head is None:
        return None
    lines = head.split(b"\n")
    filled = [i for i, line in enumerate(lines) if line.strip(_JSON_WHITE)]
    if len(filled) < 2:
        return None  # one value at most: load() may read it as JSON
    try:  # the first line with content is one whole JSON value, and content follows: the file is not one JSON text
        read_json(lines[filled[0]])
    except JsonRejected:
        return None
    text = head.decode("utf-8", "replace")  # load()'s text, cut at a line's end: its first lines as load() reads them
    claims = [name for name in order if portable(name).detect(text)]
    if len(claims) != 1 or not portable(claims[0]).text or not _utf8(fd, size):
        return None
    return claims[0]


def _utf8(fd: int, size: int) -> bool:
    """Is the whole file UTF-8? Such a file is left to the whole path (load() reads it with U+FFFD, and the CLI then
    judges it from its bytes and refuses it, as the line path does: a line that is not UTF-8 breaks a MUST)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    at = 0
    try:
        while at < size:
            piece = os.pread(fd, 1 << 20, at)
            if not piece:
                break
            decoder.decode(piece)
            at += len(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _head(fd: int, size: int, wanted: int) -> bytes | None:
    """The file's first whole lines up to the `wanted`-th that is not blank as the text detectors count them (the
    line's text, decoded, stripped), or all of the file; None past HEAD_BYTES."""
    read = bytearray()
    seen, line_start = 0, 0
    while True:
        piece = os.pread(fd, 1 << 16, len(read))
        if not piece or len(read) + len(piece) >= size:
            read += piece
            return bytes(read) if len(read) <= HEAD_BYTES else None
        scan_from = len(read)
        read += piece
        while (end := read.find(b"\n", scan_from)) >= 0:
            if read[line_start:end].decode("utf-8", "replace").strip():
                seen += 1
                if seen == wanted:
                    return bytes(read[:end + 1]) if end < HEAD_BYTES else None
            line_start = scan_from = end + 1
        if len(read) > HEAD_BYTES:
            return None


def _ignore(section: str, first: int, items: list[Any], fast: bool) -> None:
    """The skim keeps no window."""
