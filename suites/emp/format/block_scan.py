"""EMP lines judged a block at a time: `block_is_clean` passes a block only when every line is a clean
entry under the same rules as the line-by-line scan, checked column by column over the block (type sets,
distinct values, one pass of C over all ids). scan_file reads any other block line by line."""

from __future__ import annotations

import operator
from itertools import chain, repeat
from typing import Any

import orjson
from memconform.json_reader import LINE

from .forms import REQUIRED, VERSION, VERSION_RE, src_is_reverse_domain

_HEX_AND_DASH = b"0123456789abcdefABCDEF-"
_REQUIRED_FIELDS = tuple(operator.itemgetter(name) for name in REQUIRED)
_NOTHING: tuple[()] = ()
_NO_META: dict[str, Any] = {}


def block_is_clean(lines: list[bytes]) -> bool:
    """True only if every line reads, under the LINE policy, as an object that `line_is_clean` passes:
    the same rules, column by column over the block (type sets, distinct values, one pass of C over
    all ids). False is no finding: the block is then read line by line.

    orjson reads an integer past 64 bits as a float where the LINE reader keeps it exact; no rule
    passes a float where it would pass that integer except `ts`, which must be an int here, so such a
    line is at worst sent to the exact reader, never passed wrongly (and 310 digits or more orjson
    refuses as infinite)."""
    if b"" in lines:
        return False
    if any(line.count(b"[") + line.count(b"{") > LINE.max_depth for line in lines if len(line) > LINE.max_depth):
        return False  # the reader's depth bound: orjson's own is deeper
    try:
        entries = list(map(orjson.loads, lines))  # orjson refuses what LINE refuses, and NaN: those lines go slow
    except orjson.JSONDecodeError:
        return False
    try:  # a required field missing (KeyError), or a line that is no object (TypeError)
        versions, ids, stamps, sources, contents = (list(map(field, entries)) for field in _REQUIRED_FIELDS)
    except (KeyError, TypeError):
        return False
    return (_versions_ok(versions) and _uuid4s(ids) and set(map(type, stamps)) == {int} and min(stamps) >= 0
            and set(map(type, sources)) == {str} and all(map(src_is_reverse_domain, set(sources)))
            and set(map(type, contents)) == {str} and "encrypted:" not in "\n".join(contents)
            and _optional_fields_ok(entries))


def _versions_ok(versions: list[Any]) -> bool:
    try:
        distinct = set(versions)
    except TypeError:  # an array or object as v
        return False
    return all(v == VERSION or (type(v) is str and VERSION_RE.match(v)) for v in distinct)


def _uuid4s(ids: list[Any]) -> bool:
    """Does every id match UUID4_RE? Lengths and characters of all at once, then each fixed position
    as one stride slice of the joined ids."""
    if set(map(type, ids)) != {str} or set(map(len, ids)) != {36}:
        return False
    try:
        joined = "".join(ids).encode("ascii")
    except UnicodeEncodeError:
        return False
    k = len(ids)
    return (not joined.translate(None, _HEX_AND_DASH) and joined.count(b"-") == 4 * k
            and all(joined[at::36].count(b"-") == k for at in (8, 13, 18, 23))
            and joined[14::36].count(b"4") == k and not joined[19::36].translate(None, b"89abAB"))


def _optional_fields_ok(entries: list[dict[str, Any]]) -> bool:
    """type a string, meta an object, tags lowercase strings, emb numbers, wherever present."""
    if not set(map(type, map(dict.get, entries, repeat("type"), repeat("")))) <= {str}:
        return False
    if not set(map(type, map(dict.get, entries, repeat("meta"), repeat(_NO_META)))) <= {dict}:
        return False
    tags = list(map(dict.get, entries, repeat("tags"), repeat(_NOTHING)))
    embs = list(map(dict.get, entries, repeat("emb"), repeat(_NOTHING)))
    if not set(map(type, tags)) <= {list, tuple} or not set(map(type, embs)) <= {list, tuple}:
        return False  # a tuple is only the stand-in for an absent field: JSON gives lists
    all_tags = list(chain.from_iterable(tags))
    if not set(map(type, all_tags)) <= {str}:
        return False
    joined = "\n".join(all_tags)  # str.lower maps each character alone here (only Σ looks at its
    # neighbours, and a tag holding Σ fails alone and joined alike)
    return joined == joined.lower() and set(map(type, chain.from_iterable(embs))) <= {float, int}
