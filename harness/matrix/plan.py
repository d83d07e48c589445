"""The shards of a matrix: implementation x suite x seed, numbered in a fixed order.

The plan depends only on the registry file and the arguments, never on what is installed here, so
shard N means the same on every machine of a fleet (a GitHub Actions matrix, a Kubernetes Indexed Job).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core.profile import CI_SEED
from ..core.results import HarnessError
from .registry import Implementation


@dataclass(frozen=True)
class Shard:
    index: int
    implementation: str
    suite: str
    seed: int

    def to_json(self) -> dict[str, object]:
        return {"shard": self.index, "implementation": self.implementation, "suite": self.suite, "seed": self.seed}


def seeds(count: int, base: int = CI_SEED) -> list[int]:
    if count < 1:
        raise HarnessError(f"--seeds must be at least 1, not {count}")
    return [base + k for k in range(count)]


def plan(entries: list[Implementation], suites: list[str] | None = None, seed_count: int = 1,
         base_seed: int = CI_SEED, ci_only: bool = False, only: list[str] | None = None) -> list[Shard]:
    chosen = [e for e in entries if (not ci_only or e.ci) and (not only or e.id in only)]
    if only:
        unknown = sorted(set(only) - {e.id for e in entries})
        if unknown:
            raise HarnessError(f"no implementation with id {', '.join(unknown)} in the registry")
    cells = [(e.id, s) for e in chosen for s in e.suites if not suites or s in suites]
    shards = [(i, s, seed) for i, s in cells for seed in seeds(seed_count, base_seed)]
    return [Shard(n, i, s, seed) for n, (i, s, seed) in enumerate(shards)]


def github_matrix(shards: list[Shard]) -> str:
    """The `fromJson` of a GitHub Actions `strategy.matrix`: one job per shard."""
    return json.dumps({"include": [s.to_json() for s in shards]}, separators=(",", ":"))


def index_table(shards: list[Shard]) -> str:
    """The index table of a Kubernetes Indexed Job: JOB_COMPLETION_INDEX -> shard."""
    lines = ["index\timplementation\tsuite\tseed"]
    lines += [f"{s.index}\t{s.implementation}\t{s.suite}\t{s.seed}" for s in shards]
    return "\n".join(lines) + "\n"


def shard_at(shards: list[Shard], index: int) -> Shard:
    if not 0 <= index < len(shards):
        raise HarnessError(f"shard {index} is outside the plan (0..{len(shards) - 1})")
    return shards[index]
