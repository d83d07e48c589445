"""The walk of a suite's one table of readings (tests/test_<suite>_one_table.py): for one row, its own data
(the example fits its reading, the control fits none, or where a point's every answer fits some reading, the
example fits no other) and each check it names asked through that check's own judgement (the example
accepted and the row's reading recorded, the control refused: the check's own where the row names one). A
judge answers False (refused), True (accepted, for a judgement that records nothing) or the set of readings it
recorded for the point."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from memconform.core.readings import Reading, ReadingTable

Verdict = bool | set[str]
Judge = Callable[[Any, Reading, Any, Any], Verdict]  # (a fresh context, the row, the request, the answer)


@dataclass(frozen=True)
class Walk:
    judge_of: Callable[[Reading, str], Judge]  # the judgement a check named by a row is asked through
    context: Callable[[], Any]  # a fresh run context (default options)
    pins: Any  # the default pins the table's `accepted` reads
    every_answer_fits: frozenset[str]  # points with no answer outside every reading (no control)
    # answers of no reading's shape (None where a point's readings are "accepted" and "refused"): at an
    # every_answer_fits point no reading fits them and every check refuses them, so a check that stops asking
    # the table and accepts whatever it is handed is still caught there
    stray_answers: tuple[Any, ...] = ()


def recorded(ctx: Any, point: str) -> set[str]:
    return set(ctx.readings.get(point, {}).get("seen", []))


def unless_failed(ctx: Any, point: str, failures: Any) -> Verdict:
    """The readings the check recorded, or False when it failed (a judgement yielding failures, or one failure)."""
    found = [f for f in (failures if isinstance(failures, (list, Iterator)) else [failures]) if f is not None]
    return False if found else recorded(ctx, point)


def cases(row: Reading) -> list[tuple[Any, Any, Any]]:
    assert row.example is not None
    return [(*row.example, row.wrong), *row.more]


def walk(row: Reading, rows: ReadingTable, how: Walk, judge_of: Callable[[Reading, str], Judge] | None = None) -> list[str]:
    """Everything wrong with one row: its own data, and each check it names asked for its answer and control."""
    judge = judge_of or how.judge_of
    if row.example is None or not row.checks:
        return [f"{row.point} {row.name!r}: a row needs an example and its checks"]
    if row.wrong is None and row.point not in how.every_answer_fits:
        return [f"{row.point} {row.name!r}: a row needs an answer no reading allows"]
    problems = []
    for case, (request, answer, wrong) in enumerate(cases(row)):
        if not row.fits(request, answer, how.pins):
            problems.append(f"{row.point} {row.name!r}: the example does not fit its own reading")
        if wrong is not None and any(o.fits(request, wrong, how.pins) for o in rows.of(row.point)):
            problems.append(f"{row.point} {row.name!r}: the control fits a reading")
        if wrong is None and any(o.fits(request, stray, how.pins) for o in rows.of(row.point) for stray in how.stray_answers):
            problems.append(f"{row.point} {row.name!r}: an answer of no reading's shape fits a reading")
        if wrong is None and any(o is not row and o.fits(request, answer, how.pins) for o in rows.of(row.point)):
            problems.append(f"{row.point} {row.name!r}: the example fits another reading too (no control tells them apart)")
        if wrong is None and any(o is not row and o.example is not None and row.fits(*o.example, how.pins)
                                 for o in rows.of(row.point)):
            problems.append(f"{row.point} {row.name!r}: another reading's example fits this one too")
        for check in row.checks:
            got = judge(row, check)(how.context(), row, request, answer)
            if not got:
                problems.append(f"{check} blames what {row.point} accepts ({row.name})")
            elif isinstance(got, set) and row.name not in got:
                problems.append(f"{check} recorded {sorted(got)}, not {row.name!r}")
            control = row.control(check) if case == 0 else wrong  # a check's own control goes with the example
            if control is not None and judge(row, check)(how.context(), row, request, control):
                problems.append(f"{check} accepts the control of {row.point} ({row.name})")
            if wrong is None and any(judge(row, check)(how.context(), row, request, stray) for stray in how.stray_answers):
                problems.append(f"{check} accepts an answer of no reading's shape at {row.point} ({row.name})")
    return problems


def never(request: Any, answer: Any) -> bool:
    return False


def always(request: Any, answer: Any) -> bool:
    return True


def with_prediction(row: Reading, rows: Iterable[Reading], predicts: Callable[[Any, Any], bool]) -> tuple[Reading, ReadingTable]:
    """The row predicting with `predicts`, and the table holding it in the row's place."""
    mutated = replace(row, predicts=predicts)
    return mutated, ReadingTable(mutated if other is row else other for other in rows)


def broken_tables(row: Reading, rows: Iterable[Reading]) -> Iterator[tuple[str, Reading, ReadingTable]]:
    """The row's prediction made never to hold, then always to hold: (how, the broken row, the table holding it)."""
    rows = list(rows)
    for broken in (never, always):
        yield (broken.__name__, *with_prediction(row, rows, broken))


def blames_everything(ctx: Any, row: Reading, request: Any, answer: Any) -> Verdict:
    return False


def accepts_everything(ctx: Any, row: Reading, request: Any, answer: Any) -> Verdict:
    return {row.name}


def broken_checks(row: Reading, how: Walk) -> Iterator[tuple[str, Callable[[Reading, str], Judge]]]:
    """Each check the row names made to blame everything, then (where the row has a control) to accept
    everything: (what was broken, the judges with that one check broken)."""
    for check in row.checks:
        for broken in (blames_everything, accepts_everything):
            if broken is accepts_everything and row.wrong is None:
                continue  # a point whose every answer fits a reading has nothing to miss
            yield f"{check} {broken.__name__}", (lambda _row, name, c=check, b=broken: b if name == c else how.judge_of(_row, name))
