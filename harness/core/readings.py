"""Readings recorded from what the target was seen to do, never from the branch a check took.

A check that meets an open point of a spec (an errata id) names each plausible reading with its
prediction for the answer at hand; `observe` records every reading whose prediction held, and when
none of the accepted ones held gives a Failure naming them all. Either way the check is recorded as having
met the point (`ctx.met`), so that a reading is never shown as followed when a check that met the same
point failed in the run (`contradictions`, read by every rendering of a report).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .results import Failure

Prediction = bool | Callable[[Any], bool]


@dataclass(frozen=True)
class Observation:
    point: str
    matched: tuple[str, ...]  # the readings whose prediction held (recorded)
    accepted: tuple[str, ...]  # the readings the run accepts (all plausible ones unless an option pins one)
    failure: Failure | None  # when no accepted reading held

    def __bool__(self) -> bool:
        return self.failure is None

    def fits(self, reading: str) -> bool:
        return reading in self.matched


def equals(expected: Any) -> Callable[[Any], bool]:
    """A prediction: the answer is `expected` (one per reading, bound now, not when the loop has moved on)."""
    return lambda answer: bool(answer == expected)


def includes(item: Any) -> Callable[[Any], bool]:
    """A prediction: the answer, a collection, holds `item`."""
    return lambda answer: item in answer


def _holds(prediction: Prediction, answer: Any) -> bool:
    try:
        return bool(prediction(answer)) if callable(prediction) else bool(prediction)
    except (KeyError, TypeError, AttributeError, ValueError):
        return False  # an answer of an unforeseen shape fits no prediction about it


def observe(ctx: Any, point: str, predictions: Mapping[str, Prediction], answer: Any = None, *,
            accepted: Iterable[str] | None = None, title: str = "", path: str = "$",
            pinned: tuple[str, ...] = ()) -> Observation:
    """Record (ctx.reading) each reading of `point` whose prediction holds for `answer`. `accepted`:
    the readings the run accepts (default: every one given); `pinned`: the options that narrowed them,
    carried by the failure. The failure names every accepted reading and what was received."""
    matched = tuple(name for name, prediction in predictions.items() if _holds(prediction, answer))
    met(ctx, point)
    for name in matched:
        ctx.reading(point, name)
    allowed = tuple(predictions if accepted is None else accepted)
    if any(name in allowed for name in matched):
        return Observation(point, matched, allowed, None)
    expected = "one of the accepted readings (" + point + "): " + "; ".join(allowed)
    received = answer if not matched else {"answer": answer, "fits only": list(matched)}
    failure = Failure(title or f"the answer fits no accepted reading of {point}", received, expected, path,
                      readings=pinned)
    return Observation(point, matched, allowed, failure)


def met(ctx: Any, point: str) -> None:
    """The running check met `point`, whichever reading (if any) its answer fitted; a context without the
    record (a test's fake) is left as it is."""
    record = getattr(ctx, "met", None)
    if callable(record):
        record(point)


def footer_reading(suite: str, point: str, seen: Mapping[str, list[str]], met: Iterable[str]) -> dict[str, Any]:
    """A footer's reading entry: what was seen and the checks that recorded it (`seen`: a Context's
    readings[point]), and under `met` the other checks that met the point with no reading fitting."""
    entry: dict[str, Any] = {"suite": suite, "point": point, "seen": list(seen["seen"]), "checks": list(seen["checks"])}
    others = [c for c in met if c not in entry["checks"]]
    if others:
        entry["met"] = others
    return entry


def contradictions(readings: Iterable[Mapping[str, Any]],
                   results: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """(suite, point) -> the checks that met the point in the run and failed (a warning is a failed check
    too), for a report's footer readings and its results. A reading of such a point is not shown as followed:
    the failure says the target did not do what the reading describes everywhere the point was met.
    `checks` of an entry are the checks that recorded a reading of it, `met` those that met it with none
    fitting; report.jsonl keeps what was seen either way."""
    failed = {(str(r.get("suite")), str(r.get("check_id"))) for r in results if r.get("outcome") == "failed"}
    found: dict[tuple[str, str], list[str]] = {}
    for entry in readings:
        suite, point = str(entry.get("suite")), str(entry.get("point"))
        for check in (*entry.get("checks", ()), *entry.get("met", ())):
            if (suite, str(check)) in failed:
                against = found.setdefault((suite, point), [])
                if str(check) not in against:
                    against.append(str(check))
    return found


# ---- a suite's table of readings: one source for every check that meets an open point ----------------

@dataclass(frozen=True)
class Reading:
    """One plausible reading of an open point (an errata id), as a row of a suite's table of readings.

    `meets(request)`: the request meets the point; `predicts(request, answer)`: the answer fits this
    reading; `accepted(pins)`: the run accepts it (the suite's pins: its options, its declared level).
    `checks`: the checks that can meet the point, each of which must accept the reading's answer (a test
    walks the table and asks each); `example` a request meeting the point with an answer fitting the
    reading, `wrong` an answer to the same request that no reading allows (that test's control); `controls`
    (check, answer): the control for a check that judges less of the answer than the reading does (it sees
    only the status where the reading reads the body too), still an answer no reading allows; `more`: the same for
    each other form of request that meets the point (a reading met two ways is walked both ways)."""

    point: str
    name: str
    meets: Callable[[Any], bool]
    predicts: Callable[[Any, Any], bool]
    accepted: Callable[[Any], bool] = lambda pins: True
    checks: tuple[str, ...] = ()
    example: tuple[Any, Any] | None = None
    wrong: Any = None
    controls: tuple[tuple[str, Any], ...] = ()
    more: tuple[tuple[Any, Any, Any], ...] = ()  # further (request, answer, control) where the point is met another way

    def control(self, check: str) -> Any:
        """The answer `check` must refuse in the walk: its own control, else the row's."""
        return dict(self.controls).get(check, self.wrong)

    def fits(self, request: Any, answer: Any, pins: Any) -> bool:
        """The request meets the point, the run accepts the reading, and the answer is what it predicts."""
        try:
            return bool(self.meets(request)) and bool(self.accepted(pins)) and bool(self.predicts(request, answer))
        except (KeyError, TypeError, AttributeError, ValueError):
            return False  # an answer of an unforeseen shape fits no prediction about it


def _meets(row: Reading, request: Any) -> bool:
    try:
        return bool(row.meets(request))
    except (KeyError, TypeError, AttributeError, ValueError):
        return False


@dataclass(frozen=True)
class Asked:
    """A request in a form a suite's rows name by its situation (EMP's, AMPS's readings): what was asked, and
    what it handed (`given`)."""

    situation: str
    given: Any = None


def at(situation: str, given: Any = None) -> Callable[[Any], bool]:
    """`meets`: the request is this situation (and, when given, hands this)."""
    return lambda request: request.situation == situation and (given is None or request.given == given)


class ReadingTable:
    """A suite's readings of its open points, one row per reading: the fuzzer, the example checks and the
    model read the same rows, so no check blames what another accepts."""

    def __init__(self, rows: Iterable[Reading]) -> None:
        self.rows = tuple(rows)
        seen: set[tuple[str, str]] = set()
        for row in self.rows:
            if (row.point, row.name) in seen:
                raise ValueError(f"reading {row.point} {row.name!r} is in the table twice")
            seen.add((row.point, row.name))

    def __iter__(self) -> Iterator[Reading]:
        return iter(self.rows)

    def points(self) -> list[str]:
        return list(dict.fromkeys(row.point for row in self.rows))

    def of(self, *points: str) -> list[Reading]:
        return [row for row in self.rows if row.point in points]

    def named(self, point: str, name: str) -> Reading:
        return next(row for row in self.rows if (row.point, row.name) == (point, name))

    def fitting(self, request: Any, answer: Any, pins: Any, points: Iterable[str] | None = None) -> list[Reading]:
        """The accepted readings (of `points`, default every point) the answer to the request fits."""
        wanted = None if points is None else set(points)
        return [row for row in self.rows if (wanted is None or row.point in wanted) and row.fits(request, answer, pins)]

    def observe(self, ctx: Any, request: Any, answer: Any, pins: Any, points: Iterable[str] | None = None) -> list[Reading]:
        """`fitting`, each reading recorded (ctx.reading): what the target was seen to do; every point the
        request meets recorded as met (ctx.met), a reading fitting or not."""
        wanted = None if points is None else set(points)
        for point in dict.fromkeys(row.point for row in self.rows if (wanted is None or row.point in wanted)
                                   and _meets(row, request)):
            met(ctx, point)
        found = self.fitting(request, answer, pins, points)
        for row in found:
            ctx.reading(row.point, row.name)
        return found

    def meeting(self, point: str, request: Any, where: str = "the table") -> list[Reading]:
        """The rows of `point` the request meets; none is a harness bug (a check asking a point in a form no row
        knows), never a verdict on the target."""
        rows = [row for row in self.of(point) if row.meets(request)]
        if not rows:
            raise LookupError(f"no reading of {point} in {where} meets {request!r:.120}")
        return rows

    def ask(self, ctx: Any, point: str, request: Any, answer: Any, pins: Any, *, accepted: Iterable[str] | None = None,
            shown: Any = None, where: str = "the table", **how: Any) -> Any:
        """ctx.observe with this table's predictions for `point`: each reading the answer fits recorded; the run
        accepts the readings `pins` allow, narrowed to `accepted` when the check knows more (a class's
        expectation). `shown`: the answer as a failure shows it (default the answer)."""
        rows = self.meeting(point, request, where)
        allowed = [row.name for row in rows if row.accepted(pins) and (accepted is None or row.name in set(accepted))]
        fits = {row.name: predicted(row, request, answer) for row in rows}
        return ctx.observe(point, fits, answer if shown is None else shown, accepted=allowed, **how)

    def judge(self, ctx: Any, point: str, request: Any, answer: Any, pins: Any, *, title: str = "", path: str = "$",
              pinned: tuple[str, ...] = (), telling: bool = False, shown: Any = None) -> Observation:
        """`observe` of one point as an Observation: the rows of `point` the request meets are its readings; each
        whose prediction holds is recorded (accepted or not, as `observe` records); the failure, when no accepted
        one holds, names the accepted ones. `telling`: record nothing when the answer fits more than one reading
        (it does not tell them apart); `shown`: what the failure says was received (default the answer)."""
        meeting = [row for row in self.rows if row.point == point and _meets(row, request)]
        if meeting:  # the point met, whichever reading (if any) the answer fits: a failure here contradicts its readings
            met(ctx, point)
        matched = tuple(row.name for row in meeting if predicted(row, request, answer))
        allowed = tuple(row.name for row in meeting if _accepts(row, pins))
        if not (telling and len(matched) > 1):
            for name in matched:
                ctx.reading(point, name)
        if any(name in allowed for name in matched):
            return Observation(point, matched, allowed, None)
        received = answer if shown is None else shown
        expected = "one of the accepted readings (" + point + "): " + "; ".join(allowed)
        failure = Failure(title or f"the answer fits no accepted reading of {point}",
                          received if not matched else {"answer": received, "fits only": list(matched)}, expected, path,
                          readings=pinned)
        return Observation(point, matched, allowed, failure)


def predicted(row: Reading, request: Any, answer: Any) -> bool:
    """The answer is what the row predicts (an answer of an unforeseen shape fits no prediction about it)."""
    try:
        return bool(row.predicts(request, answer))
    except (KeyError, TypeError, AttributeError, ValueError):
        return False  # an answer of an unforeseen shape fits no prediction about it


def _accepts(row: Reading, pins: Any) -> bool:
    try:
        return bool(row.accepted(pins))
    except (KeyError, TypeError, AttributeError, ValueError):
        return False
