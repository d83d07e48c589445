"""`memconform coverage`: how much of each spec the checks observe, from the suites' requirement maps.

A requirement map (schema: harness/schemas/requirements.schema.json) lists every normative
statement of one spec with its keyword, whether a black-box harness can observe it, and the checks
that do. This module only reads the maps; it never reads the spec texts (tests do that).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.registry import REGISTRY
from ..core.results import HarnessError
from ..core.suite import SuiteSpec
from ..kit.fixtures_loader import fixture_root

# keyword -> the group coverage is counted in ("implicit": a rule the text states without a keyword)
KEYWORD_GROUPS = {
    "MUST": "MUST", "MUST NOT": "MUST", "REQUIRED": "MUST",
    "SHOULD": "SHOULD", "SHOULD NOT": "SHOULD", "RECOMMENDED": "SHOULD",
    "MAY": "MAY", "OPTIONAL": "MAY",
    "implicit": "implicit",
}
GROUPS = ("MUST", "SHOULD", "MAY", "implicit")


def schema() -> dict[str, Any]:
    text = resources.files("memconform").joinpath("schemas/requirements.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def map_path(suite: SuiteSpec) -> Path:
    """Where the suite's requirement map is: SuiteSpec.requirements, else fixtures/<name>/requirements.json."""
    return suite.requirements if suite.requirements is not None else fixture_root() / suite.name / "requirements.json"


def schema_errors(doc: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema())
    return [f"{e.json_path}: {e.message}" for e in sorted(validator.iter_errors(doc), key=lambda e: e.json_path)]


@dataclass
class Coverage:
    suite: str
    map_file: str | None
    problems: list[str] = field(default_factory=list)
    # group -> [covered, testable]
    counts: dict[str, list[int]] = field(default_factory=dict)
    uncovered: list[dict[str, Any]] = field(default_factory=list)
    unobservable: list[dict[str, Any]] = field(default_factory=list)
    unmapped_checks: list[str] = field(default_factory=list)
    unknown_checks: list[str] = field(default_factory=list)
    statements: int = 0

    def covered(self) -> tuple[int, int]:
        return sum(c for c, _ in self.counts.values()), sum(t for _, t in self.counts.values())

    def to_json(self) -> dict[str, Any]:
        covered, testable = self.covered()
        return {
            "suite": self.suite, "map": self.map_file, "statements": self.statements,
            "covered": covered, "testable": testable,
            "by_keyword": {g: {"covered": c, "testable": t} for g, (c, t) in self.counts.items()},
            "uncovered": self.uncovered, "unobservable": self.unobservable,
            "unmapped_checks": self.unmapped_checks, "unknown_checks": self.unknown_checks,
            "problems": self.problems,
        }


def _brief(statement: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "section", "keyword", "level", "quote", "reason")
    return {k: statement[k] for k in keys if k in statement}


def coverage(suite: SuiteSpec) -> Coverage:
    path = map_path(suite)
    if not path.is_file():
        return Coverage(suite.name, None, problems=["no requirement map"])
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HarnessError(f"requirement map {path} cannot be read: {exc}") from None
    out = Coverage(suite.name, str(path))
    out.problems = [f"does not match the requirement-map schema at {e}" for e in schema_errors(doc)]
    if out.problems:
        return out
    if doc["spec"] != suite.name:
        out.problems.append(f"the map is for {doc['spec']!r}, not {suite.name!r}")
    registered = {c.id for c in REGISTRY.for_suite(suite.name)}
    mapped: set[str] = set()
    out.counts = {g: [0, 0] for g in GROUPS}
    out.statements = len(doc["statements"])
    for st in doc["statements"]:
        named = set(st["checks"])
        mapped |= named
        out.unknown_checks += sorted(f"{st['id']}: {c}" for c in named - registered)
        if not st["observable"]:
            out.unobservable.append(_brief(st))
            continue
        counts = out.counts[KEYWORD_GROUPS[st["keyword"]]]
        counts[1] += 1
        if named & registered:
            counts[0] += 1
        else:
            out.uncovered.append(_brief(st))
    out.counts = {g: c for g, c in out.counts.items() if c[1]}
    out.unmapped_checks = sorted(registered - mapped)
    return out


def render_text(cov: Coverage) -> list[str]:
    if cov.map_file is None:
        return [f"{cov.suite}: no requirement map"]
    lines = [f"{cov.suite} ({cov.map_file})"]
    if cov.problems and not cov.counts:
        return lines + [f"  problem: {p}" for p in cov.problems]
    covered, testable = cov.covered()
    parts = ", ".join(f"{g} {c}/{t}" for g, (c, t) in cov.counts.items())
    lines.append(f"  {covered}/{testable} testable statements covered ({parts}); "
                 f"{len(cov.unobservable)} not observable; {cov.statements} statements")
    for st in cov.uncovered:
        lines.append(f"  uncovered     {st['id']} [{st['keyword']}] {_short(st['quote'])}")
    for st in cov.unobservable:
        lines.append(f"  unobservable  {st['id']} [{st['keyword']}] {_short(st['quote'])} -- {st.get('reason', '')}")
    lines += [f"  check mapped to no statement: {c}" for c in cov.unmapped_checks]
    lines += [f"  statement names a check that does not exist: {c}" for c in cov.unknown_checks]
    lines += [f"  problem: {p}" for p in cov.problems]
    return lines


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= width else text[: width - 1] + "…", ensure_ascii=False)


# ---- domain coverage: which value classes and parameter pairs a run judged ---------------------

@dataclass
class DomainCoverage:
    suite: str
    table: str | None
    fields: int = 0
    classes: int = 0
    pairs: int = 0
    planned_pairs: dict[str, int] = field(default_factory=dict)  # profile -> pairs its plan covers
    planned_rows: dict[str, int] = field(default_factory=dict)  # profile -> combinations its plan sends
    run: dict[str, Any] | None = None  # the figures a report recorded (harness/kit/domain.py run_note)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "table": self.table, "fields": self.fields, "classes": self.classes, "pairs": self.pairs,
                "planned_pairs": self.planned_pairs, "planned_rows": self.planned_rows, "run": self.run, "problems": self.problems}


PLAN_PROFILES = ("ci", "default", "thorough")


def domain_coverage(suite: SuiteSpec, report: Path | None = None) -> DomainCoverage:
    """The suite's table (fields, classes, pairs), the pairs each profile's covering arrays reach, and
    with a report the classes and pairs that run judged."""
    from ..kit import domain

    path = domain.table_path(suite)
    if not path.is_file():
        return DomainCoverage(suite.name, None)
    out = DomainCoverage(suite.name, str(path))
    try:
        table = domain.load_path(path)
    except HarnessError as exc:
        out.problems.append(str(exc))
        return out
    universe: set[tuple[str, str]] = set()
    for combo in table.combinations:
        universe |= table.pair_universe(combo["id"])
    out.fields, out.classes, out.pairs = len(table.fields), len(table.classes()), len(universe)
    for profile in PLAN_PROFILES:
        planned: set[tuple[str, str]] = set()
        rows = 0
        for combo in table.combinations:
            plan = domain.plan(table, combo["id"], profile)
            planned |= domain.rows_pairs(plan)
            rows += len(plan)
        out.planned_pairs[profile] = len(planned & universe)
        out.planned_rows[profile] = rows
    if report is not None:
        out.run = recorded_domain(report, suite.name)
    return out


def recorded_domain(report: Path, suite: str) -> dict[str, Any] | None:
    """The domain figures of one suite in a report.jsonl (or the folder holding it)."""
    path = report / "report.jsonl" if report.is_dir() else report
    try:
        lines = path.read_text("utf-8").split("\n")  # JSON Lines: "\n" alone ends a record
    except OSError as exc:
        raise HarnessError(f"report {path} cannot be read: {exc}") from None
    for line in reversed(lines):
        record = json.loads(line) if line.strip() else {}
        if record.get("type") == "footer":
            for note in record.get("notes", []):
                if note.get("suite") == suite and isinstance(note.get("domain"), dict):
                    return dict(note["domain"])
            return None
    return None


def render_domain(cov: DomainCoverage) -> list[str]:
    if cov.table is None:
        return [f"{cov.suite}: no domain table"]
    lines = [f"{cov.suite} ({cov.table})"]
    lines += [f"  problem: {p}" for p in cov.problems]
    if cov.problems:
        return lines
    plans = (", ".join(f"{p} {n}/{cov.pairs} in {cov.planned_rows[p]} rows" for p, n in cov.planned_pairs.items())
             if cov.pairs else "no parameter sets combined")
    lines.append(f"  table: {cov.fields} fields, {cov.classes} value classes, {cov.pairs} parameter pairs (pairs planned: {plans})")
    if cov.run is None:
        lines.append("  run: no figures (pass --report reports/latest after a `memconform run`)")
        return lines
    run = cov.run
    pairs = f"{100 * run['pairs_judged'] / run['pairs_total']:.0f}% of pairs ({run['pairs_judged']}/{run['pairs_total']})" if run["pairs_total"] else "no pairs"
    lines.append(f"  run: domain: {run['classes_judged']}/{run['classes_total']} classes judged "
                 f"({run['classes_reached']} reached), {pairs}")
    if run["unreached"]:
        lines.append(f"  not judged: {', '.join(run['unreached'][:12])}{' ...' if len(run['unreached']) > 12 else ''}")
    return lines
