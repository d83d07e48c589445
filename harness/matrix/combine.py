"""Combine shard results into one matrix document (matrix.json, schema schemas/matrix.schema.json).

The document is a pure function of the shard reports and the requirement maps (plus the date it was
made), so combining shards run anywhere equals one serial run.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.suite import get_suite
from ..run.coverage import map_path
from . import errata, outcomes
from .classify import SPLIT, Clusters, classify, disagreement, groups_of, rank_key
from .registry import Implementation
from .shards import ShardResult, check_aligned, find_inputs, read_input

MATRIX_VERSION = 1
TRANSCRIPT_LINES = 12
MAX_SEQUENCE_BYTES = 4 << 20  # a larger file is cut, so it reads as not JSON and says so
STEP_CHARS = 400


def sub_point(point: str, seen: str) -> tuple[str, str]:
    """One open point can hold several questions ("keyword match: all-words", "search tags: all" under O2):
    each "question: answer" is a point of its own, so one differing answer does not hide the agreeing ones."""
    question, sep, answer = seen.partition(": ")
    return (f"{point} {question}", answer) if sep and answer else (point, seen)


@lru_cache(maxsize=1)
def matrix_schema() -> dict[str, Any]:
    text = resources.files("memconform").joinpath("schemas/matrix.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def validate_matrix(doc: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(matrix_schema()).validate(doc)


@dataclass
class Cell:
    """One implementation on one suite, all its seeds together."""

    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # check id -> result lines
    readings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # point -> footer entries
    levels: dict[str, dict[str, Any]] = field(default_factory=dict)  # level key -> worst footer level
    sequences: dict[str, Path] = field(default_factory=dict)  # check id -> a saved failing sequence

    def add(self, shard: ShardResult) -> None:
        assert shard.report is not None
        if shard.report_dir is not None:
            for path in sorted((shard.report_dir / "sequences").glob("*.json")):
                self.sequences.setdefault(path.name.rsplit("-", 1)[0], path)
        for line in shard.report.results:
            self.results.setdefault(line["check_id"], []).append(line)
        footer = shard.report.footer or {}
        for x in footer.get("readings", []):
            for value in x["seen"]:
                point, reading = sub_point(x["point"], value)
                self.readings.setdefault(point, []).append({"seen": [reading], "checks": x["checks"]})
        for lv in footer.get("levels", []):
            kept = self.levels.get(lv["level"])
            if kept is None or kept.get("status") == "conformant":  # a level holds only if it holds on every seed
                self.levels[lv["level"]] = lv

    def outcome(self, checks: list[str]) -> str:
        per_check = [outcomes.worst(outcomes.of_result(r) for r in self.results.get(c, [])) for c in checks]
        return outcomes.worst(per_check)

    def readings_for(self, checks: list[str]) -> dict[str, list[str]]:
        wanted = set(checks)
        out: dict[str, set[str]] = {}
        for point, entries in self.readings.items():
            for x in entries:
                if wanted & set(x["checks"]):
                    out.setdefault(point, set()).update(x["seen"])
        return {p: sorted(v) for p, v in sorted(out.items())}

    def exchange(self, checks: list[str]) -> dict[str, Any] | None:
        """One exchange that shows this implementation's behaviour: a failing check's transcript first."""
        lines = [r for c in checks for r in self.results.get(c, []) if r.get("transcript") or c in self.sequences]
        lines.sort(key=lambda r: (r["outcome"] != "failed", not r.get("transcript"), r["check_id"]))
        if not lines:
            return None
        r = lines[0]
        shown = {"check": r["check_id"], "outcome": outcomes.of_result(r),
                 "failure": r["failures"][0]["title"] if r["failures"] else ""}
        if r.get("transcript"):
            return {**shown, "transcript": r["transcript"][:TRANSCRIPT_LINES]}
        path = self.sequences[r["check_id"]]
        return {**shown, "transcript": sequence_lines(path), "sequence": path.name}


def sequence_lines(path: Path) -> list[str]:
    """The last steps of a saved sequence, up to the divergence, one compact JSON line each (bounded)."""
    try:
        with path.open("rb") as fh:
            doc = json.loads(fh.read(MAX_SEQUENCE_BYTES))
        steps = doc["steps"][: (doc.get("diverged_at") or len(doc["steps"])) + 1]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"(the saved sequence {path.name} cannot be read: {exc})"]
    return [json.dumps(step, ensure_ascii=False)[:STEP_CHARS] for step in steps[-TRANSCRIPT_LINES:]]


def read_all(paths: Iterable[Path]) -> list[ShardResult]:
    return [read_input(p) for p in find_inputs(list(paths))]


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
    sentences = [x for suite in suites for x in _sentences(suite, cells, clusters)]
    sentences.sort(key=rank_key)
    for n, x in enumerate(sentences, 1):
        x["rank"] = n
    ran = [s for s in shards if s.report is not None]
    doc = {
        "matrix_version": MATRIX_VERSION,
        "harness_version": ran[0].report.header["harness_version"] if ran and ran[0].report else __version__,
        "profile": ran[0].report.header["profile"] if ran and ran[0].report else "",
        "generated_at": generated_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suites": [_suite_json(suite, shards) for suite in suites],
        "implementations": [_implementation_json(i, e, shards, cells) for i, e in sorted(entries.items())],
        "sentences": sentences,
        "readings": _readings_table(suites, cells, clusters),
        "counts": {c: sum(1 for x in sentences if x["class"] == c) for c in sorted({x["class"] for x in sentences})},
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
        results = {i: c.outcome(checks) for i, c in sorted(mine.items())}
        readings = {i: r for i, c in sorted(mine.items()) if (r := c.readings_for(checks))}
        groups = groups_of(results, readings, clusters)
        cls = classify(groups, clusters)
        sentence = {"id": st["id"], "suite": suite, "section": st["section"], "quote": st["quote"],
                    "keyword": st["keyword"], "level": st.get("level"), "checks": checks, "class": cls,
                    "disagreement": disagreement(groups), "outcomes": results, "readings": readings,
                    "groups": [g.to_json() for g in groups], "rank": 0}
        if cls == SPLIT:
            for g in sentence["groups"]:
                g["exchange"] = _group_exchange(g["implementations"], mine, checks)
        out.append(sentence)
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
            rows.append({"suite": suite, "point": point, "erratum": errata.link(suite, point.split(" ", 1)[0]),
                         "by_implementation": by_impl, "readings": dict(sorted(followers.items())),
                         "needs_erratum": contested})
    return rows
