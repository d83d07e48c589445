"""One run, whichever door: the CLI (`memconform run`), the pytest plugin and replay all use a Session.

A Session opens each suite's target once, runs the target's and the suite's preflights, selects the
checks, records every result in the report stream (report.jsonl, then junit.xml and summary.md
rendered from the stream read back), runs the suite's cleanups, and decides the level verdicts
and the exit code by one policy (core/verdicts.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.check_context import NoTarget
from ..core.clock import Clock
from ..core.profile import Profile, keep_hypothesis_files_in
from ..core.readings import footer_reading
from ..core.redact import Printer, Redactor
from ..core.registry import REGISTRY, Check, select_checks
from ..core.report import Report, ReportWriter, render_summary
from ..core.results import HarnessError, Outcome, Result, SkipCheck, TargetError
from ..core.runner import Context, claimed_levels, run_checks, run_cleanups
from ..core.suite import get_suite
from ..core.verdicts import LevelVerdict, exit_code
from ..core.verdicts import level_verdicts as _level_verdicts
from ..kit.domain import run_note as domain_note
from ..targets import open_target
from . import report_folder
from .folder_ledger import Ledger
from .planned_calls import planned
from .rendered import write_rendered
from .target_secrets import shown_target, url_secrets

DEFAULT_REPORT_DIR = Path("reports/latest")


class Tampered(HarnessError):
    """The run's folder changed while the run went on: nothing of it is swapped in, nothing certified."""


@dataclass
class RunOutcome:
    results: list[Result] = field(default_factory=list)
    levels: dict[str, list[LevelVerdict]] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)  # run-level findings, by suite (a domain note carries its figures)
    readings: list[dict[str, Any]] = field(default_factory=list)  # open point -> readings seen, by suite
    calls: dict[str, dict[str, int]] = field(default_factory=dict)  # suite -> calls to its target (and processes)
    report_dir: Path | None = None
    exit_code: int = 0
    report: Report | None = None  # the records, from the run's memory: what the summaries render
    tampered: list[str] = field(default_factory=list)  # what changed in the run's folder (the run then ends 2)

    def counts(self) -> dict[str, int]:
        return {o.value: sum(1 for r in self.results if r.outcome is o) for o in Outcome}


def reproduce_base(suite: str, target: str, profile: Profile, report_dir: Path | None, redactor: Redactor,
                   keyed: bool = False) -> str:
    parts = ["memconform", "run", "--suite", suite, "--target", target, "--profile", profile.name, "--seed", str(profile.seed)]
    for key, value in sorted(profile.options.items()):
        parts += ["--option", f"{key}={value}"]
    line = " ".join(shlex.quote(p) for p in parts)
    if keyed:  # the key itself never: the variable the user sets
        line += ' --api-key "$MEMCONFORM_API_KEY"'
    return redactor.text(line)


def call_count(target: Any) -> dict[str, int]:
    """The run's calls to one suite's target; for a long-lived command, how many processes served them."""
    started = getattr(target, "starts", None)
    return {"calls": int(target.calls), **({"processes": int(started)} if started is not None else {})}


def budget_of(profile: Profile) -> dict[str, float]:
    """What bounds the run, for the report header: seconds for the run, each check, each call."""
    limits = profile.limits
    budget = {"run_s": limits.run_deadline_s, "call_s": limits.call_deadline_s}
    if limits.check_deadline_s:
        budget["check_s"] = limits.check_deadline_s
    return budget


def command_containment(target: str | None) -> str | None:
    """For a cmd: target, how its processes are kept in (probed once per run); None for any other."""
    if not (target or "").startswith("cmd:"):
        return None
    from ..targets.contain import containment

    return containment()


def command_folder_view(target: str | None) -> str | None:
    """For a cmd: target, what its commands can see of the report folder (probed once); None for any other."""
    if not (target or "").startswith("cmd:"):
        return None
    from ..targets.contain import mount_view

    return mount_view()


def default_target(suite: str) -> str:
    return f"reference:{suite}"


class Session:
    """One run of one or more suites against one target (None: each suite's embedded reference)."""

    def __init__(
        self,
        suites: list[str],
        target: str | None,
        profile: Profile,
        report_dir: Path | None = DEFAULT_REPORT_DIR,
        api_key: str | None = None,
        check_ids: list[str] | None = None,
        command: str = "memconform run",
        on_result: Callable[[Result], None] | None = None,
        report_name: Path | None = None,
    ) -> None:
        """`report_dir`: the report folder; the run is written beside it and swapped into its place when
        it ends (report_folder.py). `report_name`: an xdist worker's part of a run, written straight into
        report_dir and naming its files by the report folder `report_name` the merged run goes to."""
        # against the suites run only: importing another suite's modules is not free of effects (a run's
        # verdicts were seen to change with it), and a run reads no other suite's options
        profile.validate_options([get_suite(name) for name in suites])
        self.suites = list(suites)
        self.target = target
        self.profile = profile
        self.report_dir = report_name or report_dir  # the folder the report names
        self.folder = report_folder.RunFolder(report_dir) if report_dir and report_name is None else None
        self.write_dir = report_dir  # where this run's files are written (the fresh folder, once started)
        self.api_key = api_key
        self.check_ids = check_ids
        self.command = command
        self.on_result = on_result
        self.on_start: Callable[[str], None] | None = None  # told each check's id before it runs (live progress)
        self.redactor = Redactor([*([api_key] if api_key else []), *url_secrets(target)])
        self.shown_target = shown_target(target, self.redactor)  # the target as every output names it
        self.printer = Printer(self.redactor)
        self.contexts: dict[str, Context] = {}
        self._open_failed: dict[str, BaseException] = {}
        self._closed: set[str] = set()
        self.outcome = RunOutcome(report_dir=self.report_dir)
        self.writer: ReportWriter | None = None
        limits = profile.limits
        self.clock = Clock.starting_now(limits.run_deadline_s, limits.check_deadline_s)  # every target of the run

    # --- the stream -------------------------------------------------------------------------
    def start(self) -> None:
        if self.writer is not None:
            return
        if self.folder is not None:  # a fresh folder beside the report folder, swapped in at the end
            self.write_dir = self.folder.open()
        elif self.write_dir is not None:
            self.write_dir.mkdir(parents=True, exist_ok=True)
        self.writer = ReportWriter(self.write_dir / "report.jsonl" if self.write_dir else None, self.redactor)
        keep_hypothesis_files_in(self.report_dir)  # a cache the folder keeps from run to run, as a user's file
        self.writer.header(
            target=self.shown_target or "reference:<suite>", suites=self.suites, profile=self.profile.name,
            seed=self.profile.seed, options=self.profile.effective_options([get_suite(name) for name in self.suites]), command=self.command,
            budget=budget_of(self.profile), require_hooks=self.profile.require_hooks,
            containment=command_containment(self.target),
            folder_view=command_folder_view(self.target) if self.folder is not None else None,
            planned_calls=planned(self.suites, self.profile.name),
        )

    @property
    def ledger(self) -> Ledger | None:
        """What the run wrote into its folder (None: no folder of its own to swap in)."""
        return self.folder.ledger if self.folder is not None else None

    def hidden_folders(self) -> tuple[Path, ...]:
        """The folders a cmd: call must not see: the one the run writes into and the report folder."""
        if self.folder is None or self.write_dir is None:
            return ()
        return (self.write_dir, self.folder.place)

    def context(self, suite_name: str) -> Context:
        """The suite's context: target opened, target and suite preflights passed (a HarnessError if not)."""
        if suite_name in self._open_failed:
            raise self._open_failed[suite_name]
        if suite_name in self.contexts:
            return self.contexts[suite_name]
        self.start()
        suite = get_suite(suite_name)
        target_str = self.target or default_target(suite_name)
        tgt = open_target(target_str, suite.routes, self.profile.limits, self.api_key)
        tgt.clock = self.clock.sibling()
        if hasattr(tgt, "hidden"):  # cmd: calls run where the report folder cannot be seen, where one can be had
            tgt.hidden = self.hidden_folders()
        try:
            tgt.preflight()
            ctx = Context(suite=suite, target=tgt, profile=self.profile, report_dir=self.write_dir,
                          report_name=self.report_dir, redactor=self.redactor)
            if self.ledger is not None:
                ctx.on_written = self.ledger.record
            shown = self.shown_target if self.target else target_str
            ctx.reproduce_base = reproduce_base(suite_name, shown or target_str, self.profile, self.report_dir,
                                                self.redactor, keyed=bool(self.api_key))
            if suite.preflight is not None:
                suite.preflight(ctx)
        except (HarnessError, TargetError, SkipCheck, OSError) as exc:
            tgt.close()
            # one line in the harness's words (a timeout in a preflight is not an internal error),
            # and the report completed with it: exit 2, never a truncated stream
            reason = exc.reason if isinstance(exc, SkipCheck) else str(exc)
            message = str(exc) if isinstance(exc, HarnessError) else f"{suite_name}: the target failed the start-up check: {reason}"
            safe = self.redactor.text(message)  # the CLI prints it: no secret in it either
            error = exc if isinstance(exc, HarnessError) and safe == message else HarnessError(safe)
            self.outcome.notes.append({"suite": suite_name, "note": f"could not start: {error}"})
            self._open_failed[suite_name] = error
            raise error from None
        except BaseException:
            tgt.close()
            raise
        self.contexts[suite_name] = ctx
        return ctx

    def run_check(self, check: Check) -> Result:
        ctx = self.context(check.suite)
        log = getattr(ctx.target, "exchanges", None)  # HTTP targets: curl lines and exchanges.har
        mark = log.mark() if log is not None else 0
        if self.on_start is not None:
            self.on_start(check.id)
        result = next(run_checks([check], ctx))
        if log is not None:
            from . import exchange_report  # imports httpx (and its CLI's rich): not on validate's start-up

            exchange_report.attach(result, log.since(mark), self.redactor)
        self.record(result)
        return result

    def record(self, result: Result) -> None:
        self.outcome.results.append(result)
        if self.writer is not None:
            self.writer.result(result)
        if self.on_result is not None:
            self.on_result(result)

    def close_suite(self, suite_name: str) -> None:
        """Cleanups, run notes, readings and level verdicts of one suite; its target closed."""
        if suite_name in self._closed:
            return
        self._closed.add(suite_name)
        ctx = self.contexts.get(suite_name)
        results = [r for r in self.outcome.results if r.suite == suite_name]
        suite = get_suite(suite_name)
        claimed = None
        if ctx is not None:
            try:
                for left in run_cleanups(ctx):
                    self.outcome.notes.append({"suite": suite_name, "note": left})
                if suite.run_notes is not None:
                    self.outcome.notes += [{"suite": suite_name, "note": self.redactor.text(n)} for n in suite.run_notes(ctx)]
                covered = None if isinstance(ctx.target, NoTarget) else domain_note(suite_name, ctx)
                if covered is not None:
                    self.outcome.notes.append(covered)
                claimed = claimed_levels(ctx)
                self.outcome.readings += [footer_reading(suite_name, p, v, ctx.points_met.get(p, []))
                                          for p, v in ctx.readings.items()]
            finally:
                ctx.target.close()
                if not isinstance(ctx.target, NoTarget):  # how many calls the run cost (the footer's `calls`)
                    self.outcome.calls[suite_name] = call_count(ctx.target)
        if results or ctx is not None:
            ran = {r.check_id for r in results}
            not_run = [c for c in REGISTRY.for_suite(suite_name) if c.id not in ran]
            self.outcome.levels[suite_name] = _level_verdicts(suite, results, claimed, not_run, self.profile.strict,
                                                             self.profile.require_hooks)

    def finish(self) -> RunOutcome:
        """Close every suite, write the footer, render junit.xml and summary.md from the stream."""
        if self.outcome.report is not None:
            return self.outcome  # finished already
        for name in list(self.contexts):
            self.close_suite(name)
        for name in dict.fromkeys(r.suite for r in self.outcome.results):
            self.close_suite(name)
        out = self.outcome
        out.exit_code = exit_code(out.results, [v for vs in out.levels.values() for v in vs])
        if self._open_failed:
            out.exit_code = 2  # a suite could not start: the run is a harness error, whatever else ran
        self.start()
        assert self.writer is not None
        self.writer.footer(
            out.counts(),
            [v.to_json(s) for s, vs in out.levels.items() for v in vs],
            out.exit_code, out.notes, out.readings, warnings=sum(1 for r in out.results if r.warning),
            calls=[{"suite": suite, **figures} for suite, figures in out.calls.items()],
        )
        self.writer.close()
        out.report = self.writer.report(allow_empty=True)  # from memory: never read back from the folder
        if self.write_dir:
            self._record_report()
            write_rendered(self.write_dir, out.report, self.ledger)
            from . import exchange_report  # httpx and what it pulls in only when a run writes exchanges

            har = exchange_report.write(self.write_dir, [c.target for c in self.contexts.values()], self.redactor)
            if har is not None and self.ledger is not None:
                self.ledger.record_as_is(har)
        self._put_in_place()
        return out

    def _record_report(self) -> None:
        if self.ledger is not None and self.writer is not None and self.write_dir is not None:
            self.ledger.record_digest(self.write_dir / "report.jsonl", self.writer.size, self.writer.file_digest())

    def _put_in_place(self) -> None:
        """The run's folder takes the report folder's place (or goes beside the last good run), unless it
        was changed by anyone but the run: then the run is "tampered with", exit 2, nothing swapped in."""
        if self.folder is None or self.folder.work is None:
            return
        self._record_report()
        changes = self.folder.changes()
        if not changes:
            self.outcome.report_dir = self.folder.close()
            return
        kept = self.folder.set_aside()
        self.outcome.exit_code = 2
        self.outcome.tampered = changes
        self.outcome.report_dir = kept
        raise Tampered(self.redactor.text(
            f"the run's folder was tampered with while the run went on: {'; '.join(changes)}. Nothing was swapped "
            f"into {self.folder.named}; the run's files are kept in {kept} for whoever looks into it"))

    def close(self) -> None:
        """Close targets and the stream without a footer (an interrupted run stays visibly truncated)."""
        for name, ctx in self.contexts.items():
            if name in self._closed:
                continue
            self._closed.add(name)
            try:
                ctx.target.close()
            except Exception:  # noqa: BLE001 - closing is best effort; the run's outcome stands
                pass
        if self.writer is not None:
            self.writer.close()
            try:
                self._put_in_place()  # an interrupted run with results is in place, visibly truncated
            except Tampered:
                pass  # an interrupted run whose folder changed: set aside, outcome.tampered says what changed
        if self.folder is not None:
            self.folder.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- the whole run (CLI) ------------------------------------------------------------------
    def run(self) -> RunOutcome:
        """Every suite in turn; a suite that cannot start ends the run with a complete report (exit 2)
        and its HarnessError raised for the caller's one-line message (`memconform run` runs suites against
        their references side by side, recorded in this same order: run/suite_processes.py)."""
        try:
            self.start()
            for suite_name in self.suites:
                checks = select_checks(suite_name, self.check_ids)
                try:
                    self.context(suite_name)
                except HarnessError:
                    self.finish()
                    raise
                for check in checks:
                    self.run_check(check)
                self.close_suite(suite_name)
            return self.finish()
        finally:
            self.close()

    def summary(self) -> str:
        """The terminal summary, rendered from the same records as the report files."""
        report = self.outcome.report
        if report is None:
            return ""
        from ..render.groups import render_groups_text

        grouped = render_groups_text(report.results)  # each distinct cause once, with its count
        return render_summary(report) + ("\n" + grouped if grouped else "")


def execute_run(
    suites: list[str],
    target: str | None,
    profile: Profile,
    report_dir: Path | None = DEFAULT_REPORT_DIR,
    api_key: str | None = None,
    check_ids: list[str] | None = None,
    on_result: Callable[[Result], None] | None = None,
    command: str = "memconform run",
) -> RunOutcome:
    return Session(suites, target, profile, report_dir, api_key, check_ids, command, on_result).run()
