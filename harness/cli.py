"""The `memconform` command: run suites, validate a document, list checks, serve a reference."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from .core.model import HarnessError, Outcome, Result
from .core.profile import OPTIONS, PROFILES, Profile
from .core.registry import REGISTRY, load_suite
from .core.report import render_failure_text
from .core.suite import SuiteSpec, all_suites, get_suite, suite_names

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


def installed() -> dict[str, SuiteSpec]:
    """Every suite installed (entry points `memconform.suites`), by name."""
    return {s.name: s for s in all_suites()}


def _options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise HarnessError(f"--option takes NAME=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _profile(args: argparse.Namespace) -> Profile:
    profile = Profile.named(args.profile, seed=getattr(args, "seed", None), options=_options(args.option))
    bounds = {"run_deadline_s": getattr(args, "run_deadline", None), "call_deadline_s": getattr(args, "call_deadline", None)}
    if any(v is not None for v in bounds.values()):
        profile.limits = dataclasses.replace(profile.limits, **{k: v for k, v in bounds.items() if v is not None})
    return profile


def cmd_run(args: argparse.Namespace) -> int:
    from .session import Session

    profile = _profile(args)
    api_key = args.api_key or os.environ.get("MEMCONFORM_API_KEY")
    expect = None
    if getattr(args, "expect", None):  # read before the run: a bad file is a usage error, not a finding
        from .expectations import Expectations

        expect = Expectations.from_path(Path(args.expect))
    if args.suite:
        suites = args.suite
        for name in suites:
            load_suite(name)
    elif args.target:  # the suites this target speaks
        suites = probe_suites(args.target, profile, api_key)
    else:  # every suite this installation carries, each against its embedded reference
        suites = list(installed())
    report_dir = Path(args.report_dir)
    target = args.target
    session = Session(suites, target, profile, report_dir, api_key, args.check or None,
                      command=" ".join(shlex.quote(a) for a in sys.argv))
    say = session.printer  # every terminal line goes through the run's redactor
    from .render.progress import Progress
    from .session import select_checks

    progress = Progress(sum(len(select_checks(s, args.check or None)) for s in suites), say)

    def print_result(result: Result) -> None:
        progress.on_result(result)
        if result.outcome in (Outcome.FAILED, Outcome.ERRORED):
            label = "WARN " if result.warning else "FAIL " if result.outcome is Outcome.FAILED else "ERROR"
            say(f"{label} {result.check_id}")
            say(render_failure_text(result.to_json()))

    session.on_result = print_result
    say(f"memconform run: suites {', '.join(suites)}; target {target or 'reference:<suite> (embedded)'}; "
        f"profile {profile.name}; seed {profile.seed}; report {report_dir}")
    with progress:  # a live status line on a terminal, plain lines otherwise
        outcome = session.run()
    say("")
    say(session.summary(), end="")  # rendered from the report's records, as summary.md is
    say(f"report: {report_dir / 'report.jsonl'} (junit.xml, summary.md beside it)")
    if outcome.exit_code == 2:
        say("memconform: error: no check ran", file=sys.stderr)
    if expect is not None:  # the report keeps its own exit code; the expectations decide the process's
        from .expectations import apply, print_verdict

        known = {c.id for name in suites for c in REGISTRY.for_suite(name)}
        verdict = apply(expect, outcome.results, [v for vs in outcome.levels.values() for v in vs], known, outcome.exit_code)
        print_verdict(verdict, say)
        return verdict.exit_code
    return outcome.exit_code


def probe_suites(target: str, profile: Profile, api_key: str | None) -> list[str]:
    """The installed suites whose `probe` says the target speaks them (run without --suite)."""
    from .targets import open_target

    spoken, unprobed = [], []
    for suite in all_suites():
        if suite.probe is None:
            unprobed.append(suite.name)
            continue
        with open_target(target, suite.routes, profile.limits, api_key) as tgt:
            tgt.preflight()  # a target that does not answer is one start-up error, not "speaks nothing"
            try:
                if suite.probe(tgt):
                    spoken.append(suite.name)
            except Exception:  # noqa: BLE001  a probe that cannot tell: not this suite
                pass
    probed = ", ".join(s.name for s in all_suites() if s.probe is not None)
    not_probed = f"; suites without a probe, name them with --suite: {', '.join(unprobed)}" if unprobed else ""
    if not spoken:
        raise HarnessError(f"{target} speaks none of the suites that can be probed ({probed}){not_probed}")
    print(f"memconform run: the target speaks {', '.join(spoken)} (probed: {probed}){not_probed}")
    return spoken


def read_document(path: Path, max_bytes: int) -> tuple[bytes, Any]:
    """(bytes, parsed JSON) of a file, or (bytes, NotWellFormed) when it is not one JSON text."""
    from .validate import NotWellFormed, parse_json, read_all

    raw = read_all(path, max_bytes)
    try:
        return raw, parse_json(raw)
    except NotWellFormed as exc:
        return raw, exc


def open_stream(path: Path, wanted: str | None) -> tuple[str, Any] | None:
    from .validate import open_stream as opened

    return opened(path, wanted)


def _same_cause(r: Result) -> tuple[Any, ...]:
    first = r.failures[0].to_json() if r.failures else {}
    return (r.outcome, r.reason, first.get("title"), first.get("path"), len(r.failures))


def _print_validation(results: list[Result], warnings: list[Result]) -> None:
    """Each problem with received, expected and path; checks that share one cause are printed once."""
    groups: dict[tuple[Any, ...], list[Result]] = {}
    for r in results:
        if r.outcome in (Outcome.FAILED, Outcome.ERRORED):
            groups.setdefault(_same_cause(r), []).append(r)
    for same in groups.values():
        r = same[0]
        tag = "WARN " if r in warnings else ("ERROR" if r.outcome is Outcome.ERRORED else "FAIL ")
        print(f"{tag} {r.check_id} [{r.section} {r.keyword}]")
        if len(same) > 1:
            print(f"      the same cause in {len(same) - 1} more: {', '.join(x.check_id for x in same[1:])}")
        for f in r.failures[:20]:
            j = f.to_json()
            print(f"      {j['title']}")
            print(f"        at {j['path']}")
            print(f"        received {json.dumps(j['received'], ensure_ascii=False)}")
            print(f"        expected {json.dumps(j['expected'], ensure_ascii=False)}")
        if len(r.failures) > 20:
            print(f"      ... and {len(r.failures) - 20} more")
        if r.reason:
            print(f"      {r.reason}")


def cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate_file

    profile = _profile(args)
    suite, how, results = validate_file(Path(args.file), args.format, profile, args.check or None, args.max_bytes)
    invalid = [r for r in results if r.blocking and r.outcome is Outcome.FAILED]
    errored = [r for r in results if r.outcome is Outcome.ERRORED]
    warnings = [r for r in results if r.outcome is Outcome.FAILED and not r.blocking]
    verdict = "invalid" if invalid else "not assessed" if errored else "valid"
    if args.json:
        print(json.dumps({
            "file": args.file, "format": suite.name, "named_by": how, "verdict": verdict, "profile": profile.name,
            "failed": [r.check_id for r in invalid], "warnings": [r.check_id for r in warnings],
            "errored": [r.check_id for r in errored],
            "results": [r.to_json() for r in results if r.outcome is not Outcome.PASSED],
        }, ensure_ascii=False, indent=1))
    else:
        _print_validation(results, warnings)
        named = "" if how in ("detected", "--format") else f" (named by {how})"
        print(f"{args.file}: {suite.name}{named} {verdict} ({len(invalid)} failed, {len(errored)} errored, "
              f"{len(warnings)} warnings, {len(results)} checks)")
    return 0 if verdict == "valid" else 1


def cmd_list(args: argparse.Namespace) -> int:
    checks = REGISTRY.for_suite(args.suite) if args.suite else REGISTRY.all()
    if args.options:
        for suite, opts in sorted(OPTIONS.items()):
            for name, o in opts.items():
                print(f"{suite}.{name} = {o.default}  (choices: {', '.join(o.choices)})  {o.help}")
        return 0
    if args.json:
        print(json.dumps([ch.to_json() for ch in checks], ensure_ascii=False, indent=1))
        return 0
    for ch in checks:
        print(f"{ch.id:<48} {ch.section:<12} {ch.keyword.value:<6} L{ch.level:<5} {ch.sentence[:90]}")
    print(f"{len(checks)} checks")
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    """Per spec: statements covered / testable (MUST and SHOULD apart), uncovered, unobservable."""
    from .coverage import coverage, render_text

    suites = [get_suite(args.suite)] if args.suite else all_suites()
    reports = [coverage(s) for s in suites]
    if args.json:
        print(json.dumps([r.to_json() for r in reports], ensure_ascii=False, indent=1))
    else:
        for r in reports:
            print("\n".join(render_text(r)))
    broken = [r for r in reports if r.map_file is not None and (r.problems or r.unknown_checks)]
    return 1 if broken else 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Run a saved failing fuzz example, or a saved failing sequence of operations, once more against a target."""
    raw, doc = read_document(Path(args.file), MAX_DOCUMENT_BYTES)
    if isinstance(doc, Exception):
        raise HarnessError(f"{args.file} is not JSON: {doc}")
    from .core import sequence_files

    if sequence_files.is_sequence(doc):
        return replay_sequence(args, doc)
    args.suite = args.suite or "memoryai"
    suite = get_suite(args.suite)
    replay = suite.replay
    if replay is None:
        raise HarnessError(f"suite {args.suite!r} has no replay")
    profile = _profile(args)
    from .core.runner import redact_failure
    from .session import Session  # the same target opening and preflights as `run`

    with Session([args.suite], args.target, profile, None, args.api_key) as session:
        ctx = session.context(args.suite)
        failures = [redact_failure(f, ctx.redactor).to_json() for f in replay(ctx, doc)]
        say = session.printer
    for f in failures:
        say(f"FAIL {f['title']} at {f['path']}\n     received: {f['received']}\n     expected: {f['expected']}")
    say(f"{args.file}: {'reproduced ' + str(len(failures)) + ' failure(s)' if failures else 'no failure on this target'}")
    return 1 if failures else 0


def replay_sequence(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """A saved sequence (core/sequence_files.py): each step printed; 1 when the divergence reproduces, 0 when not."""
    from . import sequence_replay
    from .core import sequence_files
    from .core.runner import run_cleanups
    from .session import Session

    sequence_files.check_document(doc)
    name = str(doc.get("suite"))
    if args.suite and args.suite != name:
        raise HarnessError(f"{args.file} is a sequence of suite {name!r}, not {args.suite!r}")
    load_suite(name)  # its comparators and harness actions register with its checks
    target = args.target or (doc.get("target") or {}).get("string")
    if not target:
        raise HarnessError(f"{args.file} names no target: give --target")
    options = {**{str(k): str(v) for k, v in (doc.get("options") or {}).items()}, **_options(args.option)}
    profile = Profile.named(args.profile, seed=doc.get("seed"), options=options)
    with Session([name], target, profile, None, args.api_key, command="memconform replay") as session:
        ctx = session.context(name)
        ctx.check_id = str(doc.get("check") or "")
        say = session.printer
        say(f"memconform replay: {args.file}: {doc.get('check')} ({len(doc['steps'])} steps, recorded against "
            f"{(doc.get('target') or {}).get('string')}); target {target}")
        try:
            reproduced = sequence_replay.replay(ctx, doc, say)
        finally:
            for left in run_cleanups(ctx):
                say(left)
    say(f"{args.file}: " + ("the divergence reproduced" if reproduced else "no divergence on this target: every step as the model expects"))
    return 1 if reproduced else 0


def cmd_serve(args: argparse.Namespace) -> int:
    serve = get_suite(args.spec).serve
    if serve is None:
        servable = ", ".join(s.name for s in all_suites() if s.serve is not None)
        raise HarnessError(f"no servable reference for {args.spec!r}; servable: {servable}")
    serve(host=args.host, port=args.port, db=args.db)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memconform", description="Conformance harness for AI memory portability specs.")
    sub = parser.add_subparsers(dest="command", required=True)

    def profile_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--profile", default="ci", help=f"one of {', '.join(PROFILES)} (default ci)")
        p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="a reading of ambiguous spec text, e.g. memoryai.dna_rule=type-only (memconform list --options)")
        p.add_argument("--check", action="append", default=[], metavar="ID", help="run only this check (repeatable)")

    run = sub.add_parser("run", help="run suites against a target (default: the embedded reference)")
    run.add_argument("--suite", action="append", help=f"suite name (repeatable): {', '.join(suite_names())}")
    run.add_argument("--target", help="http://..., cmd:..., dir:..., python:mod:attr, reference:NAME")
    run.add_argument("--report-dir", default="reports/latest")
    run.add_argument("--api-key", help="sent as a bearer token; redacted everywhere (or MEMCONFORM_API_KEY)")
    run.add_argument("--seed", type=int, help="hypothesis seed (printed in every run header)")
    run.add_argument("--expect", metavar="FILE", help="known failures and flaky checks (JSON, "
                     "schemas/expectations.schema.json): listed checks may fail without failing the run")
    run.add_argument("--run-deadline", type=float, metavar="SECONDS",
                     help="bound on the run against one target (default 1800): after it every remaining check "
                          "errors with \"run deadline reached\" and the report is completed")
    run.add_argument("--call-deadline", type=float, metavar="SECONDS",
                     help="bound on one exchange with the target, from connecting to the last byte (default 60)")
    profile_args(run)
    run.set_defaults(func=cmd_run)

    val = sub.add_parser("validate", help="validate one document, detecting its format")
    val.add_argument("file")
    val.add_argument("--format", help="skip detection: memoryai, memorizz, amps, emp")
    val.add_argument("--json", action="store_true", help="print the verdict and failing check ids as JSON")
    val.add_argument("--max-bytes", type=int, default=MAX_DOCUMENT_BYTES)
    profile_args(val)
    val.set_defaults(func=cmd_validate)

    lst = sub.add_parser("list", help="list every check with id, section and keyword")
    lst.add_argument("--suite")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--options", action="store_true", help="list the profile options (readings of the specs)")
    lst.set_defaults(func=cmd_list)

    cov = sub.add_parser("coverage", help="per spec: normative statements covered by checks (requirement maps)")
    cov.add_argument("--suite")
    cov.add_argument("--json", action="store_true")
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

    srv = sub.add_parser("serve", help="serve an embedded reference over HTTP on loopback")
    srv.add_argument("spec", help="a suite with an HTTP reference, e.g. memoryai, omp")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8765)
    srv.add_argument("--db", default=":memory:", help="SQLite file (default in memory)")
    srv.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
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
