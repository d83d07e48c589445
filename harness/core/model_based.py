"""The frame every model-based (state machine) check runs its machine in.

`run_sequences` runs the suite's hypothesis state machine with the profile's seed while every exchange
is recorded (core/sequence.py), adds the run's Jepsen-style counts (core/history_counts.py) from the models the
machine kept in the list it is given (a suite's run state), and says what happened in one of four ways:
- every sequence kept to the model: None;
- the target left the model: a `Diverged` holding the divergence, the models, whether the divergence
  repeated when hypothesis replayed the sequence, and where the sequence was saved (the failure's
  "Reproduce with:" line, core/sequence_files.py);
- the same steps answered differently on replay and none of the answers left the model: TargetError
  (the target is unsteady; no rule is shown broken);
- no sequence ran at all: Inconclusive.
The check turns a `Diverged` into its own Failure (its words, its reading).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from . import history_counts, sequence
from .results import Failure, Inconclusive, TargetError
from .sequence_files import failure_detail

M = TypeVar("M")


class Divergence(AssertionError):
    """The target left the model; a suite's machine raises it (or a subclass) and hypothesis shrinks
    the sequence that caused it."""


@dataclass(frozen=True)
class Diverged:
    error: Divergence
    models: list[Any]  # the machine's models, the failing sequence's last
    repeated: bool  # False: seen on one run of the sequence, not on every replay of it
    detail: str  # where the sequence was saved and how to rerun it

    @property
    def steps(self) -> list[str]:
        """The failing sequence's steps, as its model wrote them (none when no model was kept)."""
        return list(getattr(self.models[-1], "steps", [])) if self.models else []

    @property
    def again(self) -> str:
        return "" if self.repeated else "(did not repeat on every replay) "

    def failure(self, what: str, expected: str, readings: tuple[str, ...] = (), steps: list[str] | None = None) -> Failure:
        """The check's one Failure: what left the model and why, the shrunk steps, where the sequence was
        saved and how to replay it; `steps` when the machine logs its steps itself."""
        steps = self.steps if steps is None else steps
        return Failure(f"after a sequence of operations {what}: {self.error}", steps, expected,
                       detail=self.again + " -> ".join(steps) + "\n" + self.detail, readings=readings)


def budget(ctx: Any, derandomized: tuple[int, int], otherwise: tuple[int, int]) -> Any:
    """The machine's hypothesis settings: (examples, steps per example) for a derandomized profile (`ci`:
    few and short, a bounded gate) or otherwise, examples never above the profile's own."""
    from hypothesis import settings

    base = ctx.profile.hypothesis_settings()
    examples, steps = derandomized if ctx.profile.derandomize else otherwise
    return settings(base, max_examples=min(base.max_examples, examples), stateful_step_count=steps)


def for_run(machine: type[M], ctx: Any, **facts: Any) -> type[M]:
    """A suite's module-level machine bound to one run: its `ctx` and what the check learnt before the
    sequences (an operation offered or not, the keys, the readings) become class attributes of a subclass,
    so the machine closes over nothing and one class serves every run."""
    return type(machine.__name__, (machine,), {"ctx": ctx, **facts, "__qualname__": machine.__qualname__})


def run_sequences(ctx: Any, machine: type, config: Any, models: list[Any]) -> Diverged | None:
    """Run the machine as recorded; `models` is the list its examples append their models to."""
    from hypothesis.errors import Flaky, FlakyStrategyDefinition

    found: tuple[Divergence, bool] | None = None
    with sequence.recording(ctx) as recorder:
        try:
            sequence.run_machine(ctx, machine, config)
        except Divergence as exc:
            found = exc, True
        except (sequence.SequencesStopped, FlakyStrategyDefinition) as exc:
            if recorder.first_divergence is not None:  # replaying or shrinking was cut short: the divergence stands
                found = Divergence(recorder.first_divergence), False
            elif recorder.stopped is not None:
                ctx.note(f"no further sequence was started: {recorder.stopped} (the sequences before it were judged)")
            else:
                raise TargetError("replaying a sequence, the machine drew different data: its draws follow the target's answers "
                                  f"(what was stored, the ids given), and those differed between runs of the same steps: {exc}") from None
        except Flaky as exc:
            diverged = [e for e in getattr(exc, "exceptions", ()) if isinstance(e, Divergence)]
            if not diverged:
                raise TargetError(f"the target answered the same sequence of operations differently twice: {exc}") from None
            found = diverged[0], False
        finally:
            history_counts.record_sequences(ctx, models)
    if found is not None:
        return Diverged(found[0], list(models), found[1], failure_detail(ctx, recorder))
    if not models:
        raise Inconclusive("no sequence ran")
    return None
