"""Reading one JSON object file in bounded windows: its big arrays (a format's record sections) a slice
of elements at a time, everything else as one small envelope.

The file is never read whole. At the top level the members are found one by one: a key (a short
string), `:`, a value. A member whose key is one of the sections and whose value is an array is read
as windows: a slice of about `window` bytes is cut after an element (at a `}` followed by `,` or `]`)
and read with the strict reader as `[` + slice + `]`. A cut inside a string or inside a nested value
cannot be read (an unterminated string or an unclosed container), so a slice that reads is exactly
a run of whole elements; a slice reaching past the end of the section reads up to its `]` and then
meets the next member ("unexpected content after document"), which says where the section ends. Any
other member's value is found with the stdlib's `raw_decode` and kept, its bytes, in the envelope.
A member named by `groups` whose value is an object is read the same way one level down: its arrays
are sections named `<group>.<key>` (MemoRizz's stores), its other members part of the envelope.

The strict reader's bounds hold: each window is read by `read_json` with the depth the element has
in the file; counts of containers, strings and commas are added up over the whole file and the
whole-file bounds (containers per byte, estimated memory) applied to the sums. Whatever does not fit
this shape, or any text the strict reader refuses, raises NotWindowable: the caller then reads the
file whole, so a malformed file is reported by the one whole-file path, in its words.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...core.json_reader import FILE, JsonRejected, TextCounts, read_json_counting, read_json_noting_path
from .totals import FileTotals

WINDOW_BYTES = 1 << 20  # a window's slice of a section (1 MiB: measured faster than larger slices, and smaller peaks); tests shrink it
KEY_BYTES = 1 << 16  # a top-level key longer than this is not an envelope this reader expects
CUTS_TRIED = 3  # cuts tried in one slice (from its end) before the slice is doubled
WHITE = b" \t\r\n"
# an element inside a section is one array and one object deeper than the same text read as [slice]
WINDOW_POLICY = dataclasses.replace(FILE, max_depth=FILE.max_depth - 1)
# and one object deeper again inside a group (a section `<group>.<key>`)
GROUP_WINDOW_POLICY = dataclasses.replace(FILE, max_depth=FILE.max_depth - 2)
_AFTER_DOCUMENT = "unexpected content after document"  # orjson's words for trailing text


class NotWindowable(Exception):
    """The file is not read in windows (its shape, or a text the strict reader refuses): read it whole."""


# (section, index of the first element, the elements, whether orjson read them: no NaN, no infinity,
# no integer past 64 bits)
OnWindow = Callable[[str, int, list[Any], bool], None]


@dataclass
class Span:
    """One window as read: where its slice is in the file, so a second pass reads the same elements."""

    section: str
    offset: int
    length: int
    first: int
    policy: Any = WINDOW_POLICY


@dataclass
class Layout:
    """What one windowed reading found."""

    envelope: dict[str, Any]  # the top-level object with each windowed section as an empty array
    counts: dict[str, int]  # section -> number of elements
    spans: list[Span] = field(default_factory=list)
    late: list[Any] = field(default_factory=list)  # keys of envelope members after the first section


class _File:
    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size

    def read(self, offset: int, length: int) -> bytes:
        length = max(0, min(length, self.size - offset))
        data = os.pread(self.fd, length, offset)
        if len(data) != length:
            raise NotWindowable("the file changed while it was read")
        return data

    def skip_white(self, pos: int) -> int:
        while True:
            piece = self.read(pos, 4096)
            stripped = piece.lstrip(WHITE)
            if stripped or not piece:
                return pos + len(piece) - len(stripped)
            pos += len(piece)

    def byte(self, pos: int) -> bytes:
        return self.read(pos, 1)


def read_windowed(fd: int, size: int, sections: Callable[[str], bool], on_window: OnWindow,
                  window: int = WINDOW_BYTES, on_envelope: Callable[[dict[str, Any]], None] | None = None,
                  groups: Callable[[str], bool] | None = None) -> Layout:
    """Read the JSON object in `fd` (`size` bytes): each member for which `sections(key)` holds and
    whose value is an array is handed to `on_window` a window at a time; the rest is the envelope.
    A member for which `groups(key)` holds and whose value is an object is read member by member in
    the same way, its sections named `<key>.<member>`. `on_envelope` is handed the top-level members
    read before the first section, as they are (Layout.late names the envelope members that came
    after a section)."""
    f = _File(fd, size)
    reading = _Reading(f, sections, on_window, window, on_envelope, groups or (lambda key: False))
    pos = f.skip_white(0)
    if f.byte(pos) != b"{":
        raise NotWindowable("the file is not one JSON object")
    pos, skeleton = reading.members(f.skip_white(pos + 1), "")
    if f.skip_white(pos) != size:
        raise NotWindowable("text after the object")
    if not reading.counts:
        raise NotWindowable("no section to read in windows")
    totals = reading.totals
    totals.add(skeleton)
    if not totals.within_file_bounds(size):
        raise NotWindowable("over the whole-file reader's first estimates")
    envelope = _strict(skeleton, FILE)
    if not isinstance(envelope, dict):
        raise NotWindowable("the envelope is not an object")
    return Layout(envelope, reading.counts, reading.spans, reading.late)


class _Reading:
    """One reading of a file: the members of its object (and of a group's), sections as windows."""

    def __init__(self, f: _File, sections: Callable[[str], bool], on_window: OnWindow, window: int,
                 on_envelope: Callable[[dict[str, Any]], None] | None, groups: Callable[[str], bool]) -> None:
        self.f, self.sections, self.on_window, self.window = f, sections, on_window, window
        self.on_envelope, self.groups = on_envelope, groups
        self.totals = FileTotals()
        self.counts: dict[str, int] = {}
        self.spans: list[Span] = []
        self.late: list[Any] = []
        self.top: list[bytes] = []  # the top-level members read so far (on_envelope's)
        self.grouped: set[str] = set()

    def members(self, pos: int, group: str) -> tuple[int, bytes]:
        """Read an object's members from `pos` (after its `{`): (offset after its `}`, its skeleton:
        each section's array written empty, every other member as it is)."""
        f = self.f
        members: list[bytes] = self.top if not group else []
        if group and f.byte(pos) == b"}":
            return pos + 1, b"{}"
        while True:
            key_end = _string_end(f, pos)
            key_text = f.read(pos, key_end - pos)
            key = _strict(key_text, FILE)
            pos = f.skip_white(key_end)
            if f.byte(pos) != b":":
                raise NotWindowable("a member without ':'")
            pos = f.skip_white(pos + 1)
            opener = f.byte(pos)
            name = f"{group}.{key}" if group and isinstance(key, str) else key
            if not group and key in self.grouped:
                raise NotWindowable(f"the member {key!r} appears twice")
            if isinstance(name, str) and opener == b"[" and self.sections(name):
                if name in self.counts:
                    raise NotWindowable(f"the section {name!r} appears twice")
                if not self.counts and self.on_envelope is not None:
                    early = _strict(b"{" + b",".join(self.top) + b"}", FILE)
                    if not isinstance(early, dict):
                        raise NotWindowable("the envelope is not an object")
                    self.on_envelope(early)
                policy = GROUP_WINDOW_POLICY if group else WINDOW_POLICY
                pos, self.counts[name] = _section(f, pos + 1, name, self.window, self.on_window, self.spans,
                                                  self.totals, policy)
                members.append(key_text + b":[]")
            elif not group and isinstance(key, str) and opener == b"{" and self.groups(key):
                self.grouped.add(key)
                if self.counts:
                    self.late.append(key)
                pos, inner = self.members(f.skip_white(pos + 1), key)
                members.append(key_text + b":" + inner)
            else:
                end = _value_end(f, pos, self.window)
                members.append(key_text + b":" + f.read(pos, end - pos))
                pos = end
                if self.counts:
                    self.late.append(name)
            pos = f.skip_white(pos)
            mark = f.byte(pos)
            if mark == b"}":
                return pos + 1, b"{" + b",".join(members) + b"}"
            if mark != b",":
                raise NotWindowable("a member is followed by neither ',' nor '}'")
            pos = f.skip_white(pos + 1)


def reread(fd: int, size: int, spans: list[Span], section: str) -> Any:
    """The windows of one section again, as (first index, elements), from the spans of a first reading."""
    f = _File(fd, size)
    for span in spans:
        if span.section == section:
            yield span.first, _strict(_wrapped(f.read(span.offset, span.length), span.length), span.policy)


def _strict(text: bytes, policy: Any) -> Any:
    return _strict_noting(text, policy)[0]


def _strict_noting(text: bytes, policy: Any) -> tuple[Any, bool]:
    """(value, whether orjson read it) of a part of the file, or NotWindowable."""
    try:
        return read_json_noting_path(text, policy)
    except JsonRejected as exc:
        raise NotWindowable(f"the strict reader refuses a part of the file: {exc}") from None


def _string_end(f: _File, pos: int) -> int:
    """The offset after the JSON string (a key) starting at `pos`."""
    text = f.read(pos, KEY_BYTES)
    if text[:1] != b'"':
        raise NotWindowable("a member's key is not a string")
    at = 1
    while True:
        at = text.find(b'"', at)
        if at < 0:
            raise NotWindowable("a key longer than this reader takes")
        backslashes = len(text[:at]) - len(text[:at].rstrip(b"\\"))
        if backslashes % 2 == 0:
            return pos + at + 1
        at += 1


def _value_end(f: _File, pos: int, window: int) -> int:
    """The offset after the JSON value starting at `pos` (an envelope member: found by the stdlib's
    raw_decode on a slice, doubled while the value runs past it)."""
    length = min(window, 1 << 16)
    decoder = json.JSONDecoder()
    while True:
        piece = f.read(pos, length)
        text = piece.decode("utf-8", "surrogateescape")  # one character per undecodable byte: offsets map back
        try:
            _, end = decoder.raw_decode(text)
        except (ValueError, RecursionError):
            if pos + len(piece) >= f.size:
                raise NotWindowable("an envelope value that does not read") from None
            length *= 2
            continue
        return pos + len(text[:end].encode("utf-8", "surrogateescape"))


def _section(f: _File, pos: int, section: str, window: int, on_window: OnWindow, spans: list[Span],
             totals: FileTotals, policy: Any = WINDOW_POLICY) -> tuple[int, int]:
    """Read one section's elements from `pos` (after its `[`): (offset after its `]`, element count)."""
    pos = f.skip_white(pos)
    if f.byte(pos) == b"]":
        return pos + 1, 0
    count = 0
    length = window
    while True:
        piece = f.read(pos, length)
        if not piece:
            raise NotWindowable(f"the section {section!r} is not closed")
        found = _cut(piece, pos + len(piece) >= f.size, policy)
        if found is None:
            if pos + len(piece) >= f.size:
                raise NotWindowable(f"the section {section!r} does not read")
            length *= 2  # one element longer than the slice, or cuts that did not read: a wider slice
            continue
        cut, elements, closed, fast, counted = found
        if counted is not None:
            totals.add_counted(counted, 1)
        else:
            totals.add(piece[:cut])
        if not totals.within_file_bounds(f.size):  # the sums only grow: over now, over at the end
            raise NotWindowable("over the whole-file reader's first estimates")
        spans.append(Span(section, pos, cut, count, policy))
        on_window(section, count, elements, fast)
        count += len(elements)
        length = window
        if closed:
            return pos + cut + 1, count  # after the section's `]`
        totals.commas += 1  # the comma at the cut
        pos = f.skip_white(pos + cut + 1)


# (offset of the cut, the elements, closed there, read by orjson, what the strict reader counted of the
# window wrapped in [ ]: None when it counted nothing)
Cut = tuple[int, list[Any], bool, bool, TextCounts | None]


def _cut(piece: bytes, at_end: bool, policy: Any) -> Cut | None:
    """(offset of the cut, the elements before it, whether the section's `]` is there, whether orjson
    read them) for a slice beginning at an element, or None when no cut tried reads."""
    if at_end:  # the whole rest of the file: the section closes in it or nowhere
        return _closes_within(piece, len(piece), policy)
    tries = 0
    end = len(piece)
    # A cut past the section's close is refused by the strict reader (its slow path too: text after the
    # array) and then probed for where the section closed: one slow read of one window per section, where
    # searching every window for a possible close first cost more (0.6 ms a MiB, 0.25 s CPU at 1M atoms)
    while tries < CUTS_TRIED:
        brace = piece.rfind(b"}", 0, end)
        if brace < 0:
            return None
        end = brace
        after = brace + 1
        while after < len(piece) and piece[after] in WHITE:
            after += 1
        if after >= len(piece) or piece[after] not in b",]":
            continue
        if piece[after] == ord(",") and not _element_follows(piece, after + 1):
            continue  # `},` inside an element (a nested object, then the element's next member): not a cut
        tries += 1
        wrapped = _wrapped(piece, after)
        try:
            elements, fast, counted = read_json_counting(wrapped, policy)
            return after, elements, piece[after] == ord("]"), fast, counted
        except JsonRejected:
            pass
        reads, stop = _probe(wrapped)
        if stop is not None:  # the section closed before this cut: up to its `]`
            return _closed_at(piece, stop, policy)
        if reads:
            raise NotWindowable("the strict reader refuses a window orjson reads (a bound)")
        # else: a cut inside a string or a nested value; an earlier one
    return None


def _element_follows(piece: bytes, at: int) -> bool:
    """Whether the next element of a section of objects may begin at `at` (after a comma): a `{` after white
    space, or the slice's end (nothing seen yet). A cut tried where a member name follows instead lies inside
    an element, and its window would be refused and read again by the strict reader's slow path: with nested
    objects (an AMPS atom's `x-` extension object, say) most `},` in a slice are of that kind."""
    while at < len(piece) and piece[at] in WHITE:
        at += 1
    return at >= len(piece) or piece[at] == ord("{")


def _wrapped(piece: bytes, end: int) -> bytes:
    """`[` + piece[:end] + `]` in one copy: a window is ~1 MiB, and each copy of that size costs the
    allocator fresh pages (three copies took 0.6 ms a window, one 0.03 ms)."""
    return b"".join((b"[", memoryview(piece)[:end], b"]"))


def _probe(text: bytes) -> tuple[bool, int | None]:
    """(orjson reads the text, where the value it holds ends when more text follows it: a byte offset)."""
    try:
        orjson.loads(text)
        return True, None
    except orjson.JSONDecodeError as exc:
        if exc.msg != _AFTER_DOCUMENT:
            return False, None
        chars = exc.pos  # orjson counts characters: back to bytes
        return False, len(text.decode("utf-8", "surrogateescape")[:chars].encode("utf-8", "surrogateescape"))
    except RecursionError:
        return False, None


def _closes_within(piece: bytes, limit: int, policy: Any) -> Cut | None:
    """When the section's `]` lies in piece[:limit]: (its offset, the elements, True, read by orjson)."""
    _, stop = _probe(b"".join((b"[", memoryview(piece)[:limit])))
    return None if stop is None else _closed_at(piece, stop, policy)


def _closed_at(piece: bytes, stop: int, policy: Any) -> Cut | None:
    """The section read up to its `]`, which ends before `stop` (an offset in `[` + piece)."""
    close = (b"[" + piece[:stop - 1]).rstrip(WHITE)
    if not close.endswith(b"]"):
        return None
    at = len(close) - 2  # the `]` in piece's offsets (the wrapper adds one byte before it)
    try:
        elements, fast, counted = read_json_counting(_wrapped(piece, at), policy)
    except JsonRejected as exc:
        raise NotWindowable(f"the strict reader refuses a part of the file: {exc}") from None
    return at, elements, True, fast, counted
