"""§6 "Bundles MUST NOT include API keys, audit logs, or other credentials": what counts as one.

A key is judged by its words (split on `_`, `-`, `.`, spaces and camelCase), so every spelling
of a secret field is found (`openai_api_key`, `githubToken`, `session_cookie`, `x_audit_log`, a
top-level `audit` section) while counters such as `max_tokens` or `token_count` are not.
A value is a credential when it has the shape of a well-known token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain, repeat
from typing import Any

from memconform.core.results import Failure
from memconform.kit.shared_rules import SECRET_VALUE, VALUE_MARKERS, audit_key, secret_key

# the one list of what a credential looks like, shared by every suite (harness/kit/shared_rules.py)
CREDENTIAL_VALUES = SECRET_VALUE


def credential_key(key: str) -> bool:
    """Does a field name say it holds a credential or an audit log?"""
    return secret_key(key) or audit_key(key)


_AKIA_TAIL = re.compile(r"[0-9A-Z]{16}")


def scan(value: Any, path: str) -> Iterator[Failure]:
    """The precise walk: every credential-named field with a value, and every token-shaped string."""
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}"
            if isinstance(key, str) and credential_key(key) and item not in (None, "", [], {}, False, 0):
                yield Failure(f"bundle carries a credential or audit field {key!r}", "<redacted>", "no credentials or audit logs", sub)
            else:
                yield from scan(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from scan(item, f"{path}[{i}]")
    elif isinstance(value, str) and len(value) < 100_000 and CREDENTIAL_VALUES.search(value):
        yield Failure("bundle carries what looks like a secret token", "<redacted>", "no credentials", path)


def keys_and_strings(doc: dict[str, Any]) -> tuple[set[Any], list[str]]:
    """Every dict key of a bundle, and every string the walk (`scan`) reads: all of them but the chunks'
    embeddings (base64 noise the walk skips). Gathered a field at a time over all chunks, then a level at
    a time, each column kept apart (one field's values are mostly of one kind), so the loops run in C:
    no serialisation, no Python call per node."""
    keys: set[Any] = set()
    strings: list[str] = []
    dicts: list[list[Any]] = []  # columns of dicts to read the keys and values of, next
    lists: list[list[Any]] = []  # columns of lists to read the items of, next
    for key, value in doc.items():
        keys.add(key)
        if key == "chunks" and type(value) is list:
            chunks = [c for c in value if type(c) is dict]
            _sort([c for c in value if type(c) is not dict], strings, dicts, lists)  # read whole, as the walk does
            fields = set().union(*chunks)
            keys |= fields
            fields.discard("embedding")
            for field in fields:
                _sort(list(map(dict.get, chunks, repeat(field), repeat(None))), strings, dicts, lists)
        else:
            _sort([value], strings, dicts, lists)
    while dicts or lists:
        columns = [[*chain.from_iterable(map(dict.values, column))] for column in dicts] + \
                  [[*chain.from_iterable(column)] for column in lists]
        for column in dicts:
            keys.update(chain.from_iterable(column))
        dicts, lists = [], []
        for column in columns:
            _sort(column, strings, dicts, lists)
    return keys, strings


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _sort(values: list[Any], strings: list[str], dicts: list[list[Any]], lists: list[list[Any]]) -> None:
    """Put each value with its kind: a string to be searched, a dict or a list to descend into (anything
    else the walk does not read). A column of one exact kind, the common case, goes whole."""
    kinds = set(map(type, values))
    if kinds <= _LEAVES:
        if str in kinds:
            strings += values if len(kinds) == 1 else [v for v in values if type(v) is str]
    elif kinds == {dict}:
        dicts.append(values)
    elif kinds == {list}:
        lists.append(values)
    else:
        strings += [v for v in values if isinstance(v, str)]
        dicts.append([v for v in values if isinstance(v, dict)])
        lists.append([v for v in values if isinstance(v, list)])


def value_marker_in(strings: list[str]) -> bool:
    """Could one of these strings hold a token? Every CREDENTIAL_VALUES match starts with one of the
    VALUE_MARKERS (or is AKIA and its tail), so a search for them over all the strings at once (joined
    by a character no marker holds) is a superset of the walk; the walk decides."""
    text = "\0".join(strings).encode("utf-8", "surrogatepass")  # the markers are ASCII: a byte search is faster
    if any(m in text for m in _MARKER_BYTES):
        return True
    at = text.find(b"AKIA")
    while at != -1:
        if _AKIA_TAIL_BYTES.match(text, at + 4):
            return True
        at = text.find(b"AKIA", at + 1)
    return False


_MARKER_BYTES = tuple(m.encode("ascii") for m in VALUE_MARKERS)
_AKIA_TAIL_BYTES = re.compile(_AKIA_TAIL.pattern.encode("ascii"))


def suspicious(doc: dict[str, Any]) -> bool:
    """The fast prefilter: False only when the walk cannot find anything."""
    keys, strings = keys_and_strings(doc)
    return any(credential_key(k) for k in keys if isinstance(k, str)) or value_marker_in(strings)
