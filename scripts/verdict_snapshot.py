"""Every check's verdict on every embedded reference and every mutant, as one JSON matrix.

A move of code (a file split, a helper made one) must not change a verdict. Take a snapshot
before, one after, and compare them:

    python scripts/verdict_snapshot.py --out before.json
    ... move code ...
    python scripts/verdict_snapshot.py --out after.json --compare before.json

The matrix is {suite: {row: {check id: outcome}}}, a row being "reference" or a mutant's name;
timings and messages are left out, so only verdicts are compared. Each row runs in its own
process (two at a time), with the `ci` profile (its fixed seed). `--suite` limits it to some
suites, `--check` some checks (the rows are still every mutant of their suites). A `--check` is a check id
(`omp.export_document_envelope`) or a bare name one suite alone registers (`export_document_envelope`); an unknown
name, a bare name two suites register, a check outside every `--suite` given, or an unknown `--suite` is refused
with exit 2 before any row runs (a row given no check of its own would run every check; an unknown suite, no row). Exit 0 when nothing differs (or nothing
was compared), 1 when a verdict changed.

The check and run budgets are the `ci` profile's times ten, as in the tests (tests/conftest.py), so a busy
machine does not turn a verdict into "errored" (the budget ran out) and show a move of code as a change:
`--budget-scale` (else $MEMCONFORM_BUDGET_SCALE, else 10) sets the factor, and the output names it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# the tests' factor (tests/conftest.py LIFTED_BUDGETS): budgets are for hostile targets, not for a busy machine
LIFTED_BUDGETS = "10"


def lift_budgets(given: str | None) -> str:
    """Set $MEMCONFORM_BUDGET_SCALE for every row's process (they inherit it): `given`, else the value already
    set, else LIFTED_BUDGETS; a value that is not a positive number is refused. Returns the line that says so."""
    from memconform.core.profile import BUDGET_SCALE_ENV, budget_scale

    source = "--budget-scale" if given is not None else ("$" + BUDGET_SCALE_ENV if os.environ.get(BUDGET_SCALE_ENV, "").strip()
                                                          else "the tests' factor")
    os.environ[BUDGET_SCALE_ENV] = given if given is not None else os.environ.get(BUDGET_SCALE_ENV, "").strip() or LIFTED_BUDGETS
    return f"budgets: the ci profile's times {budget_scale():g} ({BUDGET_SCALE_ENV}={os.environ[BUDGET_SCALE_ENV]}, from {source})"


def rows(suites: list[str]) -> list[tuple[str, str]]:
    from memconform.core.suite import all_suites

    found = []
    for spec in all_suites():
        if spec.name not in suites and suites:
            continue
        found.append((spec.name, "reference"))
        table = spec.mutant_table()
        if table is not None:
            found.extend((spec.name, name) for name in table.names)
    return found


def qualified_checks(names: list[str], suites: list[str]) -> list[str]:
    """Each `--check` as its check id (see the module): a registered id kept, a bare name one suite registers
    qualified with it. Raises ValueError naming every name it cannot place, and every `--suite` none of them is of."""
    import difflib

    from memconform.core.suite import all_suites, get_suite

    specs = [get_suite(s) for s in suites] if suites else all_suites()
    known = {check_id for spec in specs for check_id in spec.registered()}
    problems, found = [], []
    for name in names:
        if name in known:
            found.append(name)
            continue
        owners = sorted(c for c in known if c.split(".", 1)[1] == name)
        if len(owners) == 1:
            found.append(owners[0])
            continue
        where = f"the suites {', '.join(sorted(suites))}" if suites else "any suite"
        if owners:
            problems.append(f"{name!r} is a check of more than one suite ({', '.join(owners)}): give its id")
        else:
            near = difflib.get_close_matches(name, sorted(known | {c.split(".", 1)[1] for c in known}), n=3)
            problems.append(f"{name!r} is no check of {where}" + (f" (did you mean {', '.join(near)}?)" if near else
                                                                    "; `memconform list` shows the check ids"))
    idle = sorted(set(suites) - {c.split(".", 1)[0] for c in found})
    if idle:
        problems.append(f"--suite {', '.join(idle)}: no --check names a check of it (its rows would run every check)")
    if problems:
        raise ValueError("; ".join(problems))
    return list(dict.fromkeys(found))


def verdicts(suite: str, row: str, checks: list[str] | None = None) -> dict[str, str]:
    from memconform.core.profile import Profile
    from memconform.core.suite import get_suite
    from memconform.run.session import execute_run

    stop = None
    target = None
    if row != "reference":
        table = get_suite(suite).mutant_table()
        assert table is not None
        if row in table.http_only and table.http_app is not None:
            from memconform.kit.loopback import serve_in_thread

            target, stop = serve_in_thread(table.http_app(row))
        else:
            target = table.target(row)
    try:
        outcome = execute_run([suite], target, Profile.named("ci"), report_dir=None, check_ids=checks)
    finally:
        if stop is not None:
            stop()
    return {r.check_id: r.outcome.value for r in outcome.results}


def _job(args: tuple[str, str, list[str]]) -> tuple[str, str, dict[str, str]]:
    suite, row, checks = args
    try:
        return suite, row, verdicts(suite, row, [c for c in checks if c.startswith(suite + ".")] or None)
    except Exception as exc:  # a row that cannot run is itself a result to compare
        return suite, row, {"<run>": f"raised {type(exc).__name__}"}


def snapshot(suites: list[str], workers: int, checks: list[str]) -> dict[str, dict[str, dict[str, str]]]:
    matrix: dict[str, dict[str, dict[str, str]]] = {}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1) as pool:
        for suite, row, found in pool.map(_job, [(suite, row, checks) for suite, row in rows(suites)]):
            matrix.setdefault(suite, {})[row] = dict(sorted(found.items()))
            print(f"{suite}:{row} {sum(v == 'failed' for v in found.values())} failed", file=sys.stderr)
    return matrix


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = []
    for suite in sorted(set(before) | set(after)):
        old_rows, new_rows = before.get(suite, {}), after.get(suite, {})
        for row in sorted(set(old_rows) | set(new_rows)):
            old, new = old_rows.get(row), new_rows.get(row)
            if old is None or new is None:
                lines.append(f"{suite}:{row} only {'after' if old is None else 'before'}")
                continue
            for check in sorted(set(old) | set(new)):
                if old.get(check) != new.get(check):
                    lines.append(f"{suite}:{row} {check}: {old.get(check, 'absent')} -> {new.get(check, 'absent')}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="an earlier snapshot to compare with")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--check", action="append", default=[], help="only this check (repeatable; its suite's rows)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget-scale", help=f"multiply the ci profile's check and run budgets (default: "
                        f"$MEMCONFORM_BUDGET_SCALE, else {LIFTED_BUDGETS})")
    args = parser.parse_args(argv)
    from memconform.core.results import HarnessError

    try:
        scale_line = lift_budgets(args.budget_scale)
    except HarnessError as exc:
        parser.error(str(exc))
    try:  # before any row runs: a name that places no check must not become "every check", nor a suite no row
        checks = qualified_checks(args.check, args.suite) if args.check else []
        if not args.check:
            from memconform.core.suite import get_suite

            for name in args.suite:
                get_suite(name)
    except (ValueError, HarnessError) as exc:
        parser.error(f"--check: {exc}" if args.check else f"--suite: {exc}")
    print(scale_line, file=sys.stderr)
    suites = args.suite or sorted({c.split(".")[0] for c in checks})
    matrix = snapshot(suites, args.workers, checks)
    args.out.write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n")
    total = sum(len(r) for s in matrix.values() for r in s.values())
    print(f"{sum(len(s) for s in matrix.values())} rows, {total} verdicts -> {args.out}; {scale_line}")
    if args.compare is None:
        return 0
    changed = differences(json.loads(args.compare.read_text()), matrix)
    print("\n".join(changed) or "no verdict changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
