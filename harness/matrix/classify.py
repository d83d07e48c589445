"""Per sentence: classify how the implementations behave, and rank sentences by disagreement.

Implementations that take a side (passed, or failed/warning) are grouped by side and by the readings
they were seen to follow for the open points the sentence touches. Implementations that share code
(`independent_of` in the registry) count as one. Classes:

    split       two or more groups, each of at least two independent implementations
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


def groups_of(outcomes: dict[str, str], readings: dict[str, dict[str, list[str]]], clusters: Clusters) -> list[Group]:
    """Deciding implementations grouped by side and by the readings of the points every one of them was seen
    on (a point one implementation gave no evidence on separates nobody: absence is not a reading)."""
    deciding = [i for i in sorted(outcomes) if side(outcomes[i]) is not None]
    common = set.intersection(*(set(readings.get(i, {})) for i in deciding)) if deciding else set()
    by_key: dict[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], Group] = {}
    for impl in deciding:
        taken = side(outcomes[impl])
        assert taken is not None
        seen = {p: v for p, v in readings.get(impl, {}).items() if p in common}
        key = (taken, tuple(sorted((p, tuple(sorted(v))) for p, v in seen.items())))
        group = by_key.setdefault(key, Group(taken, {p: sorted(v) for p, v in sorted(seen.items())}))
        group.implementations.append(impl)
    groups = list(by_key.values())
    for g in groups:
        g.independent = clusters.count(g.implementations)
    return sorted(groups, key=lambda g: (-g.independent, g.side, g.implementations))


def classify(groups: list[Group], clusters: Clusters) -> str:
    if not groups:
        return NOT_ASSESSED
    if sum(1 for g in groups if g.independent >= 2) >= 2:
        return SPLIT
    failing = [i for g in groups if g.side == "fail" for i in g.implementations]
    passing = [i for g in groups if g.side == "pass" for i in g.implementations]
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
