"""Combine shard results into one matrix document (matrix.json, schema schemas/matrix.schema.json).

The document is a pure function of the shard reports and the requirement maps (plus the date it was
made), so combining shards run anywhere equals one serial run.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.suite import get_suite
from ..run.coverage import map_path
from . import errata, interop
from .cells import Cell, sub_point
from .classify import SPLIT, Clusters, classify, disagreement, followers, groups_of, rank_key, split_points
from .registry import Implementation
from .shards import ShardResult, check_aligned, find_inputs, read_input

__all__ = ["Cell", "combine", "read_all", "sub_point", "validate_matrix"]

MATRIX_VERSION = 2


@lru_cache(maxsize=1)
def matrix_schema() -> dict[str, Any]:
    text = resources.files("memconform").joinpath("schemas/matrix.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def validate_matrix(doc: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(matrix_schema()).validate(doc)


def read_all(paths: Iterable[Path]) -> list[ShardResult]:
    return [read_input(p, root) for p, root in find_inputs(list(paths))]


def combine(shards: list[ShardResult], registry: dict[str, Implementation] | None = None,
            generated_at: str | None = None) -> dict[str, Any]:
    check_aligned(shards)
    entries = _entries(shards, registry or {})
    cells: dict[tuple[str, str], Cell] = {}
    for s in shards:
        if s.report is not None:
            cells.setdefault((s.implementation, s.suite), Cell()).add(s)
    clusters = Clusters({i: list(e.get("independent_of", [])) for i, e in entries.items()})
    suites = sorted({s.suite for s in shards if s.report is not None or _installed(s.suite)})
    sentences = _ranked([x for suite in suites for x in _sentences(suite, cells, clusters)])
    leaders = [x for x in sentences if x["same_as"] is None]
    ran = [s for s in shards if s.report is not None]
    made_by = ran[0].report.header["harness_version"] if ran and ran[0].report else __version__
    doc = {
        "matrix_version": MATRIX_VERSION,
        "harness_version": made_by,
        "combined_by": __version__,
        # verdicts are recomputed here from the result lines; a report another harness version made is
        # judged by this version's policy, which may not be the one it ran under: shown as unverified
        "verified": made_by == __version__,
        "profile": ran[0].report.header["profile"] if ran and ran[0].report else "",
        "generated_at": generated_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suites": [_suite_json(suite, shards) for suite in suites],
        "implementations": [_implementation_json(i, e, shards, cells) for i, e in sorted(entries.items())],
        "sentences": sentences,
        "readings": _readings_table(suites, cells, clusters),
        # one observation counts once: a sentence with the very checks of one ranked above it is not counted again
        "counts": {c: sum(1 for x in leaders if x["class"] == c) for c in sorted({x["class"] for x in leaders})},
        "not_assessed_cells": sum(len(x["not_assessed"]) for x in leaders),
        "interop_holes": [h.to_json() for h in interop.holes() if h.suite in suites],
    }
    validate_matrix(doc)
    return doc


def _installed(suite: str) -> bool:
    """A shard skipped for a suite this installation lacks has no sentences to show (its run says why)."""
    from ..core.results import HarnessError

    try:
        get_suite(suite)
    except HarnessError:
        return False
    return True


def _entries(shards: list[ShardResult], registry: dict[str, Implementation]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for s in shards:
        entry = registry[s.implementation].to_json() if s.implementation in registry else s.entry
        out.setdefault(s.implementation, dict(entry) or {"id": s.implementation, "name": s.implementation})
    return out


def _suite_json(suite: str, shards: list[ShardResult]) -> dict[str, Any]:
    spec = get_suite(suite)
    seeds = sorted({s.seed for s in shards if s.suite == suite and s.seed is not None})
    return {"name": suite, "title": spec.spec_title, "version": spec.version, "seeds": seeds}


def _implementation_json(impl: str, entry: dict[str, Any], shards: list[ShardResult],
                         cells: dict[tuple[str, str], Cell]) -> dict[str, Any]:
    runs = []
    for s in sorted((s for s in shards if s.implementation == impl), key=lambda s: (s.suite, str(s.seed))):
        runs.append({"suite": s.suite, "seed": s.seed, "status": s.status, "reason": s.reason})
    levels = [{"suite": suite, "level": key, "title": lv["title"], "status": lv.get("status", "not assessed"),
               "claimed": key in entry.get("claims", {}).get(suite, [])}
              for (i, suite), cell in sorted(cells.items()) if i == impl for key, lv in cell.levels.items()]
    return {"id": impl, "name": entry.get("name", impl), "version": entry.get("version", ""),
            "source": entry.get("source", ""), "issues": entry.get("issues", ""), "license": entry.get("license", ""),
            "independent_of": list(entry.get("independent_of", [])), "claims": entry.get("claims", {}),
            "runs": runs, "levels": levels}


def _statements(suite: str) -> list[dict[str, Any]]:
    path = map_path(get_suite(suite))
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError:
        return []
    return [s for s in data["statements"] if s.get("observable") and s.get("checks")]


def _sentences(suite: str, cells: dict[tuple[str, str], Cell], clusters: Clusters) -> list[dict[str, Any]]:
    mine = {i: c for (i, s), c in cells.items() if s == suite}
    out = []
    for st in _statements(suite):
        checks = list(st["checks"])
        assessed = {i: c.assess(checks) for i, c in sorted(mine.items())}
        results = {i: a.outcome for i, a in assessed.items()}
        readings = {i: r for i, c in sorted(mine.items()) if (r := c.readings_for(checks))}
        points = followers(results, readings)
        splitting = split_points(points, clusters)
        groups = groups_of(results, readings, clusters, points, splitting)
        cls = classify(groups, clusters, splitting)
        sentence = {"id": st["id"], "suite": suite, "section": st["section"], "quote": st["quote"],
                    "keyword": st["keyword"], "level": st.get("level"), "checks": checks, "class": cls,
                    "disagreement": disagreement(groups), "outcomes": results, "readings": readings,
                    "not_assessed": {i: a.reason for i, a in assessed.items() if a.outcome == "not assessed"},
                    "cards": {i: a.check for i, a in assessed.items() if a.check and a.outcome != "passed"},
                    "split_points": splitting, "groups": [g.to_json() for g in groups], "rank": 0,
                    "same_as": None, "also": []}
        if cls == SPLIT:
            for g in sentence["groups"]:
                g["exchange"] = _group_exchange(g["implementations"], mine, checks)
        out.append(sentence)
    return out


def _ranked(sentences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ranked by rank_key; a sentence observed by exactly the checks of one ranked above it (one result
    line read for two sentences, as OMP's 429 row and its rate-limit SHOULD) follows that one, sharing
    its rank, counted once."""
    sentences.sort(key=rank_key)
    lead: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    ordered: list[dict[str, Any]] = []
    followers_of: dict[str, list[dict[str, Any]]] = {}
    for x in sentences:
        first = lead.setdefault((x["suite"], tuple(sorted(x["checks"]))), x)
        if first is x:
            ordered.append(x)
        else:
            x["same_as"] = first["id"]
            first["also"].append(x["id"])
            followers_of.setdefault(first["id"], []).append(x)
    out = []
    for n, x in enumerate(ordered, 1):
        for y in [x, *followers_of.get(x["id"], [])]:
            y["rank"] = n
            out.append(y)
    return out


def _group_exchange(impls: list[str], cells: dict[str, Cell], checks: list[str]) -> dict[str, Any] | None:
    for impl in impls:
        found = cells[impl].exchange(checks)
        if found is not None:
            return {"implementation": impl, **found}
    return None


def _readings_table(suites: list[str], cells: dict[tuple[str, str], Cell], clusters: Clusters) -> list[dict[str, Any]]:
    rows = []
    for suite in suites:
        points = sorted({p for (i, s), c in cells.items() if s == suite for p in c.readings})
        for point in points:
            by_impl = {i: sorted({v for x in c.readings.get(point, []) for v in x["seen"]})
                       for (i, s), c in sorted(cells.items()) if s == suite and point in c.readings}
            followers: dict[str, list[str]] = {}
            for impl, seen in by_impl.items():
                followers.setdefault(" + ".join(seen), []).append(impl)
            contested = sum(1 for impls in followers.values() if clusters.count(impls) >= 2) >= 2
            rows.append({"suite": suite, "point": point, "erratum": errata.entry(suite, point.split(" ", 1)[0]),
                         "by_implementation": by_impl, "readings": dict(sorted(followers.items())),
                         "needs_erratum": contested})
    return rows
