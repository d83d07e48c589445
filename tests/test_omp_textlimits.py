"""suites/omp/portability/textlimits.py: a text cut into pieces within a limit of UTF-16 units, for every limit
and every kind of character (astral, surrogate pairs held as two code points, combining and joined clusters)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from memconform.suites.omp.portability.textlimits import pieces, units

# the characters a wrong cut trips over, mixed into text drawn from the whole code space (lone surrogates too)
TRICKY = ["😀", "𝄞", "\U0010ffff", "\U00010000", "\u0301", "\u20dd", "\u0903", "\u200d", "\ufe0f", "\U0001f3fd",
          "\ud83d", "\ude00", "e", "\uffff"]
CHARACTERS = st.characters(exclude_categories=())  # every code point, surrogates included
TEXTS = st.lists(st.one_of(st.sampled_from(TRICKY), CHARACTERS, st.sampled_from(["\ud83d\ude00", "e\u0301\u0301",
                                                                                    "👩\u200d💻"])),
                 max_size=40).map("".join)


def _joins_on(text: str, at: int) -> bool:
    """Written apart from the module: a cut at `at` leaves a mark, joiner or joined character without its base."""
    ch = text[at]
    return unicodedata.category(ch)[0] == "M" or ch == "\u200d" or text[at - 1] == "\u200d" or 0x1F3FB <= ord(ch) <= 0x1F3FF


def _parts_pair(text: str, at: int) -> bool:
    return 0 < at < len(text) and 0xD800 <= ord(text[at - 1]) <= 0xDBFF and 0xDC00 <= ord(text[at]) <= 0xDFFF


def _indivisible_2_units(text: str) -> bool:
    return any(ord(ch) > 0xFFFF or _parts_pair(text, i) for i, ch in enumerate(text))


@given(text=TEXTS, limit=st.integers(1, 12))
@example(text="😀", limit=1)  # looped for ever before: the cut was empty and the text never shrank
@example(text="a\ud83d\ude00", limit=1)
@example(text="e" + "\u0301" * 7, limit=3)
@example(text="ab\u200d\u200dcd", limit=2)
@example(text="\u0301👩\u200d💻", limit=4)  # a cluster longer than the limit begins its own piece
def test_pieces_are_the_text_each_within_the_limit_or_the_limit_is_refused(text: str, limit: int) -> None:
    if limit == 1 and _indivisible_2_units(text):
        with pytest.raises(ValueError, match="takes 2 UTF-16 units, more than the limit of 1"):
            pieces(text, limit)
        return
    found = pieces(text, limit)
    assert "".join(found) == text
    assert found == [""] if not text else all(found)
    ends = [sum(map(len, found[:k + 1])) for k in range(len(found) - 1)]
    for k, at in enumerate(ends):
        piece, after = found[k], found[k + 1]
        assert units(piece) <= limit
        assert not _parts_pair(text, at), f"a surrogate pair parted at {at}: {found!r}"
        # as long as it can be: the next cluster (up to the next place a cut may go) would not have fitted, or it
        # is longer than the limit by itself and so begins a piece of its own (cut inside only where it must be)
        nxt = next((j for j in range(1, len(after)) if not (_joins_on(after, j) or _parts_pair(after, j))), len(after))
        whole = next((j for j in range(at + 1, len(text)) if not (_joins_on(text, j) or _parts_pair(text, j))), len(text))
        if not (nxt == len(after) and units(text[at:whole]) > limit):
            assert units(piece + after[:nxt]) > limit, f"piece {k} could have held more: {found!r}"
        if _joins_on(text, at):  # a cluster cut only when it is longer than the limit by itself
            assert all(_joins_on(piece, j) or _parts_pair(piece, j) for j in range(1, len(piece))), found
    assert units(found[-1]) <= limit


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused_but_for_the_empty_text_at_zero(limit: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        pieces("abc", limit)
    assert pieces("", 0) == [""]
    with pytest.raises(ValueError, match="at least 1"):
        pieces("", -1)


def test_a_cluster_stays_whole_when_it_fits_and_is_cut_only_when_longer_than_the_limit() -> None:
    assert pieces("ab😀c", 3) == ["ab", "😀c"]
    assert pieces("e\u0301e\u0301e\u0301", 3) == ["e\u0301", "e\u0301", "e\u0301"]
    assert pieces("xe\u0301\u0301\u0301\u0301", 3) == ["x", "e\u0301\u0301", "\u0301\u0301"]
    assert pieces("a\ud83d\ude00b", 2) == ["a", "\ud83d\ude00", "b"]
    assert pieces("a" * 10_001, 10_000) == ["a" * 10_000, "a"]
