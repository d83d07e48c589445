"""Per sentence: classify how the implementations behave, and rank sentences by disagreement.

Implementations that take a side (passed, or failed/warning) are grouped by side and by the reading
they follow of one open point the sentence touches. Implementations that share code (`independent_of`
in the registry) count as one. Cells not assessed (outcomes.py) take no side: a sentence is classed by
what was assessed, and says how many cells were not. Splits are computed per reading point. Classes:

    split       two or more independent implementations on each side, or, on one open point, two
                readings each followed by two or more independent implementations
    all-fail    every deciding implementation fails: a suspect check or suspect spec text
    lone-fail   exactly one independent implementation fails, the others pass: likely its bug
    mixed       failures on more than one side, but no two groups large enough to be a split
    all-pass    every deciding implementation passes
    not assessed  no implementation took a side
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .outcomes import side

SPLIT, ALL_FAIL, LONE_FAIL, MIXED, ALL_PASS, NOT_ASSESSED = (
    "split", "all-fail", "lone-fail", "mixed", "all-pass", "not assessed")
CLASSES = (SPLIT, ALL_FAIL, LONE_FAIL, MIXED, ALL_PASS, NOT_ASSESSED)
# the spec editor's queue: what the text may cause first, one implementation's bug later
_PRIORITY = {SPLIT: 0, MIXED: 1, ALL_FAIL: 2, LONE_FAIL: 3, ALL_PASS: 4, NOT_ASSESSED: 5}


class Clusters:
    """Implementations that share code, joined (union-find over the registry's `independent_of`)."""

    def __init__(self, links: dict[str, list[str]]) -> None:
        self.parent: dict[str, str] = {}
        for a, others in links.items():
            for b in others:
                self._union(a, b)

    def find(self, x: str) -> str:
        root = self.parent.get(x, x)
        if root != x:
            root = self.find(root)
            self.parent[x] = root
        return root

    def _union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def count(self, ids: list[str]) -> int:
        return len({self.find(i) for i in ids})


@dataclass
class Group:
    side: str
    readings: dict[str, list[str]]
    implementations: list[str] = field(default_factory=list)
    independent: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "readings": self.readings, "implementations": self.implementations,
                "independent": self.independent}


def label(values: list[str]) -> str:
    """The reading an implementation follows on one point ("a + b" when it was seen following several)."""
    return " + ".join(sorted(values))


def followers(outcomes: dict[str, str], readings: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    """Per point: reading -> the deciding implementations seen following it (absence is not a reading)."""
    deciding = [i for i in sorted(outcomes) if side(outcomes[i]) is not None]
    out: dict[str, dict[str, list[str]]] = {}
    for impl in deciding:
        for point, values in readings.get(impl, {}).items():
            out.setdefault(point, {}).setdefault(label(values), []).append(impl)
    return {p: dict(sorted(by.items())) for p, by in sorted(out.items())}


def split_points(points: dict[str, dict[str, list[str]]], clusters: Clusters) -> list[str]:
    """The points on which two readings are each followed by two or more independent implementations:
    each is a split of the sentence on its own, whatever the other points do."""
    return [p for p, by in points.items() if sum(1 for impls in by.values() if clusters.count(impls) >= 2) >= 2]


def _grouping_point(points: dict[str, dict[str, list[str]]], splitting: list[str], clusters: Clusters) -> str | None:
    """The one point the groups are drawn by: a splitting point first (the most evenly followed), else the
    point read the most ways; None when every point is read one way."""
    if splitting:
        # max() keeps the first of equals: the points come sorted, so the choice is stable
        return max(sorted(splitting), key=lambda p: (sorted(clusters.count(v) for v in points[p].values())[-2],
                                                     len(points[p])))
    contested = sorted(p for p, by in points.items() if len(by) >= 2)
    return max(contested, key=lambda p: len(points[p])) if contested else None


def groups_of(outcomes: dict[str, str], readings: dict[str, dict[str, list[str]]], clusters: Clusters,
              points: dict[str, dict[str, list[str]]] | None = None, splitting: list[str] | None = None) -> list[Group]:
    """Deciding implementations grouped by side and by their reading of one point (see _grouping_point),
    never by the readings of several points at once: unrelated points credited to the same sentence would
    otherwise put every implementation in a group of its own and hide a split."""
    points = followers(outcomes, readings) if points is None else points
    splitting = split_points(points, clusters) if splitting is None else splitting
    point = _grouping_point(points, splitting, clusters)
    by_key: dict[tuple[str, str], Group] = {}
    for impl in (i for i in sorted(outcomes) if side(outcomes[i]) is not None):
        taken = side(outcomes[impl])
        assert taken is not None
        values = readings.get(impl, {}).get(point, []) if point else []
        group = by_key.setdefault((taken, label(values)), Group(taken, {point: sorted(values)} if point and values else {}))
        group.implementations.append(impl)
    groups = list(by_key.values())
    for g in groups:
        g.independent = clusters.count(g.implementations)
    return sorted(groups, key=lambda g: (-g.independent, g.side, g.implementations))


def classify(groups: list[Group], clusters: Clusters, splitting: list[str] | None = None) -> str:
    if not groups:
        return NOT_ASSESSED
    by_side = {s: [i for g in groups if g.side == s for i in g.implementations] for s in ("pass", "fail")}
    if splitting or all(clusters.count(ids) >= 2 for ids in by_side.values()):
        return SPLIT
    failing, passing = by_side["fail"], by_side["pass"]
    if not failing:
        return ALL_PASS
    if not passing:
        return ALL_FAIL
    return LONE_FAIL if clusters.count(failing) == 1 else MIXED


def disagreement(groups: list[Group]) -> float:
    """Normalised entropy of the independent implementations over the groups: 0 unanimous, 1 evenly split."""
    sizes = [g.independent for g in groups if g.independent]
    total = sum(sizes)
    if len(sizes) < 2 or total == 0:
        return 0.0
    entropy = -sum(s / total * math.log(s / total) for s in sizes)
    return round(entropy / math.log(len(sizes)) if len(sizes) > 1 else 0.0, 4)


def rank_key(sentence: dict[str, Any]) -> tuple[int, float, int, str]:
    deciding = sum(g["independent"] for g in sentence["groups"])
    return (_PRIORITY[sentence["class"]], -sentence["disagreement"], -deciding, sentence["id"])
