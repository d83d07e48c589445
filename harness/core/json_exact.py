"""The exact reading of a JSON text, the strict reader's slow path (harness/core/json_reader.py): the
stdlib's parser with the caller's policy as hooks (refuse or mark NaN and integers over Python's
4,300-digit bound, refuse duplicate names or lone surrogates), the stdlib's words for syntax errors, and
the types both paths share (JsonRejected, Policy, the markers)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_INT_DIGITS = 4300  # Python's own bound on int <-> str conversion (sys.get_int_max_str_digits)
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)

class JsonRejected(ValueError):
    """Why a text was refused. `kind` names the rule; `offset` is a byte offset when one is known;
    `path` a JSON path when the refusal is about a parsed value; `received` what was seen there."""

    def __init__(self, kind: str, message: str, *, offset: int | None = None, path: str | None = None,
                 received: Any = None, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message  # a syntax error in the stdlib's own words
        self.kind = kind
        self.message = message
        self.offset = offset
        self.path = path
        self.received = received


@dataclass(frozen=True)
class Policy:
    """What a caller accepts beyond the common rules. `constants` and `huge_ints`: "refuse" or "mark"
    (a marker object in place, reported by path after the parse), `constants` also "allow" (read as
    Python's float, as the stdlib does); `duplicates` and `surrogates`:
    "refuse" or "allow" (the stdlib's reading: the last value wins, the lone surrogate kept);
    `infinite`: whether a number out of double range may read as infinity (the stdlib's reading)."""

    max_depth: int = 512
    constants: str = "refuse"
    huge_ints: str = "refuse"
    duplicates: str = "allow"
    surrogates: str = "allow"
    infinite: bool = True


REPLY = Policy(max_depth=200)  # no answer a spec describes nests near this; checks and validators recurse
FILE = Policy(max_depth=512, constants="mark", huge_ints="mark")
STRICT = Policy(max_depth=512, duplicates="refuse", surrogates="refuse", infinite=False)
LINE = Policy(max_depth=512, constants="allow")  # one line of a JSON Lines file (EMP): judged by its rules


class NonJsonNumber:
    """NaN, Infinity or -Infinity in the text (policy "mark"): Python reads them, JSON has no such numbers."""

    def __init__(self, text: str) -> None:
        self.text = text


class HugeInt:
    """An integer of more than MAX_INT_DIGITS digits (policy "mark"); only its length is kept."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _stdlib(raw: bytes, policy: Policy) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonRejected("utf-8", f"not UTF-8 at byte {exc.start} (RFC 8259 §8.1; UnicodeDecodeError: "
                           f"{exc.reason})", offset=exc.start,
                           received=raw[exc.start:exc.start + 8].hex(" ")) from None
    marks: list[str] = []
    hooks = _hooks(policy, marks)
    try:
        try:
            value = json.loads(text, **hooks)
        except ValueError as exc:
            if not _int_too_long(exc):
                raise
            if policy.huge_ints == "refuse":
                raise JsonRejected("huge-int", f"an integer of more than {MAX_INT_DIGITS} digits "
                                   "(RFC 8259 §6 lets a reader limit the range of numbers)") from None
            marks.append("huge-int")
            value = json.loads(text, parse_int=_int_or_mark, **hooks)
    except RecursionError:
        raise _too_deep(raw, policy.max_depth) from None
    except json.JSONDecodeError as exc:
        raise JsonRejected("syntax", f"not well-formed JSON: {exc.msg}", offset=len(text[:exc.pos].encode("utf-8")),
                           received=text[max(0, exc.pos - 40):exc.pos + 40], detail=str(exc)) from None
    except JsonRejected:
        raise
    except ValueError as exc:
        raise JsonRejected("syntax", str(exc)[:200], detail=str(exc)) from None
    _verify(value, policy, marks, raw)
    return value


def _hooks(policy: Policy, marks: list[str]) -> dict[str, Any]:
    hooks: dict[str, Any] = {}

    def constant(name: str) -> Any:
        if policy.constants == "refuse":
            raise JsonRejected("constant", f"{name} is not JSON (RFC 8259 §6 has no such number)", received=name)
        marks.append("constant")
        return NonJsonNumber(name)

    if policy.constants != "allow":
        hooks["parse_constant"] = constant
    if not policy.infinite:
        hooks["parse_float"] = _finite
    if policy.duplicates == "refuse":
        hooks["object_pairs_hook"] = _no_duplicates
    return hooks


def _finite(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")):
        raise JsonRejected("range", f"number {token[:40]} is out of range", received=token[:40])
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonRejected("duplicate", f"duplicate name {key[:60]!r}", received=key[:60])
        out[key] = value
    return out


def _int_too_long(exc: ValueError) -> bool:
    return "int_max_str_digits" in str(exc) or "integer string conversion" in str(exc)


def _int_or_mark(token: str) -> int | HugeInt:
    digits = len(token) - token.startswith("-")
    return int(token) if digits <= MAX_INT_DIGITS else HugeInt(digits)


def _verify(value: Any, policy: Policy, marks: list[str], raw: bytes) -> None:
    """After a stdlib parse: the depth bound, then (only when the parse marked something, or lone
    surrogates are refused) a NaN, huge integer or lone surrogate, named by its path."""
    if _deeper_than(value, policy.max_depth):
        raise _too_deep(raw, policy.max_depth)
    # a lone surrogate can only come from a \\u escape (UTF-8 bytes cannot encode one)
    refuse_surrogates = policy.surrogates == "refuse" and (b"\\ud" in raw or b"\\uD" in raw)
    if not (marks or refuse_surrogates):
        return
    for path, node in _nodes(value):
        if refuse_surrogates and isinstance(node, str) and _lone_surrogate(node):
            raise JsonRejected("surrogate", "a string holds a lone surrogate", path=path)
        if isinstance(node, HugeInt):
            raise JsonRejected("huge-int", f"an integer of {node.digits} digits: more than the {MAX_INT_DIGITS} "
                               "digits the harness reads (RFC 8259 §6 lets a reader limit the range of numbers)",
                               path=path, received=f"<{node.digits} digits>")
    if "constant" in marks:
        path, name = next(_non_json_numbers(value))
        more = f" (and {marks.count('constant') - 1} more)" if marks.count("constant") > 1 else ""
        raise JsonRejected("constant", f"{name} is not a JSON number (RFC 8259 §6){more}", path=path, received=name)


def _deeper_than(value: Any, limit: int) -> bool:
    """Do arrays and objects nest deeper than `limit`? One level at a time, containers only."""
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            below.extend([v for v in (node.values() if type(node) is dict else node) if type(v) in (dict, list)])
        level = below
    return False


def _nodes(value: Any) -> Any:
    """(path, node) of every value and every object key, depth first, last member first (run only when
    something is looked for). One iterator per level is held, and a path is written only for the node
    being looked at: a text of a million small values costs no million paths."""
    yield "$", value
    stack = [_below("$", value)]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        yield step
        path, node = step
        if isinstance(node, dict | list):
            stack.append(_below(path, node))


def _below(path: str, node: Any) -> Any:
    if isinstance(node, dict):
        for key in node:
            yield path, key
        for key, item in reversed(node.items()):
            yield f"{path}.{key}", item
    elif isinstance(node, list):
        for i in range(len(node) - 1, -1, -1):
            yield f"{path}[{i}]", node[i]


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _non_json_numbers(doc: Any) -> Any:
    for path, node in _nodes(doc):
        if isinstance(node, NonJsonNumber):
            yield path, node.text


def _too_deep(raw: bytes, limit: int) -> JsonRejected:
    return JsonRejected("depth", f"nested deeper than {limit} levels", offset=depth_passed_at(raw, limit),
                        received=f"more than {limit} levels")


def depth_passed_at(raw: bytes, limit: int) -> int | None:
    """Byte offset where brackets outside strings first nest deeper than `limit`, or None.
    Run only on a text already refused as too deep: one linear pass."""
    pos, depth, end = 0, 0, len(raw)
    while pos < end:
        byte = raw[pos]
        if byte == 0x22:
            match = _STRING.match(raw, pos)
            pos = match.end() if match else end
            continue
        if byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return pos
        elif byte in (0x5D, 0x7D):
            depth -= 1
        pos += 1
    return None
