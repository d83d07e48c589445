"""The `memconform` command: the argument parser and the entry point (`memconform = memconform.cli:main`).

The subcommands live beside it: run and replay in cli_run.py, validate, list and coverage in
cli_inspect.py, report, diff, certify and verify in render/cli.py; serve is here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from .cli_common import MAX_DOCUMENT_BYTES, installed, read_document
from .cli_inspect import cmd_coverage, cmd_list, cmd_validate, open_stream
from .core.model import HarnessError
from .core.profile import PROFILES
from .core.suite import all_suites, get_suite, suite_names


# still importable from here, where they lived before the split (tests import probe_suites, open_stream)
def __getattr__(name: str) -> Any:
    """probe_suites and replay_sequence, from cli_run, imported when first asked for."""
    if name in ("probe_suites", "replay_sequence"):
        from . import cli_run

        return getattr(cli_run, name)
    raise AttributeError(name)


def cmd_run(args: argparse.Namespace) -> int:
    from .cli_run import cmd_run as run  # the run's imports (targets, httpx, the report) only when it runs

    return run(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from .cli_run import cmd_replay as replay

    return replay(args)


__all__ = ["MAX_DOCUMENT_BYTES", "build_parser", "cmd_coverage", "cmd_list", "cmd_replay", "cmd_run", "cmd_serve",
           "cmd_validate", "installed", "main", "open_stream", "read_document"]


def cmd_serve(args: argparse.Namespace) -> int:
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
    p.add_argument("--profile", default="ci", help=f"one of {', '.join(PROFILES)} (default ci)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a reading of ambiguous spec text, e.g. memoryai.dna_rule=type-only (memconform list --options)")
    p.add_argument("--check", action="append", default=[], metavar="ID", help="run only this check (repeatable)")


def validate_args(val: argparse.ArgumentParser) -> None:
    """The arguments of `validate`: the full parser's subcommand and the plain-validate parser alike."""
    val.add_argument("file")
    val.add_argument("--format", help="skip detection: memoryai, memorizz, amps, emp")
    val.add_argument("--json", action="store_true", help="print the verdict and failing check ids as JSON")
    val.add_argument("--max-bytes", type=int, default=MAX_DOCUMENT_BYTES)
    profile_args(val)
    val.set_defaults(func=cmd_validate, command="validate")


class _NotPlain(Exception):
    """The command line is not a plain `validate`: the full parser reads it (and words any error)."""


class _PlainValidateParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotPlain(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _NotPlain(message)


def plain_validate(argv: list[str]) -> argparse.Namespace | None:
    """`memconform validate FILE [options]` read without building the whole command line: every other
    subcommand's parser imports its module (the report renderers, the matrix, the portability tools),
    which a validation never uses. None for anything else, and for anything unusual (help, an unknown
    or misspelt option, a bad value, "--"): the full parser then reads it, with its own messages."""
    if argv[:1] != ["validate"] or "--" in argv:
        return None
    parser = _PlainValidateParser(prog="memconform validate", add_help=False)
    validate_args(parser)
    try:
        return parser.parse_args(argv[1:])
    except _NotPlain:
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memconform", description="Conformance harness for AI memory portability specs.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run suites against a target (default: the embedded reference)")
    run.add_argument("--suite", action="append", help=f"suite name (repeatable): {', '.join(suite_names())}")
    run.add_argument("--target", help="http://..., cmd:... (a process per call), cmd-lines:... (one process for the run, JSON lines), dir:..., python:mod:attr, reference:NAME")
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
    run.add_argument("--require-hooks", action="store_true",
                     help="a level not assessed for want of a memconform test hook (decay, delete_chunk, arm_failure) "
                          "fails the run (exit 1); without it such a level is reported and does not decide the exit code")
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

    from .render.cli import add_report_parser  # report, diff, certify, verify

    add_report_parser(sub)

    from .matrix.cli import add_matrix_parser  # matrix plan, run, combine, diff

    add_matrix_parser(sub)

    from .portability.cli import add_portability_parsers  # translate, portability, port

    add_portability_parsers(sub)

    srv = sub.add_parser("serve", help="serve an embedded reference over HTTP on loopback")
    srv.add_argument("spec", help="a suite with an HTTP reference, e.g. memoryai, omp")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8765)
    srv.add_argument("--db", default=":memory:", help="SQLite file (default in memory)")
    srv.add_argument("--ai", choices=["offline"], help="omp: answer extract/compress with a deterministic local "
                     "stand-in for an AI provider (default: no AI key configured, errata O11)")
    srv.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = plain_validate(sys.argv[1:] if argv is None else argv)
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


def _error(args: argparse.Namespace, message: str) -> int:
    """One line on stderr; with --json, the same as JSON on stdout, so a script always reads JSON."""
    print(f"memconform: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        try:
            print(json.dumps({"error": message, "exit_code": 2}, ensure_ascii=False))
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
