"""The `memconform` command: run suites, validate a document, list checks, serve a reference."""

from __future__ import annotations

import argparse
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
    return profile


def cmd_run(args: argparse.Namespace) -> int:
    from .session import Session

    if args.suite:
        suites = args.suite
        for name in suites:
            load_suite(name)
    else:  # every suite this installation carries
        suites = list(installed())
    profile = _profile(args)
    api_key = args.api_key or os.environ.get("MEMCONFORM_API_KEY")
    report_dir = Path(args.report_dir)
    target = args.target
    session = Session(suites, target, profile, report_dir, api_key, args.check or None,
                      command=" ".join(shlex.quote(a) for a in sys.argv))
    say = session.printer  # every terminal line goes through the run's redactor

    def print_result(result: Result) -> None:
        if result.outcome in (Outcome.FAILED, Outcome.ERRORED):
            label = "WARN " if result.warning else "FAIL " if result.outcome is Outcome.FAILED else "ERROR"
            say(f"{label} {result.check_id}")
            say(render_failure_text(result.to_json()))

    session.on_result = print_result
    say(f"memconform run: suites {', '.join(suites)}; target {target or 'reference:<suite> (embedded)'}; "
        f"profile {profile.name}; seed {profile.seed}; report {report_dir}")
    outcome = session.run()
    say("")
    say(session.summary(), end="")  # rendered from the report's records, as summary.md is
    say(f"report: {report_dir / 'report.jsonl'} (junit.xml, summary.md beside it)")
    if outcome.exit_code == 2:
        say("memconform: error: no check ran", file=sys.stderr)
    return outcome.exit_code


def read_document(path: Path, max_bytes: int) -> tuple[bytes, Any]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise HarnessError(f"{path} is {size} bytes, over the limit of {max_bytes} (raise it with --max-bytes)")
    raw = path.read_bytes()
    try:
        return raw, json.loads(raw)
    except UnicodeDecodeError:
        raise HarnessError(f"{path} is not UTF-8 text") from None
    except ValueError as exc:
        return raw, exc


def detect_suite(raw: bytes, doc: Any, wanted: str | None) -> str:
    suites = installed()
    if wanted:
        if wanted not in suites:
            raise HarnessError(f"unknown format {wanted!r}; known: {', '.join(suites)}")
        return wanted
    for name, suite in suites.items():
        if suite.detect is not None and suite.detect(doc if not isinstance(doc, Exception) else raw):
            return name
    if isinstance(doc, Exception):
        raise HarnessError(f"not JSON ({doc}) and no format recognises it; name one with --format")
    raise HarnessError(f"no known format recognises this document (formats: {', '.join(suites)}); name one with --format")


STREAM_HEAD_BYTES = 64 * 1024


def open_stream(path: Path, wanted: str | None) -> tuple[str, Any] | None:
    """(suite, document) when the file is in a format read line by line (SuiteSpec.stream), else None.

    Detection sees only the file's first whole lines; the document is opened, never loaded, so
    --max-bytes (a memory guard) does not apply to it."""
    streaming = [s for s in installed().values() if s.stream is not None and wanted in (None, s.name)]
    if not streaming:
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(STREAM_HEAD_BYTES)
    except OSError:
        return None  # read_document says what is wrong with the file
    head = head[: head.rfind(b"\n") + 1] or head
    for suite in streaming:
        if suite.stream is not None and (wanted or (suite.detect is not None and suite.detect(head))):
            return suite.name, suite.stream(path)
    return None


def cmd_validate(args: argparse.Namespace) -> int:
    from .session import validate_document

    streamed = open_stream(Path(args.file), args.format)
    if streamed is not None:
        suite_name, doc = streamed
    else:
        raw, doc = read_document(Path(args.file), args.max_bytes)
        suite_name = detect_suite(raw, doc, args.format)
        suite = get_suite(suite_name)
        if suite.parse is not None:  # a format that is not plain JSON; a JSON one is parsed once, above
            try:
                doc = suite.parse(raw)
            except ValueError as exc:
                raise HarnessError(f"{args.file} cannot be parsed as {suite_name}: {exc}") from None
        elif isinstance(doc, Exception):
            raise HarnessError(f"{args.file} is not JSON: {doc}")
    profile = _profile(args)
    results = validate_document(doc, suite_name, profile, args.check or None)
    invalid = [r for r in results if r.blocking]
    errored = [r for r in results if r.outcome is Outcome.ERRORED and not r.blocking]
    warnings = [r for r in results if r.outcome is Outcome.FAILED and not r.blocking]
    verdict = "invalid" if invalid or errored else "valid"
    if args.json:
        print(json.dumps({
            "file": args.file, "format": suite_name, "verdict": verdict, "profile": profile.name,
            "failed": [r.check_id for r in invalid], "warnings": [r.check_id for r in warnings],
            "errored": [r.check_id for r in errored],
            "results": [r.to_json() for r in results if r.outcome is not Outcome.PASSED],
        }, ensure_ascii=False, indent=1))
    else:
        for r in invalid + errored + warnings:
            tag = "WARN " if r in warnings else ("ERROR" if r.outcome is Outcome.ERRORED else "FAIL ")
            print(f"{tag} {r.check_id} [{r.section} {r.keyword}]")
            for f in r.failures[:20]:
                print(f"      {f.title} at {f.path}: received {json.dumps(f.to_json()['received'], ensure_ascii=False, default=str)}")
            if len(r.failures) > 20:
                print(f"      ... and {len(r.failures) - 20} more")
            if r.reason:
                print(f"      {r.reason}")
        print(f"{args.file}: {suite_name} {verdict} ({len(invalid)} failed, {len(warnings)} warnings, {len(results)} checks)")
    if errored:
        return 2
    return 1 if invalid else 0


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
    """Run a saved failing fuzz example once more against a target."""
    raw, doc = read_document(Path(args.file), MAX_DOCUMENT_BYTES)
    if isinstance(doc, Exception):
        raise HarnessError(f"{args.file} is not JSON: {doc}")
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

    rep = sub.add_parser("replay", help="replay a saved failing fuzz example (printed by run) against a target")
    rep.add_argument("file")
    rep.add_argument("--suite", default="memoryai")
    rep.add_argument("--target")
    rep.add_argument("--api-key")
    profile_args(rep)
    rep.set_defaults(func=cmd_replay)

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
    except HarnessError as exc:
        print(f"memconform: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("memconform: interrupted", file=sys.stderr)
        return 2
    except Exception as exc:  # a harness bug: say so in one line, never a traceback, never a pass
        print(f"memconform: internal error: {type(exc).__name__}: {exc} (please report; rerun with MEMCONFORM_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("MEMCONFORM_DEBUG"):
            raise
        return 2


if __name__ == "__main__":
    sys.exit(main())
