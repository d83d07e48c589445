"""A model-based check: random sequences of appends, updates and deletes by the target and by other
apps on one file, each step compared with what the spec says the file must resolve to.

The model (`Model`) is the spec's state: for each id, the content of its newest line, or absent once
deleted. Other apps' lines, written by the harness between the target's operations, must stay byte
for byte and in order whatever the target does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core.model import Failure, Inconclusive, TargetError, Unsupported
from memconform.formats import emp

from .common import by_id, call, entry, new_file, read_bytes, target_view, writer_check, written_id


@dataclass
class Model:
    live: dict[str, str] = field(default_factory=dict)  # id -> content of its newest line
    # other apps' lines, in file order, with their ids (a delete of that id may remove them by a rewrite)
    foreign: list[tuple[str, bytes]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)


# hypothesis keeps per-run state in globals: runs in several threads of one process (suites run side
# by side) would mix their examples, so one state machine runs at a time
ONE_MACHINE_AT_A_TIME = threading.Lock()


class Divergence(AssertionError):
    """The target's file or view left the model: hypothesis shrinks the sequence that caused it."""


def now_ms(path: str) -> int:
    """A ts newer than every line in the file and than the clock (other apps write 'now')."""
    newest = max((e["ts"] for _, _, e in emp.iter_lines(path) if emp.readable(e)), default=0)
    return max(int(time.time() * 1000), int(newest) + 1)


def foreign_intact(path: str, model: Model) -> None:
    lines = read_bytes(path).split(b"\n")
    pos = 0
    for _, raw in model.foreign:
        try:
            pos = lines.index(raw, pos) + 1
        except ValueError:
            raise Divergence(f"another app's line was dropped, changed or moved: {raw[:120]!r}") from None


def compare(ctx: Any, path: str, model: Model) -> None:
    foreign_intact(path, model)
    seen = target_view(ctx, path)
    got = by_id(seen if seen is not None else emp.resolve(emp.iter_lines(path)))
    want = model.live
    if set(got) != set(want):
        raise Divergence(f"the view holds ids {sorted(map(str, set(got) - set(want)))} it should not and lacks "
                         f"{sorted(set(want) - set(got))}")
    for i, content in want.items():
        if got[i].get("content") != content:
            raise Divergence(f"id {i} resolves to {got[i].get('content')!r}, not its newest content {content!r}")


def machine(ctx: Any, offers_update: bool) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

    class EmpFile(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.path = new_file(ctx)
            self.model = Model()
            ctx.cache.setdefault("emp.stateful-models", []).append(self.model)

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
            if op == "target_updates" and not offers_update:
                op = "other_app_updates"
            getattr(self, op)(pick)

        def chosen(self, pick: int) -> str:
            ids = list(self.model.live)
            return ids[pick % len(ids)]

        def target_appends(self, pick: int) -> None:
            e = entry(ctx, "t")
            reply = call(ctx, "append", {"path": self.path, "entry": e})
            if not reply.ok:
                raise TargetError(f"append was refused: {reply.raw[:200]!r}")
            self.model.live[written_id(ctx, reply, e)] = e["content"]
            self.step("the target appends an entry")

        def target_updates(self, pick: int) -> None:
            i, content = self.chosen(pick), ctx.unique("t-upd")
            reply = call(ctx, "update", {"path": self.path, "id": i, "entry": {"content": content}})
            if not reply.ok:
                raise TargetError(f"update was refused: {reply.raw[:200]!r}")
            self.model.live[i] = content
            self.step(f"the target updates {i}")

        def target_deletes(self, pick: int) -> None:
            i = self.chosen(pick)
            reply = call(ctx, "delete", {"path": self.path, "id": i})
            if not reply.ok:
                raise TargetError(f"delete was refused: {reply.raw[:200]!r}")
            del self.model.live[i]
            self.model.foreign = [(j, raw) for j, raw in self.model.foreign if j != i]
            self.step(f"the target deletes {i}")

        def other_app_appends(self, pick: int) -> None:
            e = entry(ctx, "o", ts=now_ms(self.path))
            self.write_foreign(e)
            self.model.live[e["id"]] = e["content"]
            self.step("another app appends an entry")

        def other_app_updates(self, pick: int) -> None:
            i = self.chosen(pick)
            e = dict(entry(ctx, "o-upd", ts=now_ms(self.path)), id=i)
            self.write_foreign(e)
            self.model.live[i] = e["content"]
            self.step(f"another app updates {i}")

        def write_foreign(self, e: dict[str, Any]) -> None:
            raw = json.dumps(e, ensure_ascii=False, separators=(", ", ": ")).encode()
            with open(self.path, "ab") as fh:  # between the target's operations: no lock contention
                fh.write(raw + b"\n")
            self.model.foreign.append((e["id"], raw))
            while time.time() * 1000 <= e["ts"]:  # a target stamping "now" next is newer, as in real time
                time.sleep(0.001)

        @invariant()
        def other_apps_lines_intact(self) -> None:  # after every step: read from the file, no target call
            foreign_intact(self.path, self.model)

        def teardown(self) -> None:  # the target's view, once per sequence (one process per call is slow)
            if self.model.steps:
                compare(ctx, self.path, self.model)

    return EmpFile


@writer_check(section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def writer_model_sequences(ctx: Any) -> Iterator[Failure]:
    """Random sequences of appends, updates and deletes by the target and by other apps: after every
    step every other app's line is where it was, and at the end the target's view equals the model."""
    from hypothesis import settings
    from hypothesis.errors import Flaky
    from hypothesis.stateful import run_state_machine_as_test

    first = entry(ctx, "probe")
    try:  # is update offered at all? (a refusal still says yes: the sequences then show what it does)
        call(ctx, "update", {"path": new_file(ctx, [first]), "id": first["id"], "entry": {"content": ctx.unique("p")}})
        offers_update = True
    except Unsupported:
        offers_update = False
    base = ctx.profile.hypothesis_settings()
    steps = 6 if ctx.profile.derandomize else 20
    try:
        with ONE_MACHINE_AT_A_TIME:
            run_state_machine_as_test(machine(ctx, offers_update),
                                      settings=settings(base, stateful_step_count=steps, max_examples=min(
                                          base.max_examples, 3 if ctx.profile.derandomize else 25)))
    except Flaky as exc:  # the same steps behaved differently when replayed: a divergence that did not repeat
        diverged = [e for e in getattr(exc, "exceptions", ()) if isinstance(e, Divergence)]
        if not diverged:
            raise TargetError(f"a sequence behaved differently when replayed: {exc}") from None
        models = ctx.cache.get("emp.stateful-models") or [Model()]
        yield Failure("after a sequence of operations the file left the model", str(diverged[0]),
                      "the view and other apps' lines as the spec resolves them",
                      detail="(did not repeat on every replay) steps: " + " -> ".join(models[-1].steps))
        return
    except Divergence as exc:
        models = ctx.cache.get("emp.stateful-models") or [Model()]
        yield Failure("after a sequence of operations the file left the model", str(exc),
                      "the view and other apps' lines as the spec resolves them",
                      detail="steps: " + " -> ".join(models[-1].steps))
        return
    if not ctx.cache.get("emp.stateful-models"):
        raise Inconclusive("no sequence ran")
