"""The call plan of a domain sweep: how many requests carry a table's classes.

Under `ci` a sweep sends the items that can be judged together (a valid value of a field, say) packed
into as few requests as the operation allows: many records of one import, or the fields of one record
when no two items need the same field. The rest (a forbidden value, a value the spec is silent on)
still goes alone, since one refusal cannot say which of several such values it refused. A packed
request whose answer is not right is sent again in halves until every failure names the items that
cause it, so a failure reads as a request of that item alone would have made it (and a failure only
the items together cause is still reported, as the whole row's). Values that must be refused, or
that the spec is silent on, can share requests too where the answer of a row can only say "each as
expected" or "look closer": several refused imports into one subject read back once, or open values
accepted together; a row whose answer is anything else is sent in halves, down to each item alone, so
every failure and every reading recorded is the item's own. Other profiles send every item alone, one
request each.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TypeVar

from ..core.results import Failure

T = TypeVar("T")

PACKED_PROFILES = frozenset({"ci"})
ROW_LIMIT = 32  # items a packed request carries at most: a reply or a read-back stays small


def packs(profile_name: str) -> bool:
    """Whether a sweep under this profile packs items into shared requests."""
    return profile_name in PACKED_PROFILES


def pack(items: Sequence[T], slot: Callable[[T], Hashable | None], limit: int = ROW_LIMIT) -> list[list[T]]:
    """The items in rows, first fit and in order: no two items of a row share a slot (None: the item
    has a place of its own, such as a record of its own in a batch), at most `limit` items a row."""
    if limit < 1:
        raise ValueError("a row holds at least one item")
    rows: list[list[T]] = []
    taken: list[set[Hashable]] = []
    for item in items:
        place = slot(item)
        for row, used in zip(rows, taken, strict=True):
            if len(row) < limit and (place is None or place not in used):
                row.append(item)
                if place is not None:
                    used.add(place)
                break
        else:
            rows.append([item])
            taken.append(set() if place is None else {place})
    return rows


def rows_for(items: Sequence[T], profile_name: str, group: Callable[[T], Hashable | None],
             slot: Callable[[T], Hashable | None] = lambda _: None, limit: int = ROW_LIMIT) -> list[list[T]]:
    """The requests of a sweep: under a packing profile the items of each group packed (pack; None:
    no group, the item alone), groups in the order they first appear, then the items alone; under any
    other profile every item alone, in order."""
    if not packs(profile_name):
        return [[item] for item in items]
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        key = group(item)
        if key is not None:
            groups.setdefault(key, []).append(item)
    packed = [row for members in groups.values() for row in pack(members, slot, limit)]
    return packed + [[item] for item in items if group(item) is None]


def judge_rows(rows: Iterable[list[T]], attempt: Callable[[list[T]], list[Failure] | None]) -> Iterator[Failure]:
    """Each row sent and judged by `attempt` (one request, or the few one judgement needs; the failures
    found, each naming its item). A row of several items that fails is judged again in halves: the
    halves' failures are reported, or the row's own where no half fails (what only the items together
    cause). `attempt` answers None for a row of several whose answer does not say which item it is about
    (one refusal among open values): that row is judged in halves and nothing of its own is reported; a
    row of one is always judged."""
    for row in rows:
        yield from _judged(row, attempt)


def _judged(row: list[T], attempt: Callable[[list[T]], list[Failure] | None]) -> list[Failure]:
    found = attempt(row)
    if found is None and len(row) == 1:
        raise ValueError("a row of one item is judged, never left to its halves")
    if found is not None and (not found or len(row) == 1):
        return found
    half = len(row) // 2
    return _judged(row[:half], attempt) + _judged(row[half:], attempt) or (found or [])
