"""Write docs/open-points.md: every open point of the five specs (an errata id) that a check observes, with
the checks that meet it, and whether the suite's table of readings holds it.

A suite with a table of readings (a module `table.py` in its package exporting TABLE, a ReadingTable whose
rows name the checks that meet each point, and optionally STANDS_FOR, {name: what it stands for} for a row's
checks that name a shared helper) has its points read from it, whatever its name. The other suites' points
are found in the source, a string constant naming the point (`ctx.observe("E14", ...)`) inside a function that a registered check reaches through the
suite's own functions (called by name, through a module of the suite, or a class's methods). That scan
over-approximates where a shared helper (the client's import, the writer's call) observes a point for every
check that calls it, which is what those checks meet.

    python scripts/open_points.py          # write docs/open-points.md
    python scripts/open_points.py --check  # exit 1 when the file on disk differs
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "open-points.md"


def suites() -> list[str]:
    """Every suite package with an errata.md, by name."""
    return sorted(p.name for p in (ROOT / "suites").iterdir() if (p / "errata.md").is_file())


def point_pattern(suite: str) -> re.Pattern[str]:
    """A point id of this suite: the letters its errata headings use, then a number."""
    letters = sorted({re.match(r"[A-Z]+", point).group() for point in titles(suite)})  # type: ignore[union-attr]
    return re.compile(rf"(?:{'|'.join(letters)})\d+")


def titles(suite: str) -> dict[str, str]:
    """{point: its errata heading}."""
    found = {}
    for line in (ROOT / "suites" / suite / "errata.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"## ([A-Z]+\d+)\.? (.*)", line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def scanned(suite: str) -> dict[str, set[str]]:
    """{point: the registered checks reaching a function that names it}."""
    pattern = point_pattern(suite)
    funcs: dict[str, tuple[set[str], set[str], bool]] = {}
    for path in sorted((ROOT / "suites" / suite).rglob("*.py")):
        if {"mutants", "reference"} & set(path.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {a.asname or a.name.split(".")[-1] for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
                   for a in n.names}
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.ClassDef):
                continue
            points = {n.value for n in ast.walk(node)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str) and pattern.fullmatch(n.value)}
            called = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            owners = aliases | ({"self"} if isinstance(node, ast.ClassDef) else set())
            called |= {n.attr for n in ast.walk(node)
                       if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in owners}
            is_check = isinstance(node, ast.FunctionDef) and any(".check" in ast.unparse(d) for d in node.decorator_list)
            old = funcs.get(node.name, (set(), set(), False))
            funcs[node.name] = (old[0] | points, old[1] | called, old[2] or is_check)

    def reached(name: str, seen: frozenset[str]) -> set[str]:
        if name in seen or name not in funcs:
            return set()
        points, called, _ = funcs[name]
        return set(points).union(*(reached(c, seen | {name}) for c in called))

    table: dict[str, set[str]] = defaultdict(set)
    for name, (_, _, is_check) in funcs.items():
        if is_check:
            for point in reached(name, frozenset()):
                table[point].add(name)
    return table


def has_table(suite: str) -> bool:
    """Does the suite keep its readings in one table (suites/<suite>/table.py)?"""
    return (ROOT / "suites" / suite / "table.py").is_file()


def table_points(suite: str) -> tuple[dict[str, set[str]], dict[str, str]]:
    """({point: the checks its rows name}, {a helper's name: what it stands for}) of a suite's table."""
    module = importlib.import_module(f"memconform.suites.{suite}.table")
    found: dict[str, set[str]] = defaultdict(set)
    for row in module.TABLE:
        found[row.point] |= set(row.checks)
    return found, dict(getattr(module, "STANDS_FOR", {}))


def number(point: str) -> tuple[str, int]:
    return point[0], int(re.sub(r"\D", "", point))


def render() -> str:
    lines = ["# Open points and the checks that meet them", "",
             "Written by `scripts/open_points.py` (`--check` in tests/test_open_points.py keeps it true). An open point is",
             "an errata entry whose text allows more than one answer; a check meets it when it observes which reading a",
             "target follows. Where several checks meet one point, each must accept every reading's answer: a suite keeps",
             "them in one table of readings (suites/<suite>/table.py, TABLE) whose every row tests/test_<suite>_one_table.py",
             "walks; a suite without one has its points listed here from its source (each of its checks still reads its",
             "own prediction; no walk holds them yet).", ""]
    for suite in suites():
        heads = titles(suite)
        stands_for: dict[str, str] = {}
        if has_table(suite):
            found, stands_for = table_points(suite)
            where = f"in its table of readings (suites/{suite}/table.py)"
        else:
            found, where = scanned(suite), "no table of readings yet"
        several = sum(len(checks) > 1 for checks in found.values())
        lines += [f"## {suite}", "", f"{len(found)} points observed, {several} met by more than one check; {where}.", ""]
        if stands_for:
            lines += [f"`{name}` stands for {meaning}." for name, meaning in stands_for.items()] + [""]
        lines += ["| point | errata | checks that meet it |", "|---|---|---|"]
        for point in sorted(found, key=number):
            checks = ", ".join(f"`{c}`" for c in sorted(found[point]))
            title = heads.get(point, "(not an errata heading)").replace("|", "\\|")
            lines.append(f"| {point} | {title} | {len(found[point])}: {checks} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/open-points.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/open_points.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
