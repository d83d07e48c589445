"""The `memconform` command: the argument parser and the entry point (`memconform = memconform.cli.main:main`).

The subcommands live beside it: run and replay in run.py, validate, list and coverage in
inspecting.py, report, diff, certify and verify in reporting.py; serve is here.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..core.results import HarnessError
from ..core.wording import visible
from ..run.validate import MAX_DOCUMENT_BYTES
from .inspecting import cmd_coverage, cmd_list, cmd_validate

if TYPE_CHECKING:
    import argparse


def cmd_run(args: argparse.Namespace) -> int:
    from .run import cmd_run as run  # the run's imports (targets, httpx, the report) only when it runs

    return run(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from .run import cmd_replay as replay

    return replay(args)


__all__ = ["build_parser", "cmd_coverage", "cmd_list", "cmd_replay", "cmd_run", "cmd_serve", "cmd_validate", "main"]


def cmd_serve(args: argparse.Namespace) -> int:
    from ..core.suite import all_suites, get_suite

    serve = get_suite(args.spec).serve
    if serve is None:
        servable = ", ".join(s.name for s in all_suites() if s.serve is not None)
        raise HarnessError(f"no servable reference for {args.spec!r}; servable: {servable}")
    extra = {"ai": args.ai} if args.ai else {}  # only the suites that have AI endpoints take it
    try:
        serve(host=args.host, port=args.port, db=args.db, **extra)
    except TypeError as exc:
        if extra and "ai" in str(exc):
            raise HarnessError(f"serve {args.spec} takes no --ai (a suite without AI endpoints)") from None
        raise
    return 0


def profile_args(p: argparse.ArgumentParser) -> None:
    from ..core.profile import PROFILES

    p.add_argument("--profile", default="ci", help=f"one of {', '.join(PROFILES)} (default ci)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a reading of ambiguous spec text, e.g. memoryai.dna_rule=type-only (memconform list --options)")
    p.add_argument("--check", action="append", default=[], metavar="ID", help="run only this check (repeatable)")


def validate_args(val: argparse.ArgumentParser) -> None:
    """The arguments of `validate` in the full parser (plain_validate reads the same ones without it)."""
    val.add_argument("file")
    val.add_argument("--format", help="skip detection: memoryai, memorizz, amps, emp")
    val.add_argument("--json", action="store_true", help="print the verdict and failing check ids as JSON")
    val.add_argument("--max-bytes", type=int, default=MAX_DOCUMENT_BYTES)
    profile_args(val)
    val.set_defaults(func=cmd_validate, command="validate")


# plain_validate's options: (the attribute, whether it takes a value, whether it repeats), as validate_args
# declares them; the full parser's validate has only -h/--help besides, which plain_validate leaves to it
_PLAIN_OPTIONS = {"--format": ("format", True, False), "--json": ("json", False, False),
                  "--max-bytes": ("max_bytes", True, False), "--profile": ("profile", True, False),
                  "--option": ("option", True, True), "--check": ("check", True, True)}


def plain_validate(argv: list[str]) -> Any | None:
    """`memconform validate FILE [options]` read without argparse or the whole command line: every other
    subcommand's parser imports its module (the report renderers, the matrix, the portability tools), and
    argparse itself and its message catalogue lookups cost a validation start-up it never uses. The same
    namespace as the full parser's (tests/test_cli_plain_validate.py); None for anything else and for anything
    unusual (help, an unknown or ambiguous option, a value that is missing, starts with "-" or is not a
    number where one is wanted, "--", a second file): the full parser then reads it, with its own messages."""
    if argv[:1] != ["validate"]:
        return None
    found: dict[str, Any] = {"file": None, "format": None, "json": False, "max_bytes": MAX_DOCUMENT_BYTES,
                             "profile": "ci", "option": [], "check": []}
    words = iter(argv[1:])
    for word in words:
        if not word.startswith("-") or word == "-":
            if found["file"] is not None:
                return None
            found["file"] = word
            continue
        given, equals, value = word.partition("=")
        names = [name for name in _PLAIN_OPTIONS if name.startswith(given)] if given.startswith("--") else []
        if len(names) != 1 or given == "--":  # argparse reads a unique prefix as the option (allow_abbrev)
            return None
        attr, takes_value, repeats = _PLAIN_OPTIONS[names[0]]
        if not takes_value:
            if equals:
                return None
            found[attr] = True
            continue
        if not equals:
            value = next(words, "-")
        if not value or value.startswith("-"):
            return None
        if attr == "max_bytes":
            try:
                found[attr] = int(value)
            except ValueError:
                return None
        elif repeats:
            found[attr] = [*found[attr], value]
        else:
            found[attr] = value
    if found["file"] is None:
        return None
    return SimpleNamespace(command="validate", **found, func=cmd_validate)


# what each command's exit code means, shown at the end of its --help (a CI script branches on them)
EXIT_CODES: dict[str, str] = {
    "memconform": "0 success (conformant, valid, nothing worse); 1 a finding (not conformant, invalid, a regression); "
                  "2 a usage or harness error. Each command's --help says what its codes mean.",
    "run": "0 every level the target claims or visibly implements is conformant (a level not assessed only for "
           "want of a memconform test hook, or of the AI endpoints memconform does not call unasked, does not count "
           "unless --require-hooks); 1 one is not conformant or not assessed; 2 a usage or harness error, a target "
           "that cannot be reached, "
           "or no check ran. With --expect the expectations decide: 1 also when a known failure now passes.",
    "validate": "0 valid; 1 invalid, or not assessed (a check errored); 2 the file cannot be read or no format "
                "can be named. With --json stdout is JSON even on errors.",
    "list": "0 listed; 2 a usage error.",
    "coverage": "0 shown; 2 a usage error or an unreadable report.",
    "replay": "0 no failure (no divergence) on this target; 1 the failure or divergence reproduced; "
              "2 a usage or harness error.",
    "report": "0 rendered; 1 rendered, but the report is truncated (no footer); 2 a usage error or an unreadable report.",
    "diff": "0 nothing newly fails and no level got worse; 1 something newly fails or a level got worse; "
            "2 a usage error or an unreadable report.",
    "certify": "0 every level conformant, as run says it (the bundle written either way); 1 one is not; "
               "2 a usage or harness error.",
    "verify": "0 the bundle verifies (digests, signature, every level verdict recomputed); 1 it does not; "
              "2 a usage error or an unreadable bundle.",
    "keygen": "0 the key pair written; 2 an error.",
    "serve": "0 stopped; 2 a usage error (no servable reference of that suite).",
    "translate": "0 translated (the loss ledger on stderr, or beside --out); 1 the document cannot be translated; "
                 "2 a usage error or an unreadable document.",
    "portability": "0 written; 2 a usage error.",
    "port": "0 the round trip kept what the ledger promises; 1 it did not; 2 a usage or harness error.",
    "matrix": "0 done; 1 (matrix diff) a new split, a new cell not assessed or a regression of an implementation; "
              "2 a usage or harness error.",
    "matrix plan": "0 planned; 2 a usage error or a bad implementations file.",
    "matrix run": "0 the shards ran (their findings are in their reports); 2 a usage or harness error.",
    "matrix combine": "0 combined; 2 a usage error or a misaligned shard.",
    "matrix diff": "0 no new split, no new cell not assessed and no regression; 1 a new split, a new cell not "
                   "assessed (a cell OLD assessed that says nothing in NEW: errored, not run, cut short by a budget) "
                   "or a regression of an implementation; 2 a usage error or an unreadable matrix.",
}
DEFAULT_EXIT_CODES = "0 done; 2 a usage or harness error."


def exit_codes_in_help(parser: argparse.ArgumentParser, command: str = "memconform") -> None:
    """Every parser's --help ends with what its exit codes mean: its own entry of EXIT_CODES, else its
    parent command's, else the default."""
    parent = command.rpartition(" ")[0]
    codes = EXIT_CODES.get(command) or EXIT_CODES.get(parent) or DEFAULT_EXIT_CODES
    parser.epilog = ((parser.epilog + "\n\n") if parser.epilog else "") + f"exit codes: {codes}"
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub_parser in action.choices.items():
                exit_codes_in_help(sub_parser, name if command == "memconform" else f"{command} {name}")


def build_parser() -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    from .. import __version__
    from ..core.suite import suite_names

    parser = argparse.ArgumentParser(prog="memconform", description="Conformance harness for AI memory portability specs.")
    parser.add_argument("--version", action="version", version=f"memconform {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run suites against a target (default: the embedded reference)")
    run.add_argument("--suite", action="append", help=f"suite name (repeatable): {', '.join(suite_names())}")
    run.add_argument("--target", help="http://... or https://..., cmd:... (a process per call), cmd-lines:... (one process for the run, JSON lines), dir:..., python:mod:attr, reference:NAME")
    run.add_argument("--report-dir", help="where the run's files go (default $MEMCONFORM_REPORT_DIR, else reports/latest); "
                     "the run before is kept in previous/ inside it")
    run.add_argument("--api-key", help="sent as a bearer token; redacted everywhere (or MEMCONFORM_API_KEY)")
    run.add_argument("--seed", type=int, help="hypothesis seed (printed in every run header)")
    run.add_argument("--expect", metavar="FILE", help="known failures and flaky checks (JSON, "
                     "schemas/expectations.schema.json): listed checks may fail without failing the run")
    run.add_argument("--run-budget", "--run-deadline", dest="run_deadline", type=float, metavar="SECONDS",
                     help="bound on the whole run (default per profile: ci 240, default and strict 900, thorough "
                          "3600), shared by every check and call: after it every remaining call errors at once "
                          "and the report is completed")
    run.add_argument("--check-budget", dest="check_deadline", type=float, metavar="SECONDS",
                     help="bound on one check, shared by all its calls (default per profile: ci 60, default and "
                          "strict 180, thorough 600)")
    run.add_argument("--call-deadline", type=float, metavar="SECONDS",
                     help="bound on one exchange with the target, from connecting to the last byte (default 60)")
    run.add_argument("--verbose", "-v", action="store_true",
                     help="after the run, every failure in full and every reading (default: each cause once, "
                          "one line of readings per suite)")
    run.add_argument("--require-hooks", action="store_true",
                     help="a level not assessed for want of a memconform test hook (decay, delete_chunk, arm_failure) "
                          "or of a file only the operator can name (omp.server_log) fails the run (exit 1); "
                          "without it such a level is reported and does not decide the exit code")
    profile_args(run)
    run.set_defaults(func=cmd_run)

    validate_args(sub.add_parser("validate", help="validate one document, detecting its format"))

    lst = sub.add_parser("list", help="list every check with id, section and keyword")
    lst.add_argument("--suite")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--options", action="store_true", help="list the profile options (readings of the specs)")
    lst.set_defaults(func=cmd_list)

    cov = sub.add_parser("coverage", help="per spec: normative statements covered by checks (requirement maps)")
    cov.add_argument("--suite")
    cov.add_argument("--json", action="store_true")
    cov.add_argument("--domain", action="store_true",
                     help="the domain tables instead: value classes and parameter pairs, planned per profile and judged by a run")
    cov.add_argument("--report", type=Path, help="with --domain: a report.jsonl (or its folder) whose figures to show")
    cov.set_defaults(func=cmd_coverage)

    rep = sub.add_parser("replay", help="replay a saved failing fuzz example or sequence of operations (printed by run) "
                                        "against a target")
    rep.add_argument("file")
    rep.add_argument("--suite", help="the example's suite (default memoryai; a sequence file names its own)")
    rep.add_argument("--target")
    rep.add_argument("--api-key")
    profile_args(rep)
    rep.set_defaults(func=cmd_replay)

    from .reporting import add_report_parser  # report, diff, certify, verify

    add_report_parser(sub)

    from .matrix import add_matrix_parser  # matrix plan, run, combine, diff

    add_matrix_parser(sub)

    from .portability import add_portability_parsers  # translate, portability, port

    add_portability_parsers(sub)

    srv = sub.add_parser("serve", help="serve an embedded reference over HTTP on loopback")
    srv.add_argument("spec", help="a suite with an HTTP reference, e.g. memoryai, omp")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8765)
    srv.add_argument("--db", default=":memory:", help="SQLite file (default in memory)")
    srv.add_argument("--ai", choices=["offline"], help="omp: answer extract/compress with a deterministic local "
                     "stand-in for an AI provider (default: no AI key configured, errata O11)")
    srv.set_defaults(func=cmd_serve)
    exit_codes_in_help(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    line = sys.argv[1:] if argv is None else argv
    if line == ["--version"]:  # what the full parser prints, without building every subcommand's parser
        from .. import __version__

        print(f"memconform {__version__}")
        return 0
    args = plain_validate(line)
    if args is None:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:
            return int(exc.code or 0) and 2
    try:
        return int(args.func(args))
    except BrokenPipeError:  # `memconform list | head`: the reader has all it wanted
        _silence_stdout()
        return 0 if args.command in ("list", "coverage") else 2
    except HarnessError as exc:
        return _error(args, f"error: {exc}")
    except KeyboardInterrupt:
        return _error(args, "interrupted")
    except Exception as exc:  # a harness bug: say so in one line, never a traceback, never a pass
        if os.environ.get("MEMCONFORM_DEBUG"):
            raise
        return _error(args, f"internal error: {type(exc).__name__}: {exc} "
                            "(please report; rerun with MEMCONFORM_DEBUG=1 for a traceback)")


def _error(args: Any, message: str) -> int:
    """One line on stderr; with --json, the same as JSON on stdout, so a script always reads JSON."""
    # one line: a file name or a target's words in it shown, never obeyed (a line feed written out too)
    line = visible(message).replace("\n", "\\n")
    print(f"memconform: {line}", file=sys.stderr)
    if getattr(args, "json", False):
        try:
            from .json_output import dumps

            print(visible(dumps("error", {"error": message, "exit_code": 2})))
        except BrokenPipeError:
            _silence_stdout()
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
