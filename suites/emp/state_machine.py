"""A model-based check: random sequences of appends, updates and deletes by the target and by other
apps on one file, each step compared with what the spec says the file must resolve to.

The oracle is suites/emp/model.py: every operation of the sequence is applied to its `File` (one line per
write, stamped with the step's number, since each write comes after the previous one in real time and so
must be newer), and the view the target must show is its `view_answers`; a view is compared with it by
its `view_problems`. Other apps' lines, written by the harness between the target's operations, must stay byte
for byte and in order whatever the target does.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import TargetError
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.common import (
    OTHER,
    EmpRun,
    by_id,
    call,
    entry,
    new_file,
    read_bytes,
    target_view,
    written_id,
)
from memconform.suites.emp.checks.writing import dropped, in_order
from memconform.suites.emp.model import File, view_answers, view_problems


@dataclass
class Model:
    file: File = field(default_factory=File)  # every write, in order, on the step clock
    # other apps' lines, in file order, with their ids (a delete of that id may remove them by a rewrite)
    foreign: list[tuple[str, bytes]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)  # ids the target deleted
    acknowledged: int = 0  # the target's acknowledged appends, updates and deletes
    tally: dict[str, int] = field(default_factory=history_counts.counts)  # the last comparison's counts

    @property
    def live(self) -> dict[str, str]:
        """id -> the content the view must show for it (the model's one answer: no ties on the step clock)."""
        answers = view_answers(self.file.lines)
        return {i: str(won[0]["content"]) for i, won in answers.items() if won and won[0] is not None}

    def write(self, entry_id: str, content: str, src: str) -> None:
        line = {"v": emp.VERSION, "id": entry_id, "ts": len(self.file.lines) + 1, "src": src, "content": content}
        self.file = self.file.append(line)

    def delete(self, entry_id: str, src: str) -> None:
        # every form a delete may take resolves alike (E4): the first stands for them all
        self.file = self.file.delete_forms(entry_id, len(self.file.lines) + 1, src)[0]


# hypothesis keeps per-run state in globals: runs in several threads of one process (suites run side
# by side) would mix their examples, so one state machine runs at a time
ONE_MACHINE_AT_A_TIME = threading.Lock()


class Divergence(model_based.Divergence):
    """The target's file or view left the model: hypothesis shrinks the sequence that caused it."""


def now_ms(path: str) -> int:
    """A ts newer than every line in the file and than the clock (other apps write 'now')."""
    newest = max((e["ts"] for _, _, e in emp.iter_lines(path) if emp.readable(e)), default=0)
    return max(int(time.time() * 1000), int(newest) + 1)


def foreign_missing(path: str, foreign: list[str]) -> str | None:
    """The first of other apps' lines (in order) that is not in the file where it should be."""
    lines = read_bytes(path).split(b"\n")
    pos = 0
    for text in foreign:
        raw = text.encode("utf-8")
        try:
            pos = lines.index(raw, pos) + 1
        except ValueError:
            return f"another app's line was dropped, changed or moved: {raw[:120]!r}"
    return None


def expected_of(path: str, model: Model) -> dict[str, Any]:
    return {"path": path, "live": dict(model.live), "foreign": [raw.decode("utf-8") for _, raw in model.foreign]}


@dataclass
class DroppedByDelete:
    """The run's record (ctx.state) of the divergences a delete's rewrite without other apps' lines explains, by
    message (as model_based.Diverged keeps it): right after the target's delete, every one of other apps' lines
    not where it was is gone without a trace (no line holds its content), and the rest kept their order."""

    messages: set[str] = field(default_factory=set)


def only_dropped(path: str, foreign: list[str]) -> bool:
    """Are the other apps' lines not where they were all gone without a trace (a moved or changed one keeps its
    content: its own fault)? Content alone: another app's update shares its id with the target's lines."""
    lines = read_bytes(path).split(b"\n")
    wanted = [text.encode("utf-8") for text in foreign]
    missing = in_order(wanted, lines)
    return bool(missing) and all(dropped(wanted[i], lines, fields=("content",)) for i in missing)


def foreign_intact(ctx: CheckContext, path: str, model: Model) -> None:
    want = expected_of(path, model)
    problem = foreign_missing(path, want["foreign"])
    if problem:
        message = sequence.expect(ctx, "emp.foreign_lines", want, problem)
        if model.steps and model.steps[-1].startswith("the target deletes") and only_dropped(path, want["foreign"]):
            ctx.state(DroppedByDelete).messages.add(message[:1000])
        raise Divergence(message)


def view_differs(path: str, seen: list[dict[str, Any]] | None, want: dict[str, Any]) -> str | None:
    """What differs between the view (the target's, else the file resolved) and the model (None: nothing)."""
    problem = foreign_missing(path, want["foreign"])
    if problem:
        return problem
    view = seen if seen is not None else emp.resolve(emp.iter_lines(path))
    answers = {i: ({"id": i, "content": content},) for i, content in want["live"].items()}
    problems = view_problems(view, answers, same=lambda a, b: a.get("content") == b.get("content"))
    return "; ".join(problems[:3]) or None


def compare(ctx: CheckContext, path: str, model: Model) -> None:
    seen = target_view(ctx, path)
    got = by_id(seen if seen is not None else emp.resolve(emp.iter_lines(path)))
    live_lines = [e for _, _, e in emp.iter_lines(path)]
    model.tally = history_counts.counts(
        acknowledged=model.acknowledged, lost=len(set(model.live) - set(got)),
        duplicated=sum(1 for i in model.live if sum(1 for e in (seen or []) if isinstance(e, dict) and e.get("id") == i) > 1),
        resurrected=len(model.deleted & set(got)),
        corrupted=sum(1 for i, text in model.live.items() if i in got and got[i].get("content") != text)
        + sum(1 for e in live_lines if not emp.readable(e)))
    want = expected_of(path, model)
    problem = view_differs(path, seen, want)
    if problem:
        raise Divergence(sequence.expect(ctx, "emp.view", want, problem))


class EmpFile(RuleBasedStateMachine):
    """One memory.jsonl written by the target and by other apps; bound to a run by `model_based.for_run`."""

    ctx: ClassVar[CheckContext]
    offers_update: ClassVar[bool]  # else the target's updates are other apps' updates

    def __init__(self) -> None:
        super().__init__()
        sequence.begin(self.ctx)
        self.path = new_file(self.ctx)
        sequence.harness_step(self.ctx, "emp.new_file", {"path": self.path}, "a fresh memory.jsonl", done=True)
        self.model = Model()
        self.ctx.state(EmpRun).models.append(self.model)

    def step(self, text: str) -> None:
        self.model.steps.append(text)

    @initialize()
    def both_apps_start(self) -> None:  # every sequence starts with one entry of each app in the file
        self.target_appends(0)
        self.other_app_appends(0)

    # one rule choosing among the operations: hypothesis's simplest choice (the first) is the one
    # most likely to expose a writer's own state, a delete by the target
    @rule(op=st.sampled_from(["target_deletes", "other_app_appends", "target_updates", "target_appends",
                              "other_app_updates"]), pick=st.integers(0, 63))
    def act(self, op: str, pick: int) -> None:
        if op in ("target_deletes", "target_updates", "other_app_updates") and not self.model.live:
            op = "target_appends"
        if op == "target_updates" and not self.offers_update:
            op = "other_app_updates"
        getattr(self, op)(pick)

    def chosen(self, pick: int) -> str:
        ids = list(self.model.live)
        return ids[pick % len(ids)]

    def target_appends(self, pick: int) -> None:
        e = entry(self.ctx, "t")
        reply = call(self.ctx, "append", {"path": self.path, "entry": e})
        if not reply.ok:
            raise TargetError(f"append was refused: {reply.raw[:200]!r}")
        self.model.write(written_id(self.ctx, reply, e), e["content"], "target")
        self.model.acknowledged += 1
        self.step("the target appends an entry")

    def target_updates(self, pick: int) -> None:
        i, content = self.chosen(pick), self.ctx.unique("t-upd")
        reply = call(self.ctx, "update", {"path": self.path, "id": i, "entry": {"content": content}})
        if not reply.ok:
            raise TargetError(f"update was refused: {reply.raw[:200]!r}")
        self.model.write(i, content, "target")
        self.model.acknowledged += 1
        self.step(f"the target updates {i}")

    def target_deletes(self, pick: int) -> None:
        i = self.chosen(pick)
        reply = call(self.ctx, "delete", {"path": self.path, "id": i})
        if not reply.ok:
            raise TargetError(f"delete was refused: {reply.raw[:200]!r}")
        self.model.delete(i, "target")
        self.model.deleted.add(i)
        self.model.acknowledged += 1
        self.model.foreign = [(j, raw) for j, raw in self.model.foreign if j != i]
        self.step(f"the target deletes {i}")

    def other_app_appends(self, pick: int) -> None:
        e = entry(self.ctx, "o", ts=now_ms(self.path))
        self.write_foreign(e)
        self.model.write(e["id"], e["content"], OTHER)
        self.step("another app appends an entry")

    def other_app_updates(self, pick: int) -> None:
        i = self.chosen(pick)
        e = dict(entry(self.ctx, "o-upd", ts=now_ms(self.path)), id=i)
        self.write_foreign(e)
        self.model.write(i, e["content"], OTHER)
        self.step(f"another app updates {i}")

    def write_foreign(self, e: dict[str, Any]) -> None:
        raw = json.dumps(e, ensure_ascii=False, separators=(", ", ": ")).encode()
        # between the target's operations: no lock contention
        sequence.harness_step(self.ctx, "emp.append_line", {"path": self.path, "line": raw.decode("utf-8")}, "another app writes")
        self.model.foreign.append((e["id"], raw))
        while time.time() * 1000 <= e["ts"]:  # a target stamping "now" next is newer, as in real time
            time.sleep(0.001)

    @invariant()
    def other_apps_lines_intact(self) -> None:  # after every step: read from the file, no target call
        foreign_intact(self.ctx, self.path, self.model)

    def teardown(self) -> None:  # the target's view, once per sequence (one process per call is slow)
        if self.model.steps and not sequence.diverged(self.ctx):
            compare(self.ctx, self.path, self.model)


