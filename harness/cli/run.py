"""The `memconform` subcommands that drive a target: `run` (with the probe that picks the suites a
target speaks) and `replay` (a saved fuzz example or sequence of operations, once more)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ..core.clock import Clock
from ..core.profile import Profile
from ..core.redact import Printer, Redactor
from ..core.registry import REGISTRY, load_suite
from ..core.results import HarnessError, Result
from ..core.suite import all_suites, get_suite
from ..core.wording import plural
from .common import installed, parse_options, profile_from_args


def cmd_run(args: argparse.Namespace) -> int:
    from ..run import suite_processes
    from ..run.session import Session, command_containment

    profile = profile_from_args(args)
    api_key = args.api_key or os.environ.get("MEMCONFORM_API_KEY")
    clock = Clock.starting_now(profile.limits.run_deadline_s, profile.limits.check_deadline_s)
    expect = None
    if getattr(args, "expect", None):  # read before the run: a bad file is a usage error, not a finding
        from ..run.expectations import Expectations

        expect = Expectations.from_path(Path(args.expect))
    if args.suite:
        suites = args.suite
        for name in suites:
            load_suite(name)
    elif args.target:  # the suites this target speaks (the probe's calls count against the run's budget)
        suites = probe_suites(args.target, profile, api_key, clock)
    else:  # every suite this installation carries, each against its embedded reference
        suites = list(installed())
    report_dir = Path(args.report_dir or os.environ.get("MEMCONFORM_REPORT_DIR") or "reports/latest")
    target = args.target
    session = Session(suites, target, profile, report_dir, api_key, args.check or None,
                      command=" ".join(shlex.quote(a) for a in sys.argv))
    session.clock = clock
    say = session.printer  # every terminal line goes through the run's redactor
    from ..core.registry import select_checks
    from ..render.progress import Progress

    progress = Progress(sum(len(select_checks(s, args.check or None)) for s in suites), say)

    def print_result(result: Result) -> None:
        progress.on_result(result)  # the failures follow the run, once per cause (render/terminal.py)

    session.on_result = print_result
    session.on_start = progress.on_start
    contained = command_containment(target)
    from ..run.planned_calls import planned

    plan = planned(suites, profile.name)  # what this profile sent each suite's reference: the run's cost, before it
    say(f"memconform run: suites {', '.join(suites)}; target {target or 'reference:<suite> (embedded)'}; "
        f"profile {profile.name}; seed {profile.seed}; budget {profile.limits.run_deadline_s:g} s; "
        + (f"containment {contained}; " if contained else "")
        + (f"planned calls {', '.join(f'{s} {n}' for s, n in plan.items())}; " if plan else "") + f"report {report_dir}")
    try:
        with progress:  # a live status line on a terminal, plain lines otherwise
            outcome = suite_processes.run(session)  # suites against their references side by side
    except HarnessError:
        say(f"report of this run: {session.outcome.report_dir}")  # stdout: the error stays the one stderr line
        raise
    say("")
    report = session.outcome.report
    if report is not None:  # rendered from the report's records, as summary.md and report.html are
        from ..render.terminal import render_terminal

        say(render_terminal(report, outcome.report_dir or report_dir, verbose=bool(getattr(args, "verbose", False))), end="")
    else:
        say(f"report: {outcome.report_dir or report_dir}/report.jsonl")
    if outcome.exit_code == 2:
        say("memconform: error: no check ran", file=sys.stderr)
    if expect is not None:  # the report keeps its own exit code; the expectations decide the process's
        from ..run.expectations import apply, print_verdict

        known = {c.id for name in suites for c in REGISTRY.for_suite(name)}
        verdict = apply(expect, outcome.results, [v for vs in outcome.levels.values() for v in vs], known, outcome.exit_code)
        print_verdict(verdict, say)
        return verdict.exit_code
    return outcome.exit_code


def probe_suites(target: str, profile: Profile, api_key: str | None, clock: Clock | None = None) -> list[str]:
    """The installed suites whose `probe` says the target speaks them (run without --suite)."""
    from ..targets import open_target

    spoken, unprobed = [], []
    for suite in all_suites():
        if suite.probe is None:
            unprobed.append(suite.name)
            continue
        with open_target(target, suite.routes, profile.limits, api_key) as tgt:
            if clock is not None:
                tgt.clock = clock.sibling()
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



# the most a saved sequence or example may weigh: what replay reads is held whole, and its parse costs a
# few times its size (docs/bounds.md); a saved sequence of a ci or thorough run is far below this
MAX_REPLAY_BYTES = 32 * 1024 * 1024


def read_replay_file(path: Path) -> Any:
    """The JSON a saved sequence or example holds, read as a handed file (core/handed.py): regular, bounded."""
    from ..core.handed import read_handed
    from ..run.validate import NotWellFormed, parse_json

    raw = read_handed(path, MAX_REPLAY_BYTES, what="a file to replay (docs/bounds.md)")
    try:
        return parse_json(raw)
    except NotWellFormed as exc:
        raise HarnessError(f"{path} is not JSON: {exc} at {exc.failure.path}") from None


def replay_key(args: argparse.Namespace) -> str | None:
    """The key as `run` takes it: --api-key, else $MEMCONFORM_API_KEY (what every printed line names)."""
    return args.api_key or os.environ.get("MEMCONFORM_API_KEY")


def no_target(args: argparse.Namespace, named: str | None, suite: str) -> HarnessError:
    """replay starts only the target given with --target: what the file names is shown, never run."""
    say = Printer(Redactor([k for k in (args.api_key, os.environ.get("MEMCONFORM_API_KEY")) if k]))
    if named:
        say(f"{args.file}: recorded against {shlex.quote(named)} (a file's target is data: not started)")
    return HarnessError(f"replay runs against --target only: pass --target TARGET (the suite's own reference: "
                        f"--target reference:{suite})")


def cmd_replay(args: argparse.Namespace) -> int:
    """Run a saved failing fuzz example, or a saved failing sequence of operations, once more against a target."""
    doc = read_replay_file(Path(args.file))
    from ..core import sequence_files

    if sequence_files.is_sequence(doc):
        return replay_sequence(args, doc)
    args.suite = args.suite or "memoryai"
    suite = get_suite(args.suite).load_checks()  # a checks module may set replay (memoryai's does)
    replay = suite.replay
    if replay is None:
        raise HarnessError(f"suite {args.suite!r} has no replay")
    from ..run.validate import detects

    if not detects(suite, doc):  # judging any JSON as an example would report findings about nothing
        raise HarnessError(f"{args.file} is neither a saved sequence of operations (sequences/*.json) nor a saved "
                           f"{suite.name} example (a {suite.spec_title} document, examples/*.json): nothing to replay")
    if not args.target:
        raise no_target(args, None, suite.name)
    profile = profile_from_args(args)
    from ..core.runner import redact_failure
    from ..run.session import Session  # the same target opening and preflights as `run`

    with Session([args.suite], args.target, profile, None, replay_key(args)) as session:
        ctx = session.context(args.suite)
        failures = [redact_failure(f, ctx.redactor).to_json() for f in replay(ctx, doc)]
        say = session.printer
    for f in failures:
        say(f"FAIL {f['title']} at {f['path']}\n     received: {f['received']}\n     expected: {f['expected']}")
    say(f"{args.file}: {'reproduced ' + plural(len(failures), 'failure') if failures else 'no failure on this target'}")
    return 1 if failures else 0


def replay_sequence(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """A saved sequence (core/sequence_files.py): each step printed; 1 when the divergence reproduces, 0 when not."""
    from ..core import sequence_files
    from ..core.runner import run_cleanups
    from ..run.replay import replay as replay_sequence
    from ..run.session import Session

    sequence_files.check_document(doc)
    name = str(doc.get("suite"))
    if args.suite and args.suite != name:
        raise HarnessError(f"{args.file} is a sequence of suite {name!r}, not {args.suite!r}")
    recorded = (doc.get("target") or {}).get("string") or None
    get_suite(name).load_checks()  # its comparators and harness actions register with its checks
    target = args.target
    if not target:
        raise no_target(args, recorded, name)
    options = {**{str(k): str(v) for k, v in (doc.get("options") or {}).items()}, **parse_options(args.option)}
    profile = Profile.named(args.profile, seed=doc.get("seed"), options=options)
    with Session([name], target, profile, None, replay_key(args), command="memconform replay") as session:
        ctx = session.context(name)
        ctx.check_id = str(doc.get("check") or "")
        say = session.printer
        say(f"memconform replay: {args.file}: {doc.get('check')} ({len(doc['steps'])} steps, recorded against "
            f"{recorded}); target {target}")
        try:
            reproduced = replay_sequence(ctx, doc, say)
        finally:
            for left in run_cleanups(ctx):
                say(left)
    say(f"{args.file}: " + ("the divergence reproduced" if reproduced else "no divergence on this target: every step as the model expects"))
    return 1 if reproduced else 0
