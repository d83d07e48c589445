"""EMP lines judged a block at a time: `block_is_clean` passes a block only when every line is a clean
entry under the same rules as the line-by-line scan, checked column by column over the block (one
pass of C per column: distinct values, type sets, joined strings). scan_file reads any other block
line by line, so a block that is not passed costs time, never a finding."""

from __future__ import annotations

import operator
from itertools import chain, repeat
from typing import Any

import orjson
from memconform.core.json_reader import LINE, MIN_CONTAINERS

from .forms import VERSION, VERSION_RE, src_is_reverse_domain

_VERSION, _ID, _TS, _SRC, _CONTENT = map(operator.itemgetter, ("v", "id", "ts", "src", "content"))
_HEX = b"0123456789abcdefABCDEF"
_UUID_WITH_NEWLINE = 37  # an id and the newline that joins it to the next
_ABSENT_LIST: list[Any] = []  # what an absent tags or emb reads as: nothing to check
_ABSENT_META: dict[str, Any] = {}


def block_is_clean(lines: list[bytes]) -> bool:
    """True only if every line reads, under the LINE policy, as an object that `line_is_clean` passes:
    the same rules, column by column over the block. False is no finding: the block is then read
    line by line. A missing field (KeyError), a line that is no object or a value of the wrong type
    (TypeError from the column's own operation) or a non-ASCII id end the pass with False.

    orjson reads an integer past 64 bits as a float where the LINE reader keeps it exact; no rule
    passes a float where it would pass that integer except `ts`, which must be an int here, so such a
    line is at worst sent to the exact reader, never passed wrongly (and 310 digits or more orjson
    refuses as infinite)."""
    if _needs_exact_reader(lines):
        return False
    try:  # orjson refuses what LINE refuses, and NaN, and a blank line (skipped by the line scan): those go slow
        entries = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return False
    try:
        return _required_fields_ok(entries) and _optional_fields_ok(entries)
    except (KeyError, TypeError, UnicodeEncodeError):
        return False


def _needs_exact_reader(lines: list[bytes]) -> bool:
    """May a line meet a bound of the LINE reader that orjson does not have? Its depth bound (orjson's
    own is deeper): only a line longer than the bound can hold more openers than it. Its container and
    memory bounds: a text of MIN_CONTAINERS bytes or fewer is under them whatever it holds (the reader
    gives it to orjson straight away). The longest line of a block says whether any line may."""
    longest, bound = max(map(len, lines)), LINE.max_depth
    return longest > MIN_CONTAINERS or longest > bound and any(
        line.count(b"[") + line.count(b"{") > bound for line in lines if len(line) > bound)


def _required_fields_ok(entries: list[Any]) -> bool:
    """v "MAJOR.MINOR", id a UUID v4, ts a non-negative int, src reverse domain, content a string not
    starting with "encrypted:" (which the line rule would look at), on every entry."""
    if not _versions_ok(set(map(_VERSION, entries))) or not _uuid4s("\n".join(map(_ID, entries)), len(entries)):
        return False
    stamps = list(map(_TS, entries))
    if set(map(type, stamps)) != {int} or min(stamps) < 0:
        return False
    if not all(type(src) is str and src_is_reverse_domain(src) for src in set(map(_SRC, entries))):
        return False
    return "encrypted:" not in "\n".join(map(_CONTENT, entries))


def _versions_ok(distinct: set[Any]) -> bool:
    return all(v == VERSION or (type(v) is str and VERSION_RE.match(v)) for v in distinct)


def _uuid4s(joined_ids: str, k: int) -> bool:
    """Does each of the k ids, joined by newlines, match UUID4_RE? Without its hex digits the text
    must be exactly "----" k times joined by newlines, and every fixed position (a newline after
    each 36 characters, the dashes, the version, the variant) is one stride slice of the whole."""
    joined = joined_ids.encode("ascii")
    step = _UUID_WITH_NEWLINE
    return (len(joined) == step * k - 1 and joined.translate(None, _HEX) == _dashes_and_newlines(k)
            and joined[36::step].count(b"\n") == k - 1 and all(joined[at::step].count(b"-") == k for at in (8, 13, 18, 23))
            and joined[14::step].count(b"4") == k and not joined[19::step].translate(None, b"89abAB"))


def _dashes_and_newlines(k: int) -> bytes:
    return b"----\n" * (k - 1) + b"----"


def _optional_fields_ok(entries: list[dict[str, Any]]) -> bool:
    """type a string, meta an object, tags lowercase strings, emb numbers, wherever present."""
    if not set(map(type, map(dict.get, entries, repeat("type"), repeat("")))) <= {str}:
        return False
    if not set(map(type, map(dict.get, entries, repeat("meta"), repeat(_ABSENT_META)))) <= {dict}:
        return False
    tags = list(map(dict.get, entries, repeat("tags"), repeat(_ABSENT_LIST)))
    embs = list(map(dict.get, entries, repeat("emb"), repeat(_ABSENT_LIST)))
    if set(map(type, tags)) != {list} or set(map(type, embs)) != {list}:
        return False
    joined = "\n".join(chain.from_iterable(tags))  # TypeError unless every tag is a string. str.lower maps
    # each character alone here (only Σ looks at its neighbours, and a tag holding Σ fails alone and joined alike)
    return joined == joined.lower() and set(map(type, chain.from_iterable(embs))) <= {float, int}
