"""The one strict JSON reader for everything a target sends and every file `validate` reads.

RFC 8259 bytes: UTF-8 without a byte order mark (§8.1; bytes are never guessed to be UTF-16). Bounded
before a single object is built: nesting at most `max_depth`; at most one container (array or object,
about 60-70 bytes of Python each) per CONTAINER_BYTES bytes of text above MIN_CONTAINERS, so a text of
`[]`s or `{}`s cannot grow ~25x in memory; and at most `memory_bound` (MEMORY_FACTOR bytes per byte
of text, plus MEMORY_FLOOR) of objects by `estimated_memory`, an upper bound from counts of strings,
commas, containers and wide characters, so many short strings or one-letter keys (~14x) are refused
too. No string can be longer than the text that holds it. Linear time on any input: no regular
expression here can backtrack, and the parsers are C.

Fast path: orjson (it refuses NaN, Infinity, lone surrogates, a BOM and bad UTF-8 itself). Its depth
bound is fixed (ORJSON_DEPTH); wrapping the text in ORJSON_DEPTH - max_depth arrays makes that bound
ours, at C speed. orjson reads integers beyond 64 bits as floats, so a text with a number token of 19
digits or more (where a number can stand, not inside a string) takes the stdlib path, which is also the path of every text orjson refuses: there the policy of the
caller (refuse or mark NaN, refuse or mark integers over Python's 4,300-digit bound, refuse duplicate
names or lone surrogates) decides, with the stdlib's words for syntax errors.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass
from typing import Any

import orjson

from .json_exact import FILE as FILE
from .json_exact import LINE as LINE
from .json_exact import MAX_INT_DIGITS as MAX_INT_DIGITS
from .json_exact import REPLY as REPLY
from .json_exact import STRICT as STRICT
from .json_exact import HugeInt as HugeInt
from .json_exact import JsonRejected as JsonRejected
from .json_exact import NonJsonNumber as NonJsonNumber
from .json_exact import Policy as Policy
from .json_exact import _stdlib, _too_deep
from .json_exact import depth_passed_at as depth_passed_at

BOM = b"\xef\xbb\xbf"
ORJSON_DEPTH = 1024  # orjson refuses deeper nesting (tests/test_json_reader.py keeps this true)
MIN_CONTAINERS = 100_000
CONTAINER_BYTES = 16
MEMORY_FACTOR = 12  # bytes of objects the reader may build per byte of text (estimated_memory) ...
MEMORY_FLOOR = 16 << 20  # ... plus this, so no text of MIN_CONTAINERS bytes or less is ever refused for it
_NINETEEN_DIGITS = b"0" * 19
_BEFORE_NUMBER = (b"", b"[", b",", b":", b" ", b"\t", b"\n", b"\r")  # b"": the start of the text
_AFTER_NUMBER = (b"", b",", b"]", b"}", b" ", b"\t", b"\n", b"\r")
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_DIGITS_AS_ZERO_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in range(256))
# one string, or the rest of the text from an unterminated one: possessive, so never retried
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_ASTRAL_LEADS = b"\xf0\xf1\xf2\xf3\xf4"  # a UTF-8 sequence of four bytes: a character past U+FFFF
_NOT_MARKS = bytes(b for b in range(256) if b not in b'"[]{},' + _ASTRAL_LEADS)
# The dense shape of a text, one pass for every scan: digits as "0", the marks above kept, and the bytes
# that can stand next to an integer token's digits (`-`, `.`, `:`) kept; the rest (white space, letters,
# escapes, other UTF-8) dropped. An integer token outside strings keeps its context there exactly
# (white space between it and its neighbours is gone, its neighbours are structure); letters dropped
# inside strings can only join digits into a longer run (a run that is looked at, never one missed).
_NOT_DENSE = bytes(b for b in range(256) if b not in b'"[]{},-.:0123456789' + _ASTRAL_LEADS)
_NUMBER_BEFORE = b"[,:"  # in the dense shape: what stands before an integer token (or its minus)
_NUMBER_AFTER = b",]}"  # ... and after it
_ZEROS = re.compile(rb"0+")
_NOT_QUOTES_OR_BRACKETS = bytes(b for b in range(256) if b not in b'"[]{}')
_OPENERS_AS_ONE = bytes.maketrans(b"{}", b"[]")
SHALLOW_PASSES = 32  # nesting the cheap proof (nests_within) looks at; a deeper text takes the wrapped parse
# A text this long or longer is proved shallow (nests_within) before orjson reads it unwrapped; a shorter one
# is read inside the wrapping arrays straight away: its one copy costs less than the proof (1 MiB, a window
# of kit/windows: 0.03 ms against 0.43 ms), and only a large text's copy would weigh on the peak.
DEPTH_PROOF_FROM = 8 << 20
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{},')
_QUOTED = re.compile(rb'"[^"]*+"?')  # over quotes and marks only (escapes already gone): a string's marks
OUTSIDE_SLICE = 1 << 16


def read_json(raw: bytes | bytearray | memoryview, policy: Policy = FILE) -> Any:
    """The value of one JSON text, or JsonRejected."""
    return read_json_noting_path(raw, policy)[0]


def read_json_noting_path(raw: bytes | bytearray | memoryview, policy: Policy = FILE) -> tuple[Any, bool]:
    """(value, fast): `fast` means orjson read it, so it holds no NaN or infinity and no integer beyond
    64 bits (a writer that cannot represent those may then take its own fast path)."""
    return _read_noting(raw, policy, None)


def read_json_counting(raw: bytes, policy: Policy = FILE) -> tuple[Any, bool, TextCounts | None]:
    """read_json_noting_path, and what its bounds counted of the text (None: it counted nothing, a short
    text read by orjson straight away): a reader adding counts up over a file's windows (kit/windows)
    then scans no window twice."""
    counted: list[TextCounts] = []
    value, fast = _read_noting(raw, policy, counted)
    return value, fast, counted[0] if counted else None


def _read_noting(raw: bytes | bytearray | memoryview, policy: Policy, counted: list[TextCounts] | None,
                 ) -> tuple[Any, bool]:
    if type(raw) is not bytes:
        raw = bytes(raw)
    if len(raw) <= MIN_CONTAINERS and policy.duplicates == "allow":
        # a short text (a line, most replies) is under the container bound whatever it holds, and builds
        # too little for the collector to matter: orjson straight away, the full path if it refuses
        brackets = raw.count(b"[") + raw.count(b"{")
        if brackets <= policy.max_depth and not raw.startswith(BOM) and not may_hold_wide_int(raw):
            try:
                return orjson.loads(raw), True
            except orjson.JSONDecodeError:
                pass
    collecting = gc.isenabled()
    gc.disable()  # parsed JSON holds no cycles: collecting while millions of objects appear is wasted time
    try:
        return _read(raw, policy, counted)
    finally:
        if collecting:
            gc.enable()


def _read(raw: bytes, policy: Policy, counted: list[TextCounts] | None = None) -> tuple[Any, bool]:
    if raw.startswith(BOM):
        raise JsonRejected("bom", "a byte order mark precedes the JSON text (RFC 8259 §8.1)", offset=0,
                           received="EF BB BF")
    dense = dense_shape(raw)  # one pass over the text for every scan; the counts then run on far fewer bytes
    marks = dense.translate(None, _NOT_MARKS)
    counts = MarkCounts.of(marks)
    brackets = counts.objects + counts.arrays
    check_containers(raw, policy.max_depth, brackets)
    ascii = raw.isascii()
    wide = 0 if ascii else len(marks) - len(marks.translate(None, _ASTRAL_LEADS))
    check_memory(raw, marks, counts, (ascii, wide))
    if counted is not None:
        counted.append(TextCounts(counts, ascii, wide))
    wide_ints = holds_wide_int(dense)
    del dense  # the shapes are gone before the parse builds its objects: they add nothing to the peak
    if policy.duplicates == "allow" and not wide_ints:
        shallow = brackets <= policy.max_depth or (
            len(raw) >= DEPTH_PROOF_FROM and nests_within(raw, marks, policy.max_depth, counts.quotes))
        del marks
        value = _fast(raw, ORJSON_DEPTH if shallow else policy.max_depth)
        if value is not _REFUSED:
            return value, True
    return _stdlib(raw, policy), False


@dataclass(frozen=True)
class TextCounts:
    """What the bounds counted of a text: its marks, whether it is ASCII, how many characters past U+FFFF."""

    marks: MarkCounts
    ascii: bool
    wide: int


@dataclass(frozen=True)
class MarkCounts:
    """How many `{`, `[`, `"` and `,` a text holds (strings included), each counted once for every scan."""

    objects: int
    arrays: int
    quotes: int
    commas: int

    @classmethod
    def of(cls, marks: bytes) -> MarkCounts:
        return cls(marks.count(b"{"), marks.count(b"["), marks.count(b'"'), marks.count(b","))


def nests_within(raw: bytes, marks: bytes, limit: int, quotes: int | None = None) -> bool:
    """Is the text proved to nest arrays and objects no deeper than `limit`? Then orjson's own bound
    needs no wrapping (no copy of the text). `marks`: the text's quotes and brackets, among others;
    `quotes`: how many `"` it holds, when counted already.
    A proof only for a text without backslashes (so every quote opens or closes a string) whose
    strings hold no bracket, nesting at most SHALLOW_PASSES deep; False says only "not proved".
    Among the quotes and brackets alone, every string is two adjacent quotes when it holds no bracket:
    counting `""` left to right pairs the first quote with the second, the third with the fourth...,
    so all quotes are in such pairs exactly when no string holds a bracket. The brackets are then the
    structure, and each pass removing `[]` takes away one level: empty after as many passes as it nests."""
    if b"\\" in raw:
        return False
    quotes_and_brackets = marks.translate(None, _NOT_QUOTES_OR_BRACKETS)
    if 2 * quotes_and_brackets.count(b'""') != (marks.count(b'"') if quotes is None else quotes):
        return False
    structure = quotes_and_brackets.translate(_OPENERS_AS_ONE, b'"')
    for _ in range(min(limit, SHALLOW_PASSES)):
        if not structure:
            return True
        structure = structure.replace(b"[]", b"")
    return not structure


def check_containers(raw: bytes, max_depth: int, brackets: int) -> None:
    """Refuse, before parsing, a text with more arrays and objects than its size allows (a text that
    is plainly nested too deep is refused for that: the root cause of most such counts). Brackets are
    counted again outside strings whenever the plain count passes one per CONTAINER_BYTES bytes, at
    any size, so the cost per byte does not jump at a size threshold."""
    if brackets * CONTAINER_BYTES <= len(raw):
        return
    allowed = max(MIN_CONTAINERS, len(raw) // CONTAINER_BYTES)
    outside, _ = structure_outside_strings(raw)  # brackets inside strings build nothing
    found = outside.count(b"[") + outside.count(b"{")
    if found > allowed:
        openers = outside.translate(None, _NOT_BRACKETS).replace(b"{", b"[")
        if b"[" * (max_depth + 1) in openers:
            raise _too_deep(raw, max_depth)
        raise JsonRejected("containers", f"{found} arrays and objects in {len(raw)} bytes: more than the "
                           f"{allowed} the reader builds (one per {CONTAINER_BYTES} bytes) for a text this size",
                           received=f"{found} arrays and objects")


def memory_bound(length: int) -> int:
    """The most bytes of Python objects the reader builds for a text of `length` bytes."""
    return MEMORY_FACTOR * length + MEMORY_FLOOR


def structure_outside_strings(raw: bytes) -> tuple[bytes, int]:
    """(the brackets and commas outside strings, in order; the number of strings). Linear, and bounded
    in memory (a few copies of the text at most, never an object per string): escapes are removed
    first (a `\\\\` pair, then `\\"`: left to right, as a JSON string reads them), so every quote left
    opens or closes a string; the quotes and marks are then cut out slice by slice, carrying whether
    a slice begins inside a string."""
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = plain.translate(None, _NOT_STRUCTURE)
    del plain
    strings = (marks.count(b'"') + 1) // 2
    outside: list[bytes] = []
    inside = False
    for start in range(0, len(marks), OUTSIDE_SLICE):
        piece = marks[start:start + OUTSIDE_SLICE]
        outside.append(_QUOTED.sub(b"", b'"' + piece if inside else piece))
        inside ^= piece.count(b'"') % 2 == 1
    return b"".join(outside), strings


def estimated_memory(objects: int, arrays: int, strings: int, commas: int, wide: int, length: int,
                     ascii: bool) -> int:
    """An upper bound of the bytes of Python objects a text of `length` bytes builds, from its counts
    alone. Measured costs on CPython 3.11, rounded up: an object 184 bytes with its first members (more
    members are counted by their commas), an array 56, a string 49 plus its characters, each further
    value or member 8 for its slot and 32 for a number or a dict entry. A character takes one byte in
    an ASCII text, at most two where no character is past U+FFFF (`wide`: how many are), else four
    (one such character widens its whole string)."""
    per_char = 1 if ascii else 2 if not wide else 4
    return 200 * objects + 72 * arrays + 60 * strings + 40 * commas + per_char * length


def check_memory(raw: bytes, marks: bytes, counts: MarkCounts | None = None,
                 shape: tuple[bool, int] | None = None) -> None:
    """Refuse, before parsing, a text that would build more than `memory_bound` bytes of objects: many
    short strings, one-letter keys or small objects cost far more as Python objects than as text.
    `marks`: the text's `"[{,` characters and lead bytes of 4-byte UTF-8 sequences. This first estimate
    counts characters inside strings too (and escaped quotes as strings); only a text over the bound by
    it is counted again outside strings, so a string full of quotes and commas is never refused for them.
    `shape`: (the text is ASCII, its characters past U+FFFF), when the caller counted them already."""
    bound = memory_bound(len(raw))
    if shape is not None:  # (ascii, wide) as the caller found them
        ascii, wide = shape
    else:
        ascii = raw.isascii()
        wide = 0 if ascii else len(marks) - len(marks.translate(None, _ASTRAL_LEADS))
    counts = counts or MarkCounts.of(marks)
    rough = estimated_memory(counts.objects, counts.arrays, (counts.quotes + 1) // 2, counts.commas, wide,
                             len(raw), ascii)
    if rough <= bound:
        return
    outside, strings = structure_outside_strings(raw)
    objects, arrays, commas = outside.count(b"{"), outside.count(b"["), outside.count(b",")
    estimate = estimated_memory(objects, arrays, strings, commas, wide, len(raw), ascii)
    if estimate > bound:
        raise JsonRejected("memory", f"{len(raw)} bytes of JSON that would take about {estimate >> 20} MiB as "
                           f"objects ({strings} strings, {commas} commas, {objects + arrays} arrays and "
                           f"objects): more than the {bound >> 20} MiB the reader builds for a text this size "
                           f"({MEMORY_FACTOR} bytes per byte and {MEMORY_FLOOR >> 20} MiB)",
                           received=f"about {estimate >> 20} MiB")


def has_digit_run(raw: bytes, length: int) -> bool:
    """Does the text hold `length` digits in a row? At memory speed: a translate and a substring search
    (a regular expression tries every position, several times slower than orjson's whole parse)."""
    return b"0" * length in raw.translate(_DIGITS_AS_ZERO)


def dense_shape(raw: bytes) -> bytes:
    """The text's digits (as "0"), marks and number neighbours, in order; see _NOT_DENSE."""
    return raw.translate(_DIGITS_AS_ZERO_ONLY, _NOT_DENSE)


RUNS_ONE_BY_ONE = 32  # runs holds_wide_int looks at in turn before it searches only where a number can begin


def holds_wide_int(dense: bytes) -> bool:
    """may_hold_wide_int on the dense shape of a text (dense_shape): a run of 19 "0"s or more after
    `[`, `,`, `:` or the start (and an optional minus), before `,`, `]`, `}` or the end; a positive one of
    20 or more. A search from where no run is under way finds a run at its first byte, so each run is
    looked at once. Past RUNS_ONE_BY_ONE runs (digits in strings: long ids, numbered text) only the runs
    right after a mark a number can follow are looked at, found by a search for each mark (one Python
    step a run cost 3 ms in a MiB of such text, the four searches 0.9 ms)."""
    at = dense.find(_NINETEEN_DIGITS)
    looked = 0
    while at >= 0:
        if looked == RUNS_ONE_BY_ONE:
            return _wide_after_marks(dense, at)
        looked += 1
        wide, end = _wide_run_at(dense, at)
        if wide:
            return True
        at = dense.find(_NINETEEN_DIGITS, end)
    return False


def _wide_run_at(dense: bytes, at: int) -> tuple[bool, int]:
    """(the run of "0"s beginning at `at` is an integer orjson would read as a float, where the run ends)."""
    end = _ZEROS.match(dense, at).end()  # type: ignore[union-attr]  # a match: dense[at] is "0"
    negative = dense[at - 1:at] == b"-"
    before = at - 1 - negative
    return ((before < 0 or dense[before] in _NUMBER_BEFORE) and (end == len(dense) or dense[end] in _NUMBER_AFTER)
            and (negative or end - at >= 20)), end


_RUN_AFTER = tuple(mark + _NINETEEN_DIGITS for mark in (b"[", b",", b":", b"-"))


def _wide_after_marks(dense: bytes, start: int) -> bool:
    """holds_wide_int for the runs beginning at `start` or later (`start` begins one), by the runs that
    follow `[`, `,`, `:` or `-` (a run after the start of the text begins before `start`)."""
    for needle in _RUN_AFTER:
        at = dense.find(needle, start - 1)
        while at >= 0:
            if _wide_run_at(dense, at + 1)[0]:
                return True
            at = dense.find(needle, at + 1)
    return False


def may_hold_wide_int(raw: bytes) -> bool:
    """An integer token orjson would read as a float: a run of 19 digits (every 19-digit positive
    integer fits 64 bits, a negative one may not) that stands where a JSON number can, after `[`, `,`,
    `:`, white space or the start (and an optional minus), and ends before `,`, `]`, `}`, white space
    or the end. Runs inside strings (hex digests, base64) have letters or quotes around them and are
    passed over; a string that happens to hold such a run only costs the exact path. Linear: each run
    is looked at once."""
    return holds_wide_int(dense_shape(raw))


_REFUSED = object()
_wrappers: dict[int, tuple[bytes, bytes]] = {}


def _fast(raw: bytes, max_depth: int) -> Any:
    """orjson's reading with our depth bound, or _REFUSED (the stdlib path then says why)."""
    pad = ORJSON_DEPTH - max_depth
    if pad not in _wrappers:
        _wrappers[pad] = (b"[" * pad, b"]" * pad)
    head, tail = _wrappers[pad]
    try:
        value = orjson.loads(b"".join((head, raw, tail)) if pad else raw)  # one copy, not two
    except orjson.JSONDecodeError:
        return _REFUSED
    for _ in range(pad):  # one element at every level: else the text closed our arrays itself
        if type(value) is not list or len(value) != 1:
            return _REFUSED
        value = value[0]
    return value


# The strict reader a conforming implementation can use to refuse the hostile-JSON battery
# (kit/hostile.py): RFC 8259 with I-JSON's (RFC 7493) restrictions, read_json under STRICT.
MAX_DEPTH = STRICT.max_depth


class StrictJsonError(ValueError):
    pass


def depth_exceeds(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest deeper than `limit` (one linear pass, no recursion)."""
    return depth_passed_at(bytes(raw), limit) is not None


def strict_loads(raw: bytes | bytearray | str) -> Any:
    """Strict RFC 8259 / I-JSON: UTF-8 without BOM, no duplicate names, no NaN/Infinity, no lone
    surrogates, nesting at most MAX_DEPTH, numbers Python reads exactly or as finite floats
    (json_reader.STRICT)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    try:
        return read_json(raw, STRICT)
    except JsonRejected as exc:
        if exc.kind == "depth":
            raise StrictJsonError(f"nested deeper than {MAX_DEPTH} levels") from None
        if exc.kind == "bom":
            raise StrictJsonError("a byte order mark precedes the JSON text") from None
        raise StrictJsonError(exc.message[:200]) from None
