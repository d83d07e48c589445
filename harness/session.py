"""One run: open the target, run the suites' checks, stream the report. The CLI and plugin call this."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core.model import HarnessError, Outcome, Result
from .core.profile import Profile
from .core.redact import Redactor
from .core.registry import REGISTRY, Check
from .core.report import ReportWriter, read_report, render_junit, render_markdown
from .core.runner import Context, LevelVerdict, level_verdicts, run_checks
from .core.suite import get_suite
from .targets import open_target

DEFAULT_REPORT_DIR = Path("reports/latest")


@dataclass
class RunOutcome:
    results: list[Result] = field(default_factory=list)
    levels: dict[str, list[LevelVerdict]] = field(default_factory=dict)
    notes: list[dict[str, str]] = field(default_factory=list)  # run-level findings, by suite
    report_dir: Path | None = None
    exit_code: int = 0

    def counts(self) -> dict[str, int]:
        return {o.value: sum(1 for r in self.results if r.outcome is o) for o in Outcome}


def reproduce_base(suite: str, target: str, profile: Profile, report_dir: Path | None, redactor: Redactor) -> str:
    parts = ["memconform", "run", "--suite", suite, "--target", target, "--profile", profile.name, "--seed", str(profile.seed)]
    for key, value in sorted(profile.options.items()):
        parts += ["--option", f"{key}={value}"]
    return redactor.text(" ".join(shlex.quote(p) for p in parts))


def select_checks(suite: str, check_ids: list[str] | None) -> list[Check]:
    checks = REGISTRY.for_suite(suite)
    if check_ids:
        wanted = set(check_ids)
        checks = [c for c in checks if c.id in wanted or c.id.split(".", 1)[1] in wanted]
    return checks


def default_target(suite: str) -> str:
    return f"reference:{suite}"


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
    redactor = Redactor([api_key] if api_key else [])
    profile.validate_options()
    outcome = RunOutcome(report_dir=report_dir)
    writer = ReportWriter(report_dir / "report.jsonl", redactor) if report_dir else None
    if writer:
        writer.header(
            target=redactor.text(target or "reference:<suite>"), suites=suites, profile=profile.name, seed=profile.seed,
            options=profile.effective_options(), command=redactor.text(command),
        )
    try:
        for suite_name in suites:
            suite = get_suite(suite_name)
            checks = select_checks(suite_name, check_ids)
            target_str = target or default_target(suite_name)
            with open_target(target_str, suite.routes, profile.limits, api_key) as tgt:
                tgt.preflight()
                ctx = Context(suite=suite, target=tgt, profile=profile, report_dir=report_dir, redactor=redactor)
                ctx.reproduce_base = reproduce_base(suite_name, target_str, profile, report_dir, redactor)
                if suite.preflight is not None:
                    suite.preflight(ctx)
                suite_results: list[Result] = []
                for result in run_checks(checks, ctx):
                    suite_results.append(result)
                    if writer:
                        writer.result(result)
                    if on_result:
                        on_result(result)
                if suite.run_notes is not None:
                    outcome.notes += [{"suite": suite_name, "note": redactor.text(n)} for n in suite.run_notes(ctx)]
            outcome.results += suite_results
            outcome.levels[suite_name] = level_verdicts(suite, suite_results)
        ran = [r for r in outcome.results if r.outcome is not Outcome.SKIPPED]
        if not outcome.results or not ran:
            outcome.exit_code = 2
        else:
            outcome.exit_code = 1 if any(r.blocking for r in outcome.results) else 0
        if writer:
            writer.footer(
                outcome.counts(),
                [{"suite": s, "level": v.key, "title": v.title, "verdict": v.line()} for s, vs in outcome.levels.items() for v in vs],
                outcome.exit_code,
                outcome.notes,
            )
    finally:
        if writer:
            writer.close()
    if report_dir:
        render_all(report_dir)
    return outcome


def render_all(report_dir: Path) -> None:
    header, results, footer = read_report(report_dir / "report.jsonl")
    (report_dir / "junit.xml").write_text(render_junit(header, results, footer), encoding="utf-8")
    (report_dir / "summary.md").write_text(render_markdown(header, results, footer), encoding="utf-8")


def validate_document(doc: Any, suite_name: str, profile: Profile, check_ids: list[str] | None = None) -> list[Result]:
    """Run a suite's document checks on one document (memconform validate)."""
    suite = get_suite(suite_name)
    checks = [c for c in select_checks(suite_name, check_ids) if c.kind == "document"]
    if not checks:
        raise HarnessError(f"suite {suite_name!r} has no document checks")
    ctx = Context(suite=suite, target=None, profile=profile, document=doc)
    return list(run_checks(checks, ctx))
