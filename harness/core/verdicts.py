"""Level verdicts from the spec's conformance clauses, and the exit code they lead to.

A level is "conformant" only on evidence: every check its clause lists and every MUST check of the
level passed or is not applicable, and at least one of them passed. Any of them failed: "not
conformant". Else any errored, inconclusive or skipped (not as not-applicable): "not assessed",
with why. Checks of the level in no clause with SHOULD/MAY keywords are warnings (deciding only
under the strict profile). An optional level (a RECOMMENDED profile) whose checks are all not
applicable is "not applicable". A level the target does not claim, for which nothing applied, is "not
claimed". A level whose only unobserved checks wanted a memconform test hook the target does not offer,
or an option memconform needs before it exercises a rule (NeedsHook, NotExercised), is "not assessed"
naming what is missing, and, when the rest passed, says it is conformant on every rule observable
through the spec's interface; such a level does not decide the exit code unless the run requires
hooks (--require-hooks, certify), and an option never does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .results import Outcome, Result
from .suite import Level, SuiteSpec

CONFORMANT = "conformant"
NOT_CONFORMANT = "not conformant"
NOT_ASSESSED = "not assessed"
NOT_APPLICABLE = "not applicable"
NOT_CLAIMED = "not claimed"
OBSERVABLE_CONFORMANT = "conformant on every rule observable through the spec's interface"
REQUIRED_KINDS = ("hook", "operator")  # what --require-hooks and certify ask for (an option withheld on purpose never)


def _short(check_id: str) -> str:
    return check_id.split(".", 1)[-1]


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary (a verdict line never ends mid-word)."""
    if len(text) <= limit:
        return text
    return (text[:limit].rsplit(" ", 1)[0] or text[:limit]) + " …"


def _list(items: list[str], limit: int = 3) -> str:
    shown = "; ".join(items[:limit])
    return shown + (f"; and {len(items) - limit} more" if len(items) > limit else "")


@dataclass
class LevelVerdict:
    """A level's verdict in a run: its status, the counts behind it and why it is not conformant."""

    key: str
    title: str
    status: str
    counts: dict[str, int]
    failed: list[str] = field(default_factory=list)  # deciding checks that failed (short ids)
    why: list[str] = field(default_factory=list)  # not assessed / not conformant through a prerequisite
    warnings: list[str] = field(default_factory=list)  # advisory failures (SHOULD/MAY, no clause)
    skipped: int = 0  # not-applicable checks beside a conformant verdict: said, never hidden
    claimed: bool | None = None  # None: the suite cannot ask the target, or the level is judged whatever it claims
    always_judged: bool = False  # Level.always_judged: applies like a claimed level, never labelled claimed
    implemented: bool = False  # some check of the level was more than not applicable
    selected: bool = False  # some check of the level was in this run
    optional: bool = False
    partial: bool = False  # what ran passed, but checks that decide it were left out of the run
    needs: list[str] = field(default_factory=list)  # unobserved for want of a hook or an option: what, and what it needs
    needs_hooks: bool = False  # some of `needs` is a test hook or an operator's file (--require-hooks makes the level decide)
    observable_conformant: bool = False  # every other deciding check passed: conformant on what is observable
    require_hooks: bool = False  # the run requires the test hooks (--require-hooks, certify)

    @property
    def conformant(self) -> bool | None:
        return True if self.status == CONFORMANT else False if self.status == NOT_CONFORMANT else None

    @property
    def must_failures(self) -> int:
        return len(self.failed)

    @property
    def gating(self) -> bool:
        """Does this verdict make the run exit 1? Claimed or visibly implemented, and not conformant;
        a level not assessed only for want of a hook does only when the run requires hooks, and one
        wanting an option never does."""
        relevant = self.implemented or ((bool(self.claimed) or self.always_judged) and self.selected)
        if not relevant or self.partial or self.status in (CONFORMANT, NOT_APPLICABLE, NOT_CLAIMED):
            return False
        if _only_wants(self):
            return self.require_hooks and self.needs_hooks
        return True

    def line(self) -> str:
        if self.status == CONFORMANT:
            extra = []
            if self.skipped:
                extra.append(f"{self.skipped} check{'s' if self.skipped != 1 else ''} skipped")
            if self.warnings:
                extra.append(f"{len(self.warnings)} warning{'s' if len(self.warnings) != 1 else ''}: {_list(self.warnings)}")
            return f"{self.title}: conformant" + (f" ({'; '.join(extra)})" if extra else "")
        if self.status == NOT_CONFORMANT:
            if self.failed:
                n = len(self.failed)
                return f"{self.title}: not conformant ({n} failed check{'s' if n != 1 else ''}: {_list(self.failed)})"
            return f"{self.title}: not conformant ({_list(self.why)})"
        if self.status == NOT_APPLICABLE:
            return f"{self.title}: not applicable (optional, not offered: {_list(self.why, 1)})"
        if self.status == NOT_CLAIMED:
            return f"{self.title}: not claimed ({_list(self.why, 1)})" if self.why else f"{self.title}: not claimed"
        if self.needs and not self.why:
            missing = f"not assessed: {_list(self.needs)}"
            return f"{self.title}: {OBSERVABLE_CONFORMANT}; {missing}" if self.observable_conformant else f"{self.title}: {missing}"
        if self.needs:
            return f"{self.title}: not assessed (why: {_list(self.why)}; also {_list(self.needs)})"
        return f"{self.title}: not assessed (why: {_list(self.why)})"

    def to_json(self, suite: str) -> dict[str, Any]:
        return {
            "suite": suite, "level": self.key, "title": self.title, "verdict": self.line(), "status": self.status,
            "claimed": self.claimed, "implemented": self.implemented, "optional": self.optional,
            "counts": self.counts, "failed": self.failed, "why": self.why, "warnings": self.warnings,
            **({"needs": self.needs} if self.needs else {}),
        }


def _deciding(level: Level, r: Result) -> bool:
    short = _short(r.check_id)
    return short in level.clause or r.check_id in level.clause or (r.level == level.key and r.deciding)


def _reason(r: Result) -> str:
    what = "errored" if r.outcome is Outcome.ERRORED else "inconclusive" if r.inconclusive else "skipped"
    return f"{_short(r.check_id)} {what}: {_clip(r.reason, 160)}"


def _decides(level: Level, check: Any, strict: bool) -> bool:
    short = _short(check.id)
    absolute = check.keyword.value in ("MUST", "MUST NOT")
    return short in level.clause or check.id in level.clause or (check.level == level.key and (absolute or strict))


def _only_wants(v: LevelVerdict) -> bool:
    """Not assessed only for want of a hook or an option."""
    return v.status == NOT_ASSESSED and bool(v.needs) and not v.why


def _inherit(v: LevelVerdict, prereqs: list[LevelVerdict]) -> None:
    """What the level's prerequisites lack: a hook or an option they want, or another reason."""
    for p in prereqs:
        if p.status == CONFORMANT:
            continue
        if _only_wants(p):
            v.needs += [n for n in p.needs if n not in v.needs]
            v.needs_hooks = v.needs_hooks or p.needs_hooks
        else:
            v.why.append(f"requires {p.title}, which is {p.status}")


def level_verdicts(suite: SuiteSpec, results: Iterable[Result], claimed: set[str] | None = None,
                   not_run: Iterable[Any] = (), strict: bool = False, require_hooks: bool = False) -> list[LevelVerdict]:
    """`not_run`: the suite's checks left out of this run (--check, pytest -k): a level they decide
    cannot be found conformant without them. `require_hooks`: a level not assessed for want of a
    test hook decides the exit code."""
    results = list(results)
    not_run = list(not_run)
    verdicts: dict[str, LevelVerdict] = {}
    for level in suite.levels:
        own = [r for r in results if r.level == level.key]
        deciding = [r for r in results if _deciding(level, r)]
        counts = {o.value: sum(1 for r in own if r.outcome is o) for o in Outcome}
        failed = [_short(r.check_id) for r in deciding if r.outcome is Outcome.FAILED]
        unobserved = [r for r in deciding if r.outcome is Outcome.ERRORED
                      or (r.outcome is Outcome.SKIPPED and not r.not_applicable and not r.needs)]
        wanting = [r for r in deciding if r.outcome is Outcome.SKIPPED and r.needs]
        passed = [r for r in deciding if r.outcome is Outcome.PASSED]
        if not deciding:  # a level of SHOULD rules only (a RECOMMENDED profile without a clause): its own passes
            passed = [r for r in own if r.outcome is Outcome.PASSED]
        applicable = [r for r in own + deciding if not (r.outcome is Outcome.SKIPPED and (r.not_applicable or r.needs))]
        v = LevelVerdict(
            key=level.key, title=level.title, status=NOT_ASSESSED, counts=counts, failed=failed,
            warnings=[_short(r.check_id) for r in own if r.outcome is Outcome.FAILED and not _deciding(level, r)],
            skipped=sum(1 for r in own if r.outcome is Outcome.SKIPPED),
            claimed=None if claimed is None or level.always_judged else level.key in claimed,
            always_judged=level.always_judged and claimed is not None,
            implemented=bool(applicable), selected=bool(own or deciding), optional=level.optional,
            needs=list(dict.fromkeys(r.needs for r in wanting)), needs_hooks=any(r.needs_kind in REQUIRED_KINDS for r in wanting),
            require_hooks=require_hooks,
        )
        prereqs = [verdicts[k] for k in level.requires if k in verdicts]
        if failed:
            v.status = NOT_CONFORMANT
        elif v.claimed is False and not applicable and not (level.optional and own):
            v.status = NOT_CLAIMED  # nothing of it applied and the target says it does not offer it
            v.needs = []
        elif any(p.status == NOT_CONFORMANT for p in prereqs):
            v.status = NOT_CONFORMANT
            v.why = [f"requires {p.title}, which is not conformant" for p in prereqs if p.status == NOT_CONFORMANT]
        elif unobserved:
            v.why = [_reason(r) for r in unobserved]
        elif wanting:  # every other deciding check passed or did not apply
            _inherit(v, prereqs)
            v.observable_conformant = bool(passed) and not v.why
        elif not own and not deciding and prereqs and all(p.status == CONFORMANT for p in prereqs):
            v.status = CONFORMANT  # a level that is its prerequisites together, with no checks of its own
        elif not passed:
            skips = [r.reason for r in own + deciding if r.outcome is Outcome.SKIPPED]
            if level.optional and own and not applicable:
                v.status = NOT_APPLICABLE
                v.why = skips[:1]
            elif not own and not deciding:
                v.why = ["no check at this level ran"]
            elif skips and not applicable:
                v.why = [f"no check at this level applied: {_clip(skips[0], 160)}"]
            else:
                v.why = ["no check that this level requires ran (no clause or MUST check passed)"]
        elif any(p.status != CONFORMANT for p in prereqs):
            _inherit(v, prereqs)
            v.observable_conformant = not v.why
        else:
            v.status = CONFORMANT
        left_out = [_short(c.id) for c in not_run if _decides(level, c, strict)]
        if v.status == CONFORMANT and left_out:
            v.status = NOT_ASSESSED
            v.partial = True
            v.why = [f"{len(left_out)} of its checks were not selected for this run ({_list(left_out, 2)})"]
        verdicts[level.key] = v
    return list(verdicts.values())


def exit_code(results: list[Result], levels: Iterable[LevelVerdict]) -> int:
    """2: no check ran; 1: a deciding check failed or errored, or a claimed or visibly implemented
    level is not conformant (or not assessed, except for want of a test hook or an option: a hook
    decides only when the run requires hooks); 0 otherwise (SHOULD warnings do not change it)."""
    if not results or all(r.outcome is Outcome.SKIPPED and r.not_applicable for r in results):
        return 2
    if any(r.blocking for r in results) or any(v.gating for v in levels):
        return 1
    return 0
