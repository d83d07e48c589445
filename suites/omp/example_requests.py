"""The requests the rows of OMP's table of readings (example_readings.py) are met in, and a context that only
records: each kind runs its checks' own observation on an answer and says which readings it fits."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memconform.core.readings import Observation, observe
from memconform.suites.omp import model
from memconform.targets.base import Reply

STAMP = "2026-06-29T12:00:00Z"


class Scratch:
    """A context that only records: a check's observation run to see which readings an answer fits, with
    every option open (the table's `accepted` applies the run's pins)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.states: dict[type, Any] = {}

    def option(self, name: str) -> str:
        return str(getattr(model.Readings(), name, "either"))

    def reading(self, point: str, seen: str) -> None:
        self.seen.add(seen)

    def observe(self, point: str, predictions: Any, answer: Any = None, **how: Any) -> Observation:
        return observe(self, point, predictions, answer, **how)

    def note(self, line: str) -> None:
        """Notes are the check's to print; a prediction keeps none."""

    def state(self, kind: type) -> Any:
        return self.states.setdefault(kind, kind())


def seen_by(run: Callable[[Scratch], Any]) -> set[str]:
    scratch = Scratch()
    run(scratch)
    return scratch.seen


def reply(status: int, body: Any = None) -> Reply:
    return Reply(status=status, body=body, raw=b"" if body is None else json.dumps(body).encode(),
                 content_type="" if body is None else "application/json")


def doc(i: int, **fields: Any) -> dict[str, Any]:
    """A stored memory as a server serves it: distinct created_at, one word every memory holds."""
    stamp = f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z"
    base = {"id": f"mem_{i:016d}", "content": f"memory {i} common", "type": ("semantic", "episodic", "procedural")[i % 3],
            "source": {"tool": "claude", "timestamp": STAMP}, "tags": ["all"] + (["even"] if i % 2 == 0 else []),
            "created_at": stamp, "updated_at": stamp, "expires_at": None, "metadata": {}}
    return base | fields


def page(docs: Any, **said: Any) -> Reply:
    return reply(200, {"memories": list(docs), **said})


def newest(docs: Any) -> list[dict[str, Any]]:
    return sorted(docs, key=lambda d: d["created_at"], reverse=True)


# ---- the forms a request meets a point in -------------------------------------------------------------

@dataclass(frozen=True)
class Modelled:
    """A request the OMP model judges with `stored` memories served before it; `point` the errata point the
    check observes; `read_back`: the answer is the pair (the write's answer, the GET of its id after it);
    `pins` the options (Readings fields) that may narrow the point. `readings(answer)`: what ask.observe,
    the example checks' door to the model, records."""

    point: str
    request: model.Request
    stored: tuple[dict[str, Any], ...] = ()
    read_back: bool = False
    pins: tuple[str, ...] = ()

    def seeded(self, readings: model.Readings) -> model.Model:
        return model.Model.seeded(self.stored, readings)

    def readings(self, answer: Any) -> set[str]:
        from memconform.suites.omp import ask

        return seen_by(lambda ctx: ask.observe(ctx, self.point, self.request, answer, seeded=self.seeded,  # type: ignore[arg-type]
                                               pins=self.pins, read_back=self.read_back, title=self.point))


@dataclass(frozen=True)
class KeywordSearch:
    """O2 as search_keyword_all_words meets it: memories by name, the query, the names found."""

    made: tuple[tuple[str, dict[str, Any]], ...]
    query: dict[str, Any] = field(hash=False)

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import searching

        found = {name for name, mem in self.made if mem["id"] in ids(answer)}
        return seen_by(lambda ctx: searching.observe_keyword_match(ctx, dict(self.made), self.query, found))  # type: ignore[arg-type]


@dataclass(frozen=True)
class TagSearch:
    """O2 as search_filters meets it: the memories stored, a search with two tags."""

    stored: tuple[dict[str, Any], ...]
    query: dict[str, Any] = field(hash=False)

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import searching

        seeded = model.Model.seeded(self.stored, model.Readings(keyword_match="all-words"))
        return seen_by(lambda ctx: searching.observe_search_tags(ctx, seeded, self.query, ids(answer)))  # type: ignore[arg-type]


@dataclass(frozen=True)
class PinnedSearch:
    """O2 as search_limit_and_total meets it: the answer fits a reading when the model pinned to it accepts it."""

    stored: tuple[dict[str, Any], ...]
    query: dict[str, Any] = field(hash=False)
    option: str = ""
    values: tuple[str, ...] = ()
    reading: str = ""

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import searching

        return seen_by(lambda ctx: searching.observe_pinned(ctx, list(self.stored), self.query, answer, self.option,  # type: ignore[arg-type]
                                                         self.values, self.reading, "the page"))


@dataclass(frozen=True)
class ImportBatch:
    """O7: a batch with one invalid memory at `where` among `good` valid ones; the answer is (reply, stored)."""

    where: int = 1
    bad_id: str = "mem_bad0000000000000"
    good: int = 2

    def readings(self, answer: tuple[Reply, int]) -> set[str]:
        from memconform.suites.omp import importing

        reply_, stored = answer
        return seen_by(lambda ctx: ctx.observe("O7", importing.o7_predictions(reply_, self.where, self.bad_id, stored,
                                                                                 self.good)))


@dataclass(frozen=True)
class BadListFixture:
    """O9 as list_rejects_bad_paging meets it: a request fixture with a bad list parameter."""

    case: dict[str, Any] = field(hash=False)

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import rules

        return seen_by(lambda ctx: ctx.observe("O9", rules.o9_predictions(self.case, answer)))


@dataclass(frozen=True)
class Expired:
    """O14: the GET of a memory whose expires_at has passed."""

    label: str = "expires_at in the past"

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import domain_writing

        return seen_by(lambda ctx: domain_writing.observe_expiry(ctx, self.label, answer))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ForeignMemory:
    """O17: a tool's key reaching another tool's memory (read, update or delete)."""

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import searching

        return seen_by(lambda ctx: list(searching.tool_status_failures(ctx, answer)))  # type: ignore[arg-type]


@dataclass(frozen=True)
class CreatedAtKept:
    """O26: how many of the `imported` memories kept their created_at (the answer)."""

    imported: int = 101

    def readings(self, answer: int) -> set[str]:
        from memconform.suites.omp import dataset

        return seen_by(lambda ctx: dataset.observe_created_at(ctx, answer, self.imported))  # type: ignore[arg-type]


@dataclass(frozen=True)
class OpenClass:
    """O36, O37, O52, O53: one open class of the domain table (`field:class`), sent alone in a valid write."""

    key: str

    def value_class(self) -> Any:
        from memconform.kit import domain

        field_id, class_id = self.key.rsplit(":", 1)
        return domain.required("omp").field(field_id).cls(class_id)

    def readings(self, answer: Reply) -> set[str]:
        from memconform.suites.omp import domain_data

        vc = self.value_class()
        return seen_by(lambda ctx: domain_data.observe_open(ctx, vc, answer.ok, 400 <= answer.status < 500, answer.brief()))  # type: ignore[arg-type]


def ids(answer: Reply) -> set[str]:
    body = answer.body if isinstance(answer.body, dict) else {}
    return {mem["id"] for mem in body.get("memories") or () if isinstance(mem, dict) and isinstance(mem.get("id"), str)}
