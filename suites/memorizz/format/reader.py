"""Reading an archive file once, within limits, and recognising the format."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memconform.core.json_reader import FILE, JsonRejected, read_json_noting_path
from memconform.suites.memorizz.detect import detect as detect_archive
from memconform.suites.memorizz.detect import (
    sniff as sniff,  # re-exported: the head's test, asked without the suite
)
from memconform.suites.memorizz.format.canonical_fast import TextFacts

if TYPE_CHECKING:
    from memconform.suites.memorizz.format.windows import ArchiveFindings


@dataclass
class Archive:
    """A parsed archive and what reading it found. A plain dict given to the checks is wrapped in one."""

    value: Any
    file_bytes: int | None = None  # size of the file it came from; None: a document given parsed
    refused: str = ""  # why it was not (fully) read: over a limit
    exact: bool | None = None  # a float needing the special number rules was seen while parsing
    long_digits: bool | None = None  # 16+ digits in a row somewhere in the file (None: not known)
    canonical: bytes | None = None
    canonical_facts: TextFacts | None = None  # what one look at the canonical text found (orjson's text only)
    canonical_error: str = ""
    path: str | None = None  # a file opened for `memconform validate`, read when a check first needs it
    malformed: JsonRejected | None = None  # the strict reader refused the file (validate: one well_formed failure)
    finite: bool = False  # read by orjson: no NaN, no infinity, no integer past 64 bits (canonical fast path)
    # read in windows (format/windows.py): `value` holds its big stores withheld, the checks ask this
    windowed: ArchiveFindings | None = None

    @property
    def unread(self) -> bool:
        return self.path is not None and self.value is None and not self.refused and self.malformed is None


def open_file(path: str | os.PathLike[str]) -> Archive:
    """The document `memconform validate` hands the checks: read later, once, within the profile's limits."""
    return Archive(value=None, path=os.fspath(path))


def detect(doc: Any) -> bool:
    if isinstance(doc, Archive):
        return doc.unread or detect_archive(doc.value)
    return detect_archive(doc)  # a file's head or a parsed document (suites/memorizz/detect.py)


def record_total(value: Any) -> int:
    stores = value.get("stores") if isinstance(value, dict) else None
    if not isinstance(stores, dict):
        return 0
    return sum(len(v) for v in stores.values() if isinstance(v, list))


def parse_bytes(raw: bytes, file_bytes: int | None = None) -> Archive:
    """Parse once with the strict reader; a text it refuses comes back as an Archive with `malformed` set."""
    try:
        value, fast = read_json_noting_path(raw, FILE)
    except JsonRejected as exc:
        return Archive(value=None, file_bytes=len(raw) if file_bytes is None else file_bytes, malformed=exc)
    # long_digits stays unknown: the look at the canonical text (which writes every integer as the file
    # does) answers it without a pass over the file of its own
    return Archive(value=value, file_bytes=len(raw) if file_bytes is None else file_bytes, exact=None, finite=fast)


def load_file(path: str | os.PathLike[str], max_bytes: int, max_records: int, key_order: str = "codepoint") -> Archive:
    """Read an archive file: its size is checked before reading, records counted right after parsing.
    A file over a window's bytes is read in windows where they can say what the whole file would
    (format/windows.py; `key_order` is the one its digest is computed in), else whole."""
    size = os.stat(path).st_size
    if size > max_bytes:
        return Archive(value=None, file_bytes=size, refused=f"file is {size} bytes, over the limit of {max_bytes}",
                       path=os.fspath(path))
    from memconform.suites.memorizz.format.windows import (  # WINDOW as set now (tests shrink it)
        WINDOW,
        read_in_windows,
    )

    read = read_in_windows(path, key_order) if size > WINDOW else None
    if read is not None:
        value, size, found = read
        archive = Archive(value=value, file_bytes=size, path=os.fspath(path), windowed=found)
        if size > max_bytes:
            archive.refused = f"file grew past the limit of {max_bytes} bytes"
        elif (total := record_total(value)) > max_records:
            archive.refused = f"{total} records, over the limit of {max_records}"
        return archive
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)  # bounded even if the file grew since stat
    if len(raw) > max_bytes:
        return Archive(value=None, file_bytes=len(raw), refused=f"file grew past the limit of {max_bytes} bytes")
    archive = parse_bytes(raw, len(raw))
    archive.path = os.fspath(path)
    del raw
    total = record_total(archive.value)
    if total > max_records:
        archive.refused = f"{total} records, over the limit of {max_records}"
    return archive
