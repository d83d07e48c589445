"""The `memconform` subcommands that need no target: `validate` (one document), `list` (the checks
and profile options), `coverage` (the requirement maps)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.registry import REGISTRY
from ..core.results import Outcome, Result
from ..core.suite import all_suites, get_suite
from ..core.wording import plural, shown_value, visible
from .common import profile_from_args
from .json_output import dumps

if TYPE_CHECKING:
    import argparse


def open_stream(path: Path, wanted: str | None) -> tuple[str, Any] | None:
    """validate.open_stream, imported when first used (it reads the suites' stream formats)."""
    from ..run.validate import open_stream as opened

    return opened(path, wanted)


def _same_cause(r: Result) -> tuple[Any, ...]:
    first = r.failures[0].to_json() if r.failures else {}
    return (r.outcome, r.reason, first.get("title"), first.get("path"), len(r.failures))


def _show(text: str) -> None:
    """A line about a handed document: its own words shown, never obeyed by the terminal."""
    print(visible(text))


def _print_validation(results: list[Result], warnings: list[Result]) -> None:
    """Each problem with received, expected and path; checks that share one cause are printed once."""
    groups: dict[tuple[Any, ...], list[Result]] = {}
    for r in results:
        if r.outcome in (Outcome.FAILED, Outcome.ERRORED):
            groups.setdefault(_same_cause(r), []).append(r)
    for same in groups.values():
        r = same[0]
        tag = "WARN " if r in warnings else ("ERROR" if r.outcome is Outcome.ERRORED else "FAIL ")
        _show(f"{tag} {r.check_id} [{r.section} {r.keyword}]")
        if len(same) > 1:
            _show(f"      the same cause in {len(same) - 1} more: {', '.join(x.check_id for x in same[1:])}")
        for f in r.failures[:20]:
            j = f.to_json()
            _show(f"      {j['title']}")
            _show(f"        at {j['path']}")
            _show(f"        received {shown_value(j['received'])}")  # a string as itself, not a JSON string of JSON
            _show(f"        expected {shown_value(j['expected'])}")
        if len(r.failures) > 20:
            _show(f"      ... and {len(r.failures) - 20} more")
        if r.reason:
            _show(f"      {r.reason}")


def cmd_validate(args: argparse.Namespace) -> int:
    from ..run.validate import validate_file

    profile = profile_from_args(args)
    suite, how, results = validate_file(Path(args.file), args.format, profile, args.check or None, args.max_bytes)
    invalid = [r for r in results if r.blocking and r.outcome is Outcome.FAILED]
    errored = [r for r in results if r.outcome is Outcome.ERRORED]
    warnings = [r for r in results if r.outcome is Outcome.FAILED and not r.blocking]
    verdict = "invalid" if invalid else "not assessed" if errored else "valid"
    if args.json:
        _show(dumps("validate", {
            "file": args.file, "format": suite.name, "named_by": how, "verdict": verdict, "profile": profile.name,
            "failed": [r.check_id for r in invalid], "warnings": [r.check_id for r in warnings],
            "errored": [r.check_id for r in errored],
            "results": [r.to_json() for r in results if r.outcome is not Outcome.PASSED],
        }))
    else:
        _print_validation(results, warnings)
        named = "" if how in ("detected", "--format") else f" (named by {how})"
        _show(f"{args.file}: {suite.name}{named} {verdict} ({len(invalid)} failed, {len(errored)} errored, "
              f"{plural(len(warnings), 'warning')}, {plural(len(results), 'check')})")
    return 0 if verdict == "valid" else 1


def cmd_list(args: argparse.Namespace) -> int:
    checks = REGISTRY.for_suite(args.suite) if args.suite else REGISTRY.all()
    if args.options and args.json:
        print(dumps("options", {"options": [
            {"name": f"{suite.name}.{o.name}", "suite": suite.name, "default": o.default, "choices": list(o.choices),
             "help": o.help}
            for suite in all_suites() for o in suite.options]}))
        return 0
    if args.options:
        for suite in all_suites():
            for o in suite.options:
                print(f"{suite.name}.{o.name} = {o.default}  (choices: {', '.join(o.choices)})  {o.help}")
        return 0
    if args.json:
        print(dumps("list", {"checks": [ch.to_json() for ch in checks]}))
        return 0
    for line in check_table(checks):
        print(line)
    print(plural(len(checks), "check"))
    return 0


def check_table(checks: list[Any], sentence_width: int = 90) -> list[str]:
    """Every check as one row of aligned columns (widths from the longest value), headed."""
    rows = [("check", "section", "keyword", "level", "sentence")]
    rows += [(ch.id, ch.section, ch.keyword.value, ch.level, _cut(" ".join(ch.sentence.split()), sentence_width))
             for ch in checks]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(v.ljust(w) for v, w in zip(r[:4], widths, strict=True)) + "  " + r[4] for r in rows]


def _cut(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return (text[: width - 2].rsplit(" ", 1)[0] or text[: width - 2]) + " …"


def _domain_coverage(args: argparse.Namespace, suites: list[Any]) -> int:
    """Per suite: its domain table's classes and pairs, the pairs each profile plans, a run's figures."""
    from ..run.coverage import domain_coverage, render_domain

    found = [domain_coverage(s, args.report) for s in suites]
    if args.json:
        print(dumps("coverage-domain", {"suites": [d.to_json() for d in found]}))
    else:
        for d in found:
            print("\n".join(render_domain(d)))
    return 1 if any(d.problems for d in found) else 0


def cmd_coverage(args: argparse.Namespace) -> int:
    """Per spec: statements covered / testable (MUST and SHOULD apart), uncovered, unobservable."""
    from ..run.coverage import coverage, render_text

    suites = [get_suite(args.suite)] if args.suite else all_suites()
    if getattr(args, "domain", False):
        return _domain_coverage(args, suites)
    reports = [coverage(s) for s in suites]
    if args.json:
        print(dumps("coverage", {"suites": [r.to_json() for r in reports]}))
    else:
        for r in reports:
            print("\n".join(render_text(r)))
    broken = [r for r in reports if r.map_file is not None and (r.problems or r.unknown_checks)]
    return 1 if broken else 0

