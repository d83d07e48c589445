"""Runs checks and turns everything that can happen into exactly one of four outcomes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .check import SWEEP_BUDGET_FACTOR
from .check_context import TargetPort
from .clock import Clock
from .profile import Profile
from .redact import Redactor
from .registry import Check
from .results import Failure, HarnessError, Outcome, Result, SkipCheck, TargetError
from .suite import SuiteSpec
from .verdicts import LevelVerdict, level_verdicts

if TYPE_CHECKING:  # imported when a check observes a reading: a valid file's validate never does
    from .readings import Observation, Prediction

__all__ = ["Context", "LevelVerdict", "claimed_levels", "level_verdicts", "redact_failure", "run_checks", "run_cleanups", "run_one"]

S = TypeVar("S")

MAX_FAILURES = 200  # per result: a target that breaks a rule a million times needs no million lines
MAX_TARGET_NOTES = 3


@dataclass
class Context:
    """One run of one suite: what checks may use (core/check_context.py says which part), and what
    the runner keeps for the report (transcript, redactor, cleanups)."""

    suite: SuiteSpec
    target: TargetPort
    profile: Profile
    report_dir: Path | None = None  # where the run's files are written
    report_name: Path | None = None  # the report folder that names them (the run is swapped into its place)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    transcript: list[str] = field(default_factory=list)
    redactor: Redactor = field(default_factory=Redactor)
    document: Any = None  # set when validating a given document instead of a target
    reproduce_base: str = ""
    check_id: str = ""  # the check running now (readings and cleanups name it)
    # open point -> {"seen": [readings], "checks": [check ids]}, in the order first seen
    readings: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # open point -> the checks that met it, a reading fitting or not (a failure of one contradicts the readings)
    points_met: dict[str, list[str]] = field(default_factory=dict)
    cleanups: list[tuple[str, Callable[[], Any]]] = field(default_factory=list)
    # told of every file the run writes into its folder, with the bytes written: the session compares
    # the folder with these before it swaps the run in (run/report_folder.py, Ledger)
    on_written: Callable[[Path, bytes], None] | None = None
    _memo: dict[str, tuple[str, Any]] = field(default_factory=dict, repr=False)
    _states: dict[type, Any] = field(default_factory=dict, repr=False)

    def unique(self, label: str = "x") -> str:
        """Content no other run and no other check writes: suites work on non-empty instances."""
        return f"memconform-{self.run_id}-{label}-{uuid.uuid4().hex[:8]}"

    def option(self, name: str) -> str:
        return self.profile.option(self.suite, name)

    def note(self, line: str) -> None:
        self.transcript.append(self.redactor.text(str(line)))

    def reading(self, point: str, seen: str) -> None:
        """The implementation was seen to follow reading `seen` of open point `point` (an errata id)."""
        entry = self.readings.setdefault(str(point), {"seen": [], "checks": []})
        if str(seen) not in entry["seen"]:
            entry["seen"].append(str(seen))
        if self.check_id and self.check_id not in entry["checks"]:
            entry["checks"].append(self.check_id)

    def met(self, point: str) -> None:
        """The running check met open point `point` (core/readings.py calls it whenever a check observes)."""
        checks = self.points_met.setdefault(str(point), [])
        if self.check_id and self.check_id not in checks:
            checks.append(self.check_id)

    def observe(self, point: str, predictions: Mapping[str, Prediction], answer: Any = None, **how: Any) -> Observation:
        """Record the readings of `point` whose prediction the answer fits (core/readings.py)."""
        from .readings import observe as observe_readings

        return observe_readings(self, point, predictions, answer, **how)

    def cleanup(self, label: str, fn: Callable[[], Any]) -> None:
        """Remove what a check wrote, after the suite's checks (in reverse order); False/raise: not removed."""
        self.cleanups.append((str(label), fn))

    def once(self, key: str, make: Any) -> Any:
        """Compute a shared value once per run (e.g. the exported bundle), remembering errors too."""
        if key not in self._memo:
            try:
                self._memo[key] = ("ok", make())
            except (TargetError, SkipCheck) as exc:
                self._memo[key] = ("raise", exc)
        state, value = self._memo[key]
        if state == "raise":
            raise value
        return value

    def state(self, kind: type[S]) -> S:
        """The run's one instance of a state class (a dataclass whose fields all have defaults): what a
        suite's checks share during a run, typed, instead of keys in a dict."""
        if kind not in self._states:
            self._states[kind] = kind()
        found: S = self._states[kind]
        return found

    def attach(self, name: str, data: bytes) -> Path | None:
        """A file of the report (a saved example, a curl script), redacted and written under
        <report folder>/examples/ (None without a report folder): checks never write files themselves."""
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise HarnessError(f"attachment name {name!r}: a plain file name, with no folder")
        if self.report_dir is None:
            return None
        folder = self.report_dir / "examples"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        written = self.redactor.text(data.decode("utf-8", "replace")).encode("utf-8")
        path.write_bytes(written)
        self.wrote(path, written)
        return self.shown_path(path)

    def wrote(self, path: Path, data: bytes) -> None:
        """Every writer of a file in the run's folder says what it wrote (see `on_written`)."""
        if self.on_written is not None:
            self.on_written(path, data)

    def shown_path(self, path: Path) -> Path:
        """A file the run wrote, by the name it has once the run is in the report folder's place."""
        if self.report_name is None or self.report_dir is None:
            return path
        return self.report_name / path.relative_to(self.report_dir)

    def redact(self, text: str) -> str:
        return self.redactor.text(text)

    def add_secret(self, secret: str | None) -> None:
        """A secret learned during the run (a key the target issued): redacted from everything after."""
        self.redactor.add(secret)


def _document_for(check: Check, ctx: Context) -> Any:
    if ctx.document is not None:
        return ctx.document
    source = ctx.suite.load_checks().document_source  # a checks module may set it (emp's does)
    if source is None:
        raise SkipCheck("this suite has no way to obtain a document from a target", not_applicable=True)
    return ctx.once("document", lambda: source(ctx))


def in_clause(check_id: str, suite: SuiteSpec) -> bool:
    """Does any level's conformance clause list this check (by short name or full id)?"""
    short = check_id.split(".", 1)[-1]
    return any(short in level.clause or check_id in level.clause for level in suite.levels)


def _blank(check: Check, ctx: Context, outcome: Outcome) -> Result:
    return Result(
        check_id=check.id, suite=check.suite, spec=check.spec, section=check.section,
        keyword=check.keyword.value, level=check.level, sentence=check.sentence,
        outcome=outcome, in_clause=in_clause(check.id, ctx.suite), strict=ctx.profile.strict,
    )


def redact_failure(failure: Failure, redactor: Redactor) -> Failure:
    """Secrets out of the whole values, before anything is cut to length."""
    return Failure(
        title=redactor.text(str(failure.title)), received=redactor.deep(failure.received),
        expected=redactor.deep(failure.expected), path=redactor.text(str(failure.path)),
        detail=redactor.text(str(failure.detail)), readings=tuple(str(r) for r in failure.readings),
        explained_by=str(failure.explained_by),
    )


def run_one(check: Check, ctx: Context) -> Result:
    started = time.monotonic()
    ctx.transcript = []
    ctx.check_id = check.id
    result = _blank(check, ctx, Outcome.ERRORED)
    result.reproduce = f"{ctx.reproduce_base} --check {check.id}".strip()
    clock = getattr(ctx.target, "clock", None)
    if isinstance(clock, Clock):
        clock.start_check(SWEEP_BUDGET_FACTOR if check.sweep else 1.0)
        spent = clock.spent()
        if spent and check.kind != "document":  # a document check may still read the document fetched before
            clock.end_check()
            result.reason = f"not run: {spent}"
            result.transcript = []
            ctx.check_id = ""
            return result
    try:
        begin = getattr(ctx.target, "begin_check", None)
        if callable(begin):
            begin()  # a fresh connection: one check's framing error cannot leak into the next
        found = check.fn(_document_for(check, ctx), ctx) if check.kind == "document" else check.fn(ctx)
        result.failures = collect_failures(check, found, ctx.redactor, clock if isinstance(clock, Clock) else None)
        result.outcome = Outcome.FAILED if result.failures else Outcome.PASSED
    except SkipCheck as exc:
        result.outcome = Outcome.SKIPPED
        result.reason = str(exc.reason) or type(exc).__name__
        result.not_applicable = exc.not_applicable
        result.inconclusive = bool(getattr(exc, "inconclusive", False))
        result.needs, result.needs_kind = str(getattr(exc, "needs", "")), str(getattr(exc, "needs_kind", ""))
    except TargetError as exc:  # ControlRefused says "positive control refused: ..." itself
        result.outcome = Outcome.ERRORED
        result.reason = str(exc) if str(exc).startswith("positive control refused") else f"target error: {exc}"
    except Exception as exc:  # a harness bug (or RecursionError, MemoryError on hostile data): errored, never passed
        result.outcome = Outcome.ERRORED
        import traceback  # only for a harness error: `validate` starts without it

        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        result.reason = f"harness error: {type(exc).__name__}: {_safe_str(exc)}{where}"
    finally:
        if isinstance(clock, Clock):
            clock.end_check()
    result.duration_s = time.monotonic() - started
    ctx.transcript += target_notes(ctx.target)
    result.transcript = [ctx.redactor.text(t) for t in ctx.transcript]
    result.reason = ctx.redactor.text(result.reason)
    ctx.check_id = ""
    return result


def target_notes(target: Any) -> list[str]:
    """What the target's connections went through during the check (`target.notes`, then emptied):
    the first few distinct notes, and how many more there were."""
    notes = getattr(target, "notes", None)
    if not isinstance(notes, list) or not notes:
        return []
    distinct = list(dict.fromkeys(str(n) for n in notes))
    notes.clear()
    kept = distinct[:MAX_TARGET_NOTES]
    if len(distinct) > len(kept):
        kept.append(f"... and {len(distinct) - len(kept)} more notes like these in this check")
    return kept


def collect_failures(check: Check, found: Iterable[Any], redactor: Redactor, clock: Clock | None = None) -> list[Failure]:
    """The check's failures, each redacted as it comes; past MAX_FAILURES only counted, never kept, and
    counted only while the check's budget lasts."""
    kept: list[Failure] = []
    more = 0
    stopped = ""
    for failure in found:
        if not isinstance(failure, Failure):
            raise HarnessError(f"check {check.id} yielded {type(failure).__name__}, not Failure")
        if len(kept) < MAX_FAILURES:
            kept.append(redact_failure(failure, redactor))
            continue
        more += 1
        if clock is not None and more % 1000 == 0 and clock.spent():
            stopped = f" (counting stopped: {clock.spent()})"
            break
    if more:
        kept.append(Failure(f"... and {'at least ' if stopped else ''}{more} more failures of this check{stopped}", path="$"))
    return kept


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:2000]
    except Exception:
        return "(unprintable)"


@dataclass
class _Claimed:
    """The levels a target claims, asked once per context."""

    asked: bool = False
    levels: set[str] | None = None


def claimed_levels(ctx: Context) -> set[str] | None:
    """The levels the target claims, asked once per context (the plugin runs checks one at a time)."""
    if ctx.suite.claimed_levels is None or ctx.document is not None:
        return None
    claimed = ctx.state(_Claimed)
    if not claimed.asked:
        claimed.asked = True
        try:
            claimed.levels = ctx.suite.claimed_levels(ctx)
        except TargetError as exc:
            ctx.note(f"could not read the levels the target claims: {exc}")
    return claimed.levels


def run_checks(checks: Iterable[Check], ctx: Context) -> Iterator[Result]:
    claimed = claimed_levels(ctx)
    always = [lv.key for lv in ctx.suite.levels if lv.always_judged]
    for check in checks:
        if claimed is not None and check.level not in claimed and check.level not in always:
            result = _blank(check, ctx, Outcome.SKIPPED)
            result.not_applicable = True
            # only what the target claims is called claimed; the levels judged whatever it claims (OMP's ai,
            # security) are named apart
            also = f"; judged whatever it claims: {', '.join(sorted(always))}" if always else ""
            result.reason = (f"target does not claim level {check.level!r} "
                             f"(claims: {', '.join(sorted(claimed)) or 'none'}{also})")
            yield result
            continue
        yield run_one(check, ctx)


def run_cleanups(ctx: Context) -> list[str]:
    """Run the registered cleanups, newest first; the labels of what could not be removed."""
    left: list[str] = []
    while ctx.cleanups:
        label, fn = ctx.cleanups.pop()
        try:
            begin = getattr(ctx.target, "begin_check", None)
            if callable(begin):
                begin()
            removed = fn()
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the item is still there
            left.append(ctx.redactor.text(f"could not remove: {label} ({type(exc).__name__}: {_safe_str(exc)[:200]})"))
            continue
        if removed is False:
            left.append(ctx.redactor.text(f"could not remove: {label}"))
    return left
