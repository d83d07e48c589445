"""Runs checks and turns everything that can happen into exactly one of four outcomes."""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model import Failure, HarnessError, Outcome, Result, SkipCheck, TargetError
from .profile import Profile
from .redact import Redactor
from .registry import Check
from .suite import SuiteSpec


@dataclass
class Context:
    """What a check may use: the target, the profile, unique names, and a per-run cache."""

    suite: SuiteSpec
    target: Any
    profile: Profile
    report_dir: Path | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    cache: dict[str, Any] = field(default_factory=dict)
    transcript: list[str] = field(default_factory=list)
    redactor: Redactor = field(default_factory=Redactor)
    document: Any = None  # set when validating a given document instead of a target
    reproduce_base: str = ""

    def unique(self, label: str = "x") -> str:
        """Content no other run and no other check writes: suites work on non-empty instances."""
        return f"memconform-{self.run_id}-{label}-{uuid.uuid4().hex[:8]}"

    def option(self, name: str) -> str:
        return self.profile.option(self.suite.name, name)

    def note(self, line: str) -> None:
        self.transcript.append(self.redactor.text(line))

    def once(self, key: str, make: Any) -> Any:
        """Compute a shared value once per run (e.g. the exported bundle), remembering errors too."""
        if key not in self.cache:
            try:
                self.cache[key] = ("ok", make())
            except (TargetError, SkipCheck) as exc:
                self.cache[key] = ("raise", exc)
        state, value = self.cache[key]
        if state == "raise":
            raise value
        return value


def _document_for(check: Check, ctx: Context) -> Any:
    if ctx.document is not None:
        return ctx.document
    if ctx.suite.document_source is None:
        raise SkipCheck("this suite has no way to obtain a document from a target", not_applicable=True)
    return ctx.once("document", lambda: ctx.suite.document_source(ctx))


def run_one(check: Check, ctx: Context) -> Result:
    started = time.monotonic()
    ctx.transcript = []
    result = Result(
        check_id=check.id, suite=check.suite, spec=check.spec, section=check.section,
        keyword=check.keyword.value, level=check.level, sentence=check.sentence,
        outcome=Outcome.ERRORED,
        reproduce=f"{ctx.reproduce_base} --check {check.id}".strip(),
        strict=ctx.profile.strict,
    )
    try:
        if check.kind == "document":
            failures = list(check.fn(_document_for(check, ctx), ctx))
        else:
            failures = list(check.fn(ctx))
        bad = [f for f in failures if not isinstance(f, Failure)]
        if bad:
            raise HarnessError(f"check {check.id} yielded {type(bad[0]).__name__}, not Failure")
        result.failures = failures
        result.outcome = Outcome.FAILED if failures else Outcome.PASSED
    except SkipCheck as exc:
        result.outcome = Outcome.SKIPPED
        result.reason = exc.reason
        result.not_applicable = exc.not_applicable
    except TargetError as exc:
        result.outcome = Outcome.ERRORED
        result.reason = f"target error: {exc}"
    except Exception as exc:  # a harness bug: errored, never passed
        result.outcome = Outcome.ERRORED
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        result.reason = f"harness error: {type(exc).__name__}: {exc} (at {Path(tb.filename).name}:{tb.lineno})"
    result.duration_s = time.monotonic() - started
    result.transcript = list(ctx.transcript)
    result.reason = ctx.redactor.text(result.reason)
    return result


def claimed_levels(ctx: Context) -> set[str] | None:
    """The levels the target claims, asked once per context (the plugin runs checks one at a time)."""
    if ctx.suite.claimed_levels is None or ctx.document is not None:
        return None
    if "claimed-levels" not in ctx.cache:
        try:
            ctx.cache["claimed-levels"] = ("ok", ctx.suite.claimed_levels(ctx))
        except TargetError as exc:
            ctx.cache["claimed-levels"] = ("ok", None)
            ctx.note(f"could not read the levels the target claims: {exc}")
    claimed: set[str] | None = ctx.cache["claimed-levels"][1]
    return claimed


def run_checks(checks: Iterable[Check], ctx: Context) -> Iterator[Result]:
    claimed = claimed_levels(ctx)
    for check in checks:
        if claimed is not None and check.level not in claimed:
            yield Result(
                check_id=check.id, suite=check.suite, spec=check.spec, section=check.section,
                keyword=check.keyword.value, level=check.level, sentence=check.sentence,
                outcome=Outcome.SKIPPED, not_applicable=True,
                reason=f"target does not claim level {check.level!r} (claims: {', '.join(sorted(claimed)) or 'none'})",
                strict=ctx.profile.strict,
            )
            continue
        yield run_one(check, ctx)


@dataclass
class LevelVerdict:
    key: str
    title: str
    conformant: bool | None  # None: nothing at this level ran
    must_failures: int
    counts: dict[str, int]

    def line(self) -> str:
        if self.conformant is None:
            return f"{self.title}: not assessed (no check at this level ran)"
        if self.conformant:
            # a skipped check was not shown to pass: say so beside the verdict, never hide it
            skipped = self.counts.get("skipped", 0)
            return f"{self.title}: conformant" + (f" ({skipped} check{'s' if skipped != 1 else ''} skipped)" if skipped else "")
        n = self.must_failures
        return f"{self.title}: not conformant ({n} MUST failure{'s' if n != 1 else ''})"


def level_verdicts(suite: SuiteSpec, results: list[Result]) -> list[LevelVerdict]:
    by_level: dict[str, list[Result]] = {}
    for r in results:
        by_level.setdefault(r.level, []).append(r)
    verdicts: dict[str, LevelVerdict] = {}
    for level in suite.levels:
        own = by_level.get(level.key, [])
        counts = {o.value: sum(1 for r in own if r.outcome is o) for o in Outcome}
        must = sum(1 for r in own if r.blocking)
        ran = any(r.outcome is not Outcome.SKIPPED for r in own)
        prereq_fail = sum(verdicts[k].must_failures for k in level.requires if k in verdicts)
        prereq_unknown = any(verdicts[k].conformant is None for k in level.requires if k in verdicts)
        if not ran:
            conformant = None
        elif must or prereq_fail:
            conformant = False
        else:
            conformant = None if prereq_unknown else True
        verdicts[level.key] = LevelVerdict(level.key, level.title, conformant, must + prereq_fail, counts)
    return list(verdicts.values())
