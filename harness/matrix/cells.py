"""One implementation on one suite, every seed together: its result lines, readings, saved sequences, and
its level verdicts recomputed from the result lines (a shard's footer is data from elsewhere: its verdicts
are never taken on trust, only the levels the target claimed)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.readings import contradictions
from . import outcomes
from .shards import ShardResult

TRANSCRIPT_LINES = 12
MAX_SEQUENCE_BYTES = 4 << 20  # a larger file is cut, so it reads as not JSON and says so
STEP_CHARS = 400
_RANK = {"conformant": 0, "not applicable": 1, "not claimed": 1, "not assessed": 2, "not conformant": 3}


def sub_point(point: str, seen: str) -> tuple[str, str]:
    """One open point can hold several questions ("keyword match: all-words", "search tags: all" under O2):
    each "question: answer" is a point of its own, so one differing answer does not hide the agreeing ones."""
    question, sep, answer = seen.partition(": ")
    return (f"{point} {question}", answer) if sep and answer else (point, seen)


@dataclass
class Cell:
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # check id -> result lines
    readings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # point -> footer entries
    levels: dict[str, dict[str, Any]] = field(default_factory=dict)  # level key -> worst recomputed level
    sequences: dict[str, Path] = field(default_factory=dict)  # check id -> a saved failing sequence
    report_dirs: list[Path] = field(default_factory=list)  # where each seed's report is (for links)

    def add(self, shard: ShardResult) -> None:
        assert shard.report is not None
        if shard.report_dir is not None:
            self.report_dirs.append(shard.report_dir)
            folder = shard.report_dir / "sequences"
            if folder.is_dir() and not folder.is_symlink():
                for path in sorted(folder.glob("*.json")):
                    self.sequences.setdefault(path.name.rsplit("-", 1)[0], path)
        for line in shard.report.results:
            self.results.setdefault(line["check_id"], []).append(line)
        footer = shard.report.footer or {}
        against = contradictions(footer.get("readings", []), shard.report.results)
        for x in footer.get("readings", []):
            if (x.get("suite"), x.get("point")) in against:
                continue  # a check that met the point failed in this run: the reading is not followed
            for value in x["seen"]:
                point, reading = sub_point(x["point"], value)
                self.readings.setdefault(point, []).append({"seen": [reading], "checks": x["checks"]})
        for lv in recomputed_levels(shard):
            kept = self.levels.get(lv["level"])
            if kept is None or _RANK.get(lv["status"], 2) > _RANK.get(kept["status"], 2):  # holds only on every seed
                self.levels[lv["level"]] = lv

    def assess(self, checks: list[str]) -> outcomes.Assessed:
        ran = (outcomes.of_check(c, self.results.get(c, [])) for c in checks)
        return outcomes.combined(a for a in ran if a is not None)

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
        shown = {"check": r["check_id"], "outcome": outcomes.of_result(r).outcome,
                 "failure": r["failures"][0]["title"] if r["failures"] else ""}
        if r.get("transcript"):
            return {**shown, "transcript": r["transcript"][:TRANSCRIPT_LINES]}
        path = self.sequences[r["check_id"]]
        return {**shown, "transcript": sequence_lines(path), "sequence": path.name}


def sequence_lines(path: Path) -> list[str]:
    """The last steps of a saved sequence, up to the divergence, one compact JSON line each (bounded)."""
    from .safe_read import read_bounded

    try:
        doc = json.loads(read_bounded(path, path.parent.parent, MAX_SEQUENCE_BYTES, cut=True))
        steps = doc["steps"][: (doc.get("diverged_at") or len(doc["steps"])) + 1]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"(the saved sequence {path.name} cannot be read: {exc})"]
    return [json.dumps(step, ensure_ascii=False)[:STEP_CHARS] for step in steps[-TRANSCRIPT_LINES:]]


def recomputed_levels(shard: ShardResult) -> list[dict[str, Any]]:
    """The shard's level verdicts under this installation's verdict policy, from its result lines alone."""
    from ..core.profile import PROFILES
    from ..core.registry import REGISTRY
    from ..core.results import Failure, HarnessError, Outcome, Result
    from ..core.runner import in_clause
    from ..core.suite import get_suite
    from ..core.verdicts import level_verdicts

    assert shard.report is not None
    header, footer = shard.report.header, shard.report.footer or {}
    try:
        suite = get_suite(shard.suite)
    except HarnessError:
        return []
    strict = bool(PROFILES.get(header["profile"], {}).get("strict"))
    checks = {c.id: c for c in REGISTRY.for_suite(shard.suite)}
    results = []
    for line in shard.report.results:
        check = checks.get(line["check_id"])
        if check is None or line["suite"] != shard.suite:
            continue  # a check this installation does not have decides nothing here
        results.append(Result(
            check_id=check.id, suite=check.suite, spec=check.spec, section=check.section,
            keyword=check.keyword.value, level=check.level, sentence=check.sentence, outcome=Outcome(line["outcome"]),
            reason=line["reason"], failures=[Failure(f["title"], f["received"], f["expected"], f["path"])
                                             for f in line["failures"]],
            not_applicable=bool(line.get("not_applicable")), inconclusive=bool(line.get("inconclusive")),
            in_clause=in_clause(check.id, suite), strict=strict, needs=str(line.get("needs", "")),
            needs_kind=str(line.get("needs_kind", ""))))
    levels = [lv for lv in footer.get("levels", []) if lv.get("suite") == shard.suite]
    claimed = {lv["level"] for lv in levels if lv.get("claimed")}
    asked = any(lv.get("claimed") is not None for lv in levels)
    ran = {r.check_id for r in results}
    not_run = [c for c in checks.values() if c.id not in ran]
    verdicts = level_verdicts(suite, results, claimed if asked else None, not_run, strict,
                              bool(header.get("require_hooks")))
    return [v.to_json(shard.suite) for v in verdicts]
