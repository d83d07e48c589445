"""The dense shape (json_reader.dense_shape): one pass gives the marks every count runs on and the
digit runs the wide-integer scan looks at. Whatever the text, the marks are the text's own, and an
integer orjson would read as a float is never missed (a run inside a string may be looked at: that
only costs the exact path)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memconform.core.json_reader import (
    _NOT_MARKS,
    FILE,
    RUNS_ONE_BY_ONE,
    dense_shape,
    holds_wide_int,
    may_hold_wide_int,
    read_json_noting_path,
)

U64_MAX = 2**64 - 1
I64_MIN = -(2**63)


def orjson_reads_as_float(value: int) -> bool:
    return not I64_MIN <= value <= U64_MAX


@given(st.binary(max_size=400))
def test_marks_from_the_dense_shape_are_the_texts_own(raw: bytes) -> None:
    assert dense_shape(raw).translate(None, _NOT_MARKS) == raw.translate(None, _NOT_MARKS)


WIDE = ["12345678901234567890", "-9223372036854775809", "18446744073709551616", "9" * 400, "-" + "1" * 25]
SPACES = ["", " ", "\t", "\n", "\r\n ", "  \t"]


@pytest.mark.parametrize("token", WIDE)
@pytest.mark.parametrize("space", SPACES)
def test_a_wide_integer_is_found_wherever_a_number_stands(token: str, space: str) -> None:
    s = space
    for text in (f"{s}{token}{s}", f"[{s}{token}{s}]", f"[1,{s}{token}{s},2]", f'{{"a"{s}:{s}{token}{s}}}',
                 f'{{"a":{s}{token}{s},"b":1}}', f"[[{s}{token}{s}]]"):
        raw = text.encode()
        assert may_hold_wide_int(raw), text
        value, fast = read_json_noting_path(raw, FILE)
        assert value == json.loads(text) and not fast, text


@pytest.mark.parametrize("token", ["1234567890123456789", "-123456789012345678",
                                   "0.12345678901234567", "1.2345678901234567e+300", "-1234567890123456.5"])
def test_a_number_orjson_reads_exactly_keeps_the_fast_path(token: str) -> None:
    raw = f'{{"n": [{token}, {token}], "m": {token}}}'.encode()
    assert not may_hold_wide_int(raw)
    value, fast = read_json_noting_path(raw, FILE)
    assert fast and value == json.loads(raw)


@pytest.mark.parametrize("token", ["18446744073709551615", "-9223372036854775808"])
def test_the_bounds_of_64_bits_read_exactly(token: str) -> None:
    """By length alone the scan cannot tell these from the next integer out: they take the exact path."""
    raw = f"[{token}]".encode()
    assert may_hold_wide_int(raw)
    assert read_json_noting_path(raw, FILE)[0] == [int(token)]


@pytest.mark.parametrize("text", ['"sha256 f945868c7462cf22a9e172e56fe205be2e6a1c8198425ee19e5bfc49d9ef1339"',
                                  '{"id": "x12345678901234567890y"}', '["2026-05-08T12:35:00+00:00"]',
                                  '{"digest": "1234567890123456789012345"}'])
def test_digits_inside_strings_keep_the_fast_path(text: str) -> None:
    assert not may_hold_wide_int(text.encode())
    assert read_json_noting_path(text.encode(), FILE)[1]


def test_a_run_that_only_looks_like_a_number_costs_the_exact_path_not_the_value() -> None:
    text = '{"a": "x,12345678901234567890,y"}'  # a string holding what reads as a token in the shape
    assert may_hold_wide_int(text.encode())
    assert read_json_noting_path(text.encode(), FILE)[0] == json.loads(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(alphabet="ab1234567890 :,[]-.\"\\é😀", max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20)


def wide_ints_in(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return orjson_reads_as_float(value)
    if isinstance(value, list):
        return any(wide_ints_in(v) for v in value)
    if isinstance(value, dict):
        return any(wide_ints_in(v) for v in value.values())
    return False


@settings(max_examples=300)
@given(json_values, st.sampled_from([None, 0, 1, 2]), st.booleans())
def test_no_wide_integer_is_ever_missed(value: object, indent: int | None, ascii_only: bool) -> None:
    raw = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    if wide_ints_in(value):
        assert holds_wide_int(dense_shape(raw))
    parsed, _ = read_json_noting_path(raw, FILE)
    assert parsed == value or json.dumps(parsed) == json.dumps(value)  # -0.0 == 0.0 and the like


# ---- past RUNS_ONE_BY_ONE runs, only those after a mark a number can follow are looked at --------------------

def wide_in_dense(dense: bytes) -> bool:
    """The rule of holds_wide_int as one expression: a run after a mark (or the start), a minus allowed, 19
    "0"s or more when negative and 20 when not, ending before `,`, `]`, `}` or the end."""
    return re.search(rb"(?:^|[\[,:])(?:-0{19,}|0{20,})(?=[,\]}]|\Z)", dense) is not None


DECOY = '"n12345678901234567890x",'  # a string holding a run of 20 digits: a run looked at, never a number


@pytest.mark.parametrize("decoys", [0, RUNS_ONE_BY_ONE - 1, RUNS_ONE_BY_ONE, RUNS_ONE_BY_ONE + 1, 200])
@pytest.mark.parametrize("place", ["[{}]", "[1,{}]", '{{"a":{}}}', '{{"a": {} , "b": 1}}', "[ {}\n]"])
@pytest.mark.parametrize("token", ["12345678901234567890", "-9223372036854775809", "-1234567890123456789"])
def test_a_wide_integer_after_many_runs_in_strings_is_found(decoys: int, place: str, token: str) -> None:
    raw = ("[" + DECOY * decoys + place.format(token) + "]").encode()
    assert holds_wide_int(dense_shape(raw)) and wide_in_dense(dense_shape(raw))
    assert not read_json_noting_path(raw, FILE)[1]  # the exact path


@pytest.mark.parametrize("decoys", [RUNS_ONE_BY_ONE - 1, RUNS_ONE_BY_ONE + 1, 200])
@pytest.mark.parametrize("last", ["1234567890123456789", "0.12345678901234567890", '"x:12345678901234567890"z"',
                                  "-123456789012345678", '"12345678901234567890"'])
def test_many_runs_in_strings_and_no_wide_integer_keep_the_fast_path(decoys: int, last: str) -> None:
    """The negative control: runs everywhere but none a number orjson would read as a float (19 digits
    fit 64 bits; a fraction; digits in a string, after a quote or a letter)."""
    text = "[" + DECOY * decoys + last.replace('"z"', '"') + "]"
    raw = text.encode()
    assert not holds_wide_int(dense_shape(raw)) and not wide_in_dense(dense_shape(raw))
    assert read_json_noting_path(raw, FILE) == (json.loads(text), True)


dense_pieces = st.sampled_from(["0" * 19, "0" * 20, "0" * 25, "0", "00", '"', ",", ":", "[", "]", "{", "}", "-", "."])


@settings(max_examples=500)
@given(st.lists(dense_pieces, max_size=400))
def test_the_wide_integer_scan_is_its_rule_whatever_the_dense_shape(pieces: list[str]) -> None:
    dense = "".join(pieces).encode()
    assert holds_wide_int(dense) == wide_in_dense(dense)
