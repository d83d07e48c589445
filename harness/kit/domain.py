"""Domain tables: every field and request parameter of a spec, its limits and its value classes.

A suite's table is data (suites/<spec>/domain.json, schema harness/schemas/domain.schema.json),
written by scripts/make_domain_tables.py from the machine-readable sources and the prose. This
module loads and validates a table, turns each class into concrete values (the generators of
domain_values.py), builds covering arrays over the valid classes of a parameter set, and keeps the
run's ledger of which classes and pairs reached the target and were judged (the run note and
`memconform coverage --domain` read it).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..core.results import HarnessError
from .domain_values import ABSENT, GENERATORS, fill, generate

__all__ = ["ABSENT", "GENERATORS", "Domain", "DomainLedger", "Field", "ValueClass", "fill", "generate", "load", "plan", "same_number"]


EXPECTS = ("valid", "invalid", "open")
NUMBER_COMPARISONS = {"number": "double", "integer": "exact"}


# ---- the table ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ValueClass:
    field: str
    id: str
    gen: str
    expect: str
    args: dict[str, Any]
    why: str = ""
    combine: bool = True

    @property
    def key(self) -> str:
        return f"{self.field}:{self.id}"

    def values(self) -> list[Any]:
        """The concrete values of this class (a pair class gives two)."""
        return generate(self.gen, **self.args)

    def value(self) -> Any:
        return self.values()[0]


@dataclass(frozen=True)
class Field:
    id: str
    where: str
    operations: tuple[str, ...]
    type: str
    required: bool
    section: str
    sentence: str
    origin: str
    classes: tuple[ValueClass, ...]
    limits: dict[str, Any]
    enum: tuple[str, ...] = ()
    nullable: bool = False

    def cls(self, class_id: str) -> ValueClass:
        for c in self.classes:
            if c.id == class_id:
                return c
        raise KeyError(f"{self.id} has no class {class_id!r}")

    def of(self, expect: str) -> list[ValueClass]:
        return [c for c in self.classes if c.expect == expect]

    @property
    def number_comparison(self) -> str | None:
        """How a number of this field read back is compared with the one sent: "double" where the spec
        types it a float or a JSON number with no integer rule (an implementation may hold it as an
        IEEE-754 double, so 2^53 + 1 may come back 2^53), "exact" for an integer; None: not a number."""
        return NUMBER_COMPARISONS.get(self.type)


@dataclass(frozen=True)
class Domain:
    spec: str
    spec_text: str
    fields: tuple[Field, ...]
    combinations: tuple[dict[str, Any], ...]

    def field(self, field_id: str) -> Field:
        for f in self.fields:
            if f.id == field_id:
                return f
        raise KeyError(f"{self.spec} domain has no field {field_id!r}")

    def for_operation(self, op: str, where: Iterable[str] | None = None) -> list[Field]:
        places = set(where) if where is not None else None
        return [f for f in self.fields if op in f.operations and (places is None or f.where in places)]

    def classes(self) -> list[ValueClass]:
        return [c for f in self.fields for c in f.classes]

    def combination(self, combo_id: str) -> dict[str, Any]:
        for combo in self.combinations:
            if combo["id"] == combo_id:
                return combo
        raise KeyError(f"{self.spec} domain has no combination {combo_id!r}")

    def pair_universe(self, combo_id: str) -> set[tuple[str, str]]:
        """Every pair of valid classes of two different parameters of a combination."""
        factors = self.factors(combo_id)
        return {tuple(sorted((a.key, b.key))) for (_, xs), (_, ys) in itertools.combinations(factors, 2)  # type: ignore[misc]
                for a in xs for b in ys}

    def factors(self, combo_id: str) -> list[tuple[str, list[ValueClass]]]:
        combo = self.combination(combo_id)
        return [(p, [c for c in self.field(p).of("valid") if c.combine]) for p in combo["parameters"]]


def same_number(got: Any, sent: Any, comparison: str) -> bool:
    """`got` (read back) is `sent` as the field's comparison reads numbers (Field.number_comparison):
    "double" rounds both to the nearest IEEE-754 double (beyond the largest, to an infinity) before
    comparing, so -0.0 is 0 and 9007199254740992.0 is 9007199254740993; "exact" compares the values
    as they are, so 5.0 is 5 but 2^53 is not 2^53 + 1. A boolean is never a number."""
    if comparison not in ("double", "exact"):
        raise ValueError(f"unknown number comparison {comparison!r}")
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (got, sent)):
        return False
    return as_double(got) == as_double(sent) if comparison == "double" else bool(got == sent)


def as_double(number: int | float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer beyond the largest double rounds to an infinity, as a parser does
        return float("inf") if number > 0 else float("-inf")


def schema() -> dict[str, Any]:
    # imported only here: a MemoryAI bundle's validate loads the table (its readings name the open classes), not this
    from importlib import resources

    loaded: dict[str, Any] = json.loads(resources.files("memconform").joinpath("schemas/domain.schema.json").read_text("utf-8"))
    return loaded


def schema_errors(doc: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema())
    return [f"{e.json_path}: {e.message}" for e in sorted(validator.iter_errors(doc), key=lambda e: e.json_path)]


def table_problems(doc: dict[str, Any]) -> list[str]:
    """What the schema cannot say: unique ids, known generators, combinations over known fields."""
    problems = []
    ids = [f["id"] for f in doc["fields"]]
    problems += [f"field {i!r} is listed twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for f in doc["fields"]:
        class_ids = [c["id"] for c in f["classes"]]
        problems += [f"{f['id']}: class {i!r} is listed twice" for i in sorted({i for i in class_ids if class_ids.count(i) > 1})]
        for c in f["classes"]:
            if c["gen"] not in GENERATORS:
                problems.append(f"{f['id']}:{c['id']}: unknown generator {c['gen']!r}")
                continue
            try:
                generate(c["gen"], **c.get("args", {}))
            except (TypeError, ValueError) as exc:
                problems.append(f"{f['id']}:{c['id']}: the generator refuses its arguments ({exc})")
    for combo in doc["combinations"]:
        unknown = [p for p in combo["parameters"] if p not in ids]
        problems += [f"combination {combo['id']}: unknown parameter {p!r}" for p in unknown]
    return problems


def table_path(suite: Any) -> Path:
    """suites/<spec>/domain.json: beside the suite's requirement map (SuiteSpec.requirements)."""
    from .fixtures_loader import fixture_root

    base = suite.requirements.parent if suite.requirements is not None else fixture_root() / suite.name
    return Path(base) / "domain.json"


def parse(doc: dict[str, Any]) -> Domain:
    fields = []
    for f in doc["fields"]:
        classes = tuple(ValueClass(f["id"], c["id"], c["gen"], c["expect"], dict(c.get("args", {})), c.get("why", ""),
                                   c.get("combine", True)) for c in f["classes"])
        fields.append(Field(f["id"], f["where"], tuple(f["operations"]), f["type"], f["required"], f["section"],
                            f["sentence"], f["origin"], classes, dict(f.get("limits", {})), tuple(f.get("enum", ())),
                            bool(f.get("nullable", False))))
    return Domain(doc["spec"], doc["spec_text"], tuple(fields), tuple(doc["combinations"]))


def load_path(path: Path, schema_checked: bool = True, rules_checked: bool = True) -> Domain:
    """The domain table at `path`, held to its schema (unless `schema_checked` is False) and its own rules
    (unless `rules_checked` is False)."""
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"domain table {path} cannot be read: {exc}") from None
    problems = (schema_errors(doc) if schema_checked else []) or (table_problems(doc) if rules_checked else [])
    if problems:
        raise HarnessError(f"domain table {path} is not valid: " + "; ".join(problems[:5]))
    return parse(doc)


@cache
def load(suite_name: str) -> Domain | None:
    """The suite's domain table, or None when it has none."""
    from ..core.suite import get_suite

    path = table_path(get_suite(suite_name))
    # a suite's own table is shipped data, held to its schema and its own rules (table_problems) by
    # tests/test_domain.py: a run or a `validate` neither imports jsonschema for it (~30 ms of a MemoRizz
    # file's validate once) nor generates every class's values to check their arguments (~0.8 ms of a
    # MemoryAI bundle's validate, whose table of readings names the open classes)
    return load_path(path, schema_checked=False, rules_checked=False) if path.is_file() else None


def required(suite_name: str) -> Domain:
    """The suite's domain table, for the checks that draw from it: a missing one is a harness error."""
    from ..core.results import HarnessError

    found = load(suite_name)
    if found is None:
        raise HarnessError(f"suites/{suite_name}/domain.json is missing (scripts/make_domain_tables.py writes it)")
    return found


def ledger(ctx: Any) -> DomainLedger:
    """The run's ledger of the classes and pairs judged (one per run, shared by the suite's checks)."""
    return ctx.state(DomainLedger)


# ---- covering arrays ---------------------------------------------------------------------------

Row = dict[str, Any]


def each_choice(factors: Sequence[tuple[str, Sequence[Any]]]) -> list[Row]:
    """The smallest rows in which every level of every factor appears once (strength 1)."""
    width = max((len(levels) for _, levels in factors), default=0)
    return [{name: levels[i % len(levels)] for name, levels in factors} for i in range(width)]


def pairwise(factors: Sequence[tuple[str, Sequence[Any]]]) -> list[Row]:
    """A covering array of strength 2: every pair of levels of two factors appears in some row.

    Greedy (in the manner of AETG): each new row starts from an uncovered pair and fills the other
    factors with the level covering most still-uncovered pairs; deterministic (first best wins).
    """
    names = [n for n, _ in factors]
    levels = {n: list(ls) for n, ls in factors}
    if any(not ls for ls in levels.values()):
        raise ValueError("every factor needs at least one level")
    if len(names) < 2:
        return [{names[0]: v} for v in levels[names[0]]] if names else []
    uncovered = {((a, i), (b, j)) for a, b in itertools.combinations(names, 2)
                 for i in range(len(levels[a])) for j in range(len(levels[b]))}
    rows: list[dict[str, int]] = []
    while uncovered:
        (a, i), (b, j) = min(uncovered, key=lambda p: (names.index(p[0][0]), p[0][1], names.index(p[1][0]), p[1][1]))
        row = {a: i, b: j}
        for name in names:
            if name in row:
                continue
            def score(k: int, name: str = name, row: dict[str, int] = row, left: set[Any] = uncovered) -> tuple[int, int]:
                return _gain(row, name, k, left), -k

            row[name] = max(range(len(levels[name])), key=score)
        rows.append(row)
        uncovered -= set(_pairs_of(row, names))
    return [{n: levels[n][k] for n, k in row.items()} for row in rows]


def _pairs_of(row: dict[str, int], names: list[str]) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    for a, b in itertools.combinations([n for n in names if n in row], 2):
        yield (a, row[a]), (b, row[b])


def _gain(row: dict[str, int], name: str, level: int, uncovered: set[Any]) -> int:
    gain = 0
    for other, k in row.items():
        pair = ((other, k), (name, level))
        gain += pair in uncovered or (pair[1], pair[0]) in uncovered
    return gain


def rows_pairs(rows: Iterable[Row]) -> set[tuple[str, str]]:
    """The (sorted) pairs of class keys a set of rows covers; row values are ValueClass."""
    out: set[tuple[str, str]] = set()
    for row in rows:
        keys = sorted(v.key for v in row.values())
        out |= set(itertools.combinations(keys, 2))
    return out


def plan(domain: Domain, combo_id: str, profile_name: str) -> list[Row]:
    """The rows a run sends for a combination: ci each valid class once (a fixed covering subset),
    default and strict every pair, thorough every pair and each class of the first factor with
    every pair of the others (more triples)."""
    factors = domain.factors(combo_id)
    if profile_name == "ci":
        return each_choice(factors)
    rows = pairwise(factors)
    if profile_name == "thorough" and len(factors) > 2:
        (first, levels), rest = factors[0], factors[1:]
        rows += [dict(r, **{first: lv}) for lv in levels for r in pairwise(rest)]
    return rows


# ---- the run's ledger --------------------------------------------------------------------------

@dataclass
class DomainLedger:
    """Which classes and pairs of this suite's table reached the target, and which were judged."""

    reached: set[str] = field(default_factory=set)
    judged: set[str] = field(default_factory=set)
    pairs: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # combination -> judged pairs
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sent(self, keys: Iterable[str]) -> None:
        with self.lock:
            self.reached |= set(keys)

    def judge(self, keys: Iterable[str]) -> None:
        """The answer to a request carrying these classes was compared with what the spec allows."""
        keys = set(keys)
        with self.lock:
            self.reached |= keys
            self.judged |= keys

    def judge_row(self, combo_id: str, row: Row) -> None:
        self.judge(v.key for v in row.values())
        with self.lock:
            self.pairs.setdefault(combo_id, set()).update(rows_pairs([row]))


@dataclass(frozen=True)
class DomainFigures:
    suite: str
    classes_total: int
    classes_judged: int
    classes_reached: int
    pairs_total: int
    pairs_judged: int
    unreached: tuple[str, ...]

    def text(self, profile: str = "ci") -> str:
        pairs = (f"{100 * self.pairs_judged / self.pairs_total:.0f}% of pairs ({self.pairs_judged}/{self.pairs_total})"
                 if self.pairs_total else "no parameter pairs")
        line = f"domain: {self.classes_judged}/{self.classes_total} classes judged, {pairs}"
        if 0 < self.pairs_judged < self.pairs_total:
            line += (" (a fixed covering subset; --profile default reaches every pair)" if profile == "ci"
                     else " (rows the target did not take, or checks not run, left pairs out)")
        if not self.classes_judged:
            line += " (no check of this suite draws from its table yet)"
        elif self.unreached:
            line += f"; not judged: {', '.join(self.unreached[:6])}{' ...' if len(self.unreached) > 6 else ''}"
        return line

    def to_json(self) -> dict[str, Any]:
        return {"classes_total": self.classes_total, "classes_judged": self.classes_judged,
                "classes_reached": self.classes_reached, "pairs_total": self.pairs_total,
                "pairs_judged": self.pairs_judged, "unreached": list(self.unreached)}


def figures(domain: Domain, ledger: DomainLedger | None) -> DomainFigures:
    ledger = ledger or DomainLedger()
    every = [c.key for c in domain.classes()]
    universe: set[tuple[str, str]] = set()
    for combo in domain.combinations:
        universe |= domain.pair_universe(combo["id"])
    judged_pairs = set().union(*ledger.pairs.values()) & universe if ledger.pairs else set()
    return DomainFigures(domain.spec, len(every), sum(1 for k in every if k in ledger.judged),
                         sum(1 for k in every if k in ledger.reached), len(universe), len(judged_pairs),
                         tuple(k for k in every if k not in ledger.judged))


def run_note(suite_name: str, ctx: Any) -> dict[str, Any] | None:
    """The footer note of a suite with a domain table: its class and pair coverage in this run."""
    try:
        domain = load(suite_name)
    except HarnessError as exc:
        return {"suite": suite_name, "note": f"domain: the table cannot be used ({exc})"}
    if domain is None:
        return None
    found = figures(domain, ctx.state(DomainLedger))
    profile = getattr(getattr(ctx, "profile", None), "name", "ci")
    return {"suite": suite_name, "note": found.text(profile), "domain": found.to_json()}

