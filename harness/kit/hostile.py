"""The hostile-JSON battery: bad inputs, as bytes, for any surface that accepts a JSON document.

`battery(make)` takes a factory `make(marker) -> a valid document holding marker in a string` and
returns at least 150 `BadInput`s, each built from its own fresh valid document, so the marker of
every input is unique and an input that was stored can be found in a later export. Categories:
duplicate keys, lone surrogates, byte order marks and other encodings, invalid UTF-8, nesting
10,000 and 100,000 deep, NaN and Infinity, huge integers and exponents, trailing commas, empty
bodies, truncations, wrong top-level types, syntax mutations of the valid example, seeded byte
mutations of it, and (HTTP only) a valid body under a wrong content type.

`must_reject` says whether refusing is the only conforming answer: True where the bytes are not
JSON (RFC 8259 grammar, UTF-8 required), or the document is not the kind asked for (wrong
top-level type). Where RFC 8259 leaves the outcome open and only I-JSON (RFC 7493) forbids it
(duplicate names, an escaped lone surrogate), `i_json_only` is set: refusing is memconform's advice,
required only when a run pins I-JSON (`run_battery(..., i_json=True)`); otherwise what the target
did with it is a note. A lone surrogate as CESU-8 bytes is not UTF-8: must_reject. False where a
reader may accept: a UTF-8 byte order mark ("MAY ignore
the presence of a byte order mark"), numbers beyond a reader's range (RFC 8259 section 6 lets it set
limits), valid JSON nested 10,000 deep or more (section 9 lets it limit the depth), a wrong
Content-Type. Those are recorded, and only a crash or a hang fails on them.

`strict_loads` (core/json_reader.py, re-exported here) is the reader a conforming implementation can use
to refuse every must_reject input; the embedded references use it through `parse_or_reject`.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.json_reader import BOM, MAX_DEPTH, StrictJsonError, depth_exceeds, strict_loads

__all__ = ["BOM", "MAX_DEPTH", "MIN_PER_SURFACE", "BadInput", "StrictJsonError", "battery", "depth_exceeds",
           "one_of_each", "parse_or_reject", "sample", "strict_loads"]

MIN_PER_SURFACE = 150


@dataclass(frozen=True)
class BadInput:
    name: str
    category: str
    data: bytes
    marker: str
    must_reject: bool = True
    content_type: str | None = None  # HTTP: send the bytes under this Content-Type
    i_json_only: bool = False  # RFC 8259 allows it, I-JSON (RFC 7493) forbids it: refusal required only under I-JSON


# ---- building the battery ----------------------------------------------------------------------

_PH = "\u0000memconform-ph-{}\u0000"


def _ph(n: int) -> str:
    return _PH.format(n)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _splice(value: Any, tokens: dict[str, bytes]) -> bytes:
    """Serialize `value`, then put raw bytes where placeholder strings stand (a whole "..." value or key)."""
    data = _dumps(value)
    for ph, raw in tokens.items():
        quoted = json.dumps(ph, ensure_ascii=False).encode("utf-8")
        data = data.replace(quoted, raw)
    return data


def _paths(value: Any, path: tuple[Any, ...] = (), limit: int = 400) -> Iterator[tuple[tuple[Any, ...], Any]]:
    todo = [(path, value)]
    seen = 0
    while todo and seen < limit:
        p, v = todo.pop(0)
        seen += 1
        yield p, v
        if isinstance(v, dict):
            todo.extend((p + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            todo.extend((p + (i,), x) for i, x in enumerate(v))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


class _Maker:
    """Fresh valid documents, each holding its own marker; the path to the marker's string."""

    def __init__(self, make: Callable[[str], Any], prefix: str) -> None:
        self.make, self.prefix, self.n = make, prefix, 0

    def fresh(self) -> tuple[Any, str, tuple[Any, ...]]:
        self.n += 1
        marker = f"{self.prefix}-h{self.n:03d}"
        doc = self.make(marker)
        for path, v in _paths(doc):
            if isinstance(v, str) and marker in v:
                return doc, marker, path
        raise ValueError("the battery's factory must put the marker into a string of the document")


def _objects(doc: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [(p, v) for p, v in _paths(doc) if isinstance(v, dict) and v]


def _numbers(doc: Any) -> list[tuple[Any, ...]]:
    return [p for p, v in _paths(doc) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _add_member(doc: Any, value: Any) -> None:
    if isinstance(doc, dict):
        doc["memconform-probe"] = value
    elif isinstance(doc, list):
        doc.append(value)


def _conflicting(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (the other value)"
    if value is None:
        return "not null"
    return copy.deepcopy(value)


def battery(make: Callable[[str], Any], prefix: str, http: bool = False, seed: int = 20260528) -> list[BadInput]:
    """The bad inputs for one JSON surface; `prefix` makes the markers unique to the run."""
    m = _Maker(make, prefix)
    out: list[BadInput] = []
    dropped: list[str] = []

    def add(name: str, category: str, data: bytes, marker: str, must_reject: bool = True, **kw: Any) -> None:
        item = BadInput(f"{category}: {name}", category, data, marker, must_reject, **kw)
        if _still_json(item):
            dropped.append(item.name)
        else:
            out.append(item)

    # duplicate names: every object's first keys, the copy before and after, with a conflicting value
    probe, _, _ = m.fresh()
    spots = [(p, k) for p, obj in _objects(probe) for k in list(obj)[:6]][:16]
    for where in ("after", "before"):
        for obj_path, key in spots:
            doc, marker, _ = m.fresh()
            obj = _get(doc, obj_path)
            ph = _ph(0)
            items = list(obj.items())
            dup = (ph, _conflicting(obj[key]))
            i = [k for k, _ in items].index(key)
            items.insert(i + 1 if where == "after" else i, dup)
            doc = _set(doc, obj_path, dict(items))
            add(f"{'/'.join(map(str, obj_path + (key,)))} repeated {where}", "duplicate-key",
                _splice(doc, {ph: json.dumps(key, ensure_ascii=False).encode()}), marker, must_reject=False,
                i_json_only=True)

    # lone surrogates, escaped and as CESU-8 bytes, in a value and in a key
    for name, token in (("\\ud800", b"\\ud800"), ("\\udfff", b"\\udfff"), ("reversed pair", b"\\udc00\\ud800"),
                        ("high then letter", b"\\ud83dA"), ("low alone", b"\\udc41"), ("CESU-8 bytes", b"\xed\xa0\x80")):
        doc, marker, path = m.fresh()
        ph = _ph(1)
        _set(doc, path, _get(doc, path) + ph)
        data = _splice(doc, {})
        data = data.replace(json.dumps(ph, ensure_ascii=False).encode()[1:-1], token)
        escaped = token.startswith(b"\\")  # an escape RFC 8259 lets through; raw CESU-8 bytes are not UTF-8
        add(f"{name} in a string", "lone-surrogate", data, marker, must_reject=not escaped, i_json_only=escaped)
    doc, marker, _ = m.fresh()
    if isinstance(doc, dict):
        doc[f"{marker}-{_ph(2)}"] = 1
        data = _dumps(doc).replace(json.dumps(_ph(2), ensure_ascii=False).encode()[1:-1], b"\\ud800")
        add("\\ud800 in a name", "lone-surrogate", data, marker, must_reject=False, i_json_only=True)

    # byte order marks and other encodings
    doc, marker, _ = m.fresh()
    add("UTF-8 BOM (a reader MAY ignore it)", "bom", BOM + _dumps(doc), marker, must_reject=False)
    for enc, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")):
        doc, marker, _ = m.fresh()
        add(f"{enc} with BOM", "encoding", bom + json.dumps(doc, ensure_ascii=False).encode(enc), marker)
    doc, marker, _ = m.fresh()
    add("utf-16-le without BOM", "encoding", json.dumps(doc).encode("utf-16-le"), marker)
    doc, marker, _ = m.fresh()
    add("two BOMs", "bom", BOM + BOM + _dumps(doc), marker)

    # invalid UTF-8 inside the marker's string
    for name, token in (("0xff", b"\xff"), ("0xfe", b"\xfe"), ("overlong /", b"\xc0\xaf"), ("overlong 3-byte", b"\xe0\x80\xaf"),
                        ("beyond U+10FFFF", b"\xf4\x90\x80\x80"), ("truncated 2-byte", b"\xc3"), ("lone continuation", b"\x80"),
                        ("5-byte form", b"\xf8\x88\x80\x80\x80"), ("latin-1 e-acute", b"\xe9"), ("truncated 4-byte", b"\xf0\x9f\xa7")):
        doc, marker, path = m.fresh()
        data = _dumps(doc).replace(marker.encode(), marker.encode() + token, 1)
        add(name, "invalid-utf8", data, marker)

    # nesting
    for name, opener, closer, depth in (("arrays 10,000 deep", b"[", b"]", 10_000), ("objects 10,000 deep", b'{"a":', b"}", 10_000),
                                        ("arrays 100,000 deep", b"[", b"]", 100_000)):
        doc, marker, _ = m.fresh()
        _add_member(doc, _ph(3))
        # valid JSON: RFC 8259 section 9 lets a reader limit the depth, so refusing is advice, storing is allowed
        add(name, "deep-nesting", _splice(doc, {_ph(3): opener * depth + b"1" + closer * depth}), marker, must_reject=False)
    doc, marker, _ = m.fresh()
    add("10,000 unclosed brackets", "deep-nesting", b"[" * 10_000 + _dumps(doc), marker)

    # NaN and Infinity, and numbers JSON does not have, where the document has a number (else a new member)
    for token in (b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf", b"+1", b"01", b"1.", b".5", b"0x10", b"1e", b"-", b"--1", b"1_000"):
        doc, marker, _ = m.fresh()
        numbers = _numbers(doc)
        if numbers:
            doc = _set(doc, numbers[0], _ph(4))
        else:
            _add_member(doc, _ph(4))
        add(token.decode(), "not-a-json-number", _splice(doc, {_ph(4): token}), marker)

    # huge numbers: valid JSON a reader may refuse (RFC 8259 section 6); never a crash
    for name, token in (("10**400", b"1" + b"0" * 400), ("5,000 digits", b"9" * 5000), ("50,000 digits", b"7" * 50_000),
                        ("1e999999", b"1e999999"), ("-1e999999", b"-1e999999"), ("1e-999999", b"1e-999999"),
                        ("1E+400", b"1E+400"), ("2**53+1", b"9007199254740993"), ("long fraction", b"0." + b"1" * 2000)):
        doc, marker, _ = m.fresh()
        numbers = _numbers(doc)
        if numbers:
            doc = _set(doc, numbers[-1], _ph(5))
        else:
            _add_member(doc, _ph(5))
        add(name, "huge-number", _splice(doc, {_ph(5): token}), marker, must_reject=False)

    # trailing and stray commas
    for name, fix in (("after the last member", lambda d: d[:-1] + b",}"), ("double comma", lambda d: d.replace(b", ", b",, ", 1)),
                      ("leading comma", lambda d: d[:1] + b"," + d[1:]), ("after the document", lambda d: d + b","),
                      ("in the first array", lambda d: d.replace(b"]", b",]", 1))):
        doc, marker, _ = m.fresh()
        data = _dumps(doc)
        changed = fix(data)
        if changed != data:
            add(name, "trailing-comma", changed, marker)

    # empty bodies (no marker to find: nothing can be stored under one)
    for name, data in (("nothing", b""), ("a space", b" "), ("newlines and tabs", b"\n\t\r\n"), ("a NUL byte", b"\x00"), ("BOM only", BOM)):
        add(name, "empty", data, f"{prefix}-empty")

    # truncations of a valid document
    doc, marker, _ = m.fresh()
    full = _dumps(doc)
    cuts = sorted({1, 2, len(full) // 10, len(full) // 4, len(full) // 3, len(full) // 2, 2 * len(full) // 3,
                   3 * len(full) // 4, 9 * len(full) // 10, len(full) - 2, len(full) - 1})
    for cut in cuts:
        if 0 < cut < len(full):
            doc, marker, _ = m.fresh()
            data = _dumps(doc)
            add(f"cut at {cut} of {len(data)} bytes", "truncation", data[: min(cut, len(data) - 1)], marker)

    # wrong top-level types
    for name, wrap in (("an array of it", lambda d: [d]), ("an empty array", lambda d: []), ("a string of it", lambda d: _dumps(d).decode()),
                       ("a number", lambda d: 0), ("true", lambda d: True), ("null", lambda d: None), ("an empty object", lambda d: {}),
                       ("wrapped in an object", lambda d: {"document": d})):
        doc, marker, _ = m.fresh()
        value = wrap(doc)
        if value != doc:
            add(name, "wrong-top-level", _dumps(value), marker)

    # syntax mutations of the valid example
    def mutations(data: bytes, marker: str, whole: bytes = b'""') -> list[tuple[str, bytes]]:
        mk = marker.encode()
        return [
            ("single-quoted strings", data.replace(b'"', b"'")),
            ("unquoted first name", data.replace(b'"', b"", 2)),
            ("line comment", b"// memconform\n" + data), ("block comment", data[:1] + b"/* memconform */" + data[1:]),
            ("trailing garbage", data + b"x"), ("a second document", data + b"{}"), ("NUL after the document", data + b"\x00"),
            ("raw NUL in a string", data.replace(mk, mk + b"\x00", 1)), ("raw newline in a string", data.replace(mk, mk + b"\n", 1)),
            ("raw tab in a string", data.replace(mk, mk + b"\t", 1)), ("raw 0x1f in a string", data.replace(mk, mk + b"\x1f", 1)),
            ("escape \\x41", data.replace(mk, mk + b"\\x41", 1)), ("short \\u12", data.replace(mk, mk + b"\\u12", 1)),
            ("escape \\u00zz", data.replace(mk, mk + b"\\u00zz", 1)), ("escape \\'", data.replace(mk, mk + b"\\'", 1)),
            ("lone backslash at the end of a string", data.replace(whole, whole[:-1] + b'\\"', 1)),
            ("= for :", data.replace(b'":', b'"=', 1)), ("no colon", data.replace(b'": ', b'" ', 1)),
            ("no comma between members", data.replace(b', "', b' "', 1)), ("extra closing brace", data + b"}"),
            ("closing bracket mismatched", data[:-1] + (b"]" if data.endswith(b"}") else b"}")),
            ("unterminated string", data.replace(whole, whole[:-1], 1)), ("Python True", data.replace(b"true", b"True", 1) if b"true" in data else data.replace(b": ", b": True, \"x\": ", 1)),
            ("Python None", data.replace(b"null", b"None", 1) if b"null" in data else data.replace(b": ", b": None, \"y\": ", 1)),
            ("undefined", data.replace(b": ", b": undefined, \"z\": ", 1)), ("hex escape in a name", data.replace(b'"', b'"\\x', 1)),
            ("missing opening brace", data[1:]), ("missing closing brace", data[:-1]),
        ]

    count = len(mutations(b"{}", "x"))
    for i in range(count):
        doc, marker, path = m.fresh()
        name, data = mutations(_dumps(doc), marker, json.dumps(_get(doc, path), ensure_ascii=False).encode())[i]
        add(name, "syntax", data, marker)

    # seeded byte mutations of the valid example that leave it not JSON
    rng = random.Random(seed)
    tries = 0
    while (len(out) < MIN_PER_SURFACE + 10 or sum(b.category == "byte-mutation" for b in out) < 24) and tries < 2000:
        tries += 1
        doc, marker, _ = m.fresh()
        buf = bytearray(_dumps(doc))
        at = rng.randrange(len(buf))
        op = rng.choice(("delete", "insert", "flip"))
        if op == "delete":
            del buf[at]
        elif op == "insert":
            buf.insert(at, rng.choice(b'{}[],:"\\'))
        else:
            buf[at] = rng.choice((0xFF, 0x00, 0x7B, 0x22, 0x5C))
        try:
            strict_loads(bytes(buf))
            continue  # still JSON: not a bad input
        except StrictJsonError:
            add(f"{op} at byte {at}", "byte-mutation", bytes(buf), marker)

    if http:  # a valid body under a wrong content type: recorded, refusing is not required by JSON
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data", ""):
            doc, marker, _ = m.fresh()
            add(f"Content-Type {ctype or '(none)'}", "content-type", _dumps(doc), marker, must_reject=False, content_type=ctype)
    battery.dropped = dropped  # type: ignore[attr-defined]  # for the generator's own test
    return out


def _still_json(item: BadInput) -> bool:
    """A must-reject input that a strict reader accepts is a generator slip (a replace that matched
    nothing): dropped, so the battery never demands the refusal of a valid document."""
    if not (item.must_reject or item.i_json_only) or item.category == "wrong-top-level":
        return False
    try:
        strict_loads(item.data)
    except StrictJsonError:
        return False
    return True


def sample(inputs: list[BadInput], size: int, seed: int = 20260528) -> list[BadInput]:
    """A deterministic sample that keeps every category (the ci profile's bounded battery)."""
    if size >= len(inputs):
        return list(inputs)
    by_category: dict[str, list[BadInput]] = {}
    for item in inputs:
        by_category.setdefault(item.category, []).append(item)
    rng = random.Random(seed)
    chosen = [items[0] for items in by_category.values()]
    rest = [i for i in inputs if i not in chosen]
    rng.shuffle(rest)
    picked = {id(i) for i in chosen + rest[: max(0, size - len(chosen))]}
    return [i for i in inputs if id(i) in picked]


def kind(item: BadInput) -> tuple[str, bool, bool, bool]:
    """What a target's answer to an input is judged by: its category and what it must get (refused, allowed
    under RFC 8259 only, allowed) and whether it goes under a content type of its own."""
    return item.category, item.must_reject, item.i_json_only, item.content_type is not None


def one_of_each(inputs: list[BadInput]) -> list[BadInput]:
    """The first input of every kind, in order: the battery's classes each sent once (a sweep's ci plan)."""
    seen: set[tuple[str, bool, bool, bool]] = set()
    out = []
    for item in inputs:
        if kind(item) not in seen:
            seen.add(kind(item))
            out.append(item)
    return out


def parse_or_reject(body: Any) -> Any:
    """For an in-process implementation handed raw bytes: parsed by `strict_loads`, or refused."""
    if not isinstance(body, (bytes, bytearray)):
        return body
    from ..targets.base import Rejected

    try:
        return strict_loads(body)
    except StrictJsonError as exc:
        raise Rejected({"error": f"not acceptable JSON: {exc}"}, f"not acceptable JSON: {exc}") from None
