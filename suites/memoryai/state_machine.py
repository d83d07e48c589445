"""A model-based check: random sequences of imports, re-imports of earlier bundles, rival rows,
rejected bundles, deletions and exports, each export compared with what §3.8, §3.1 and §6 say the
brain must hold.

The model (`Model`) is the spec's state for the sequence's own chunks: content_hash -> the fields of
the first row imported (§3.8: later duplicates are skipped, the existing row is preserved), minus the
chunks deleted (§6); entities by name with accumulated frequency, latest last_seen and OR of is_dna.
A rejected bundle (version 999) must leave everything as it was. What each import may answer and leave,
and which chunks each export scope may hold, is the oracle's (suites/memoryai/model.py): the reply is
matched with its outcomes, and scoped exports (dna_only, since in two offsets) with its chunk sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import TargetError
from memconform.suites.memoryai import client
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.model import (
    ExportAnswer,
    Readings,
    State,
    delete,
    export_answers,
    import_answers,
)


@dataclass
class Model:
    prefix: str
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)  # live: content_hash -> first row
    deleted: set[str] = field(default_factory=set)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    bundles: list[dict[str, Any]] = field(default_factory=list)  # accepted bundles, to import again
    steps: list[str] = field(default_factory=list)
    acknowledged: int = 0  # chunks in accepted imports
    tally: dict[str, int] = field(default_factory=history_counts.counts)  # the last comparison's counts
    state: State = field(default_factory=State)  # the oracle's state of the sequence's data

    def take(self, state: State) -> None:
        self.state = state
        self.chunks = {h: dict(ch) for h, ch in state.chunks.items()}
        self.deleted = set(state.deleted)
        self.entities = {n: dict(e) for n, e in state.entities.items()}


class Divergence(model_based.Divergence):
    """The target's export left the model: hypothesis shrinks the sequence that caused it (outside ci)."""


def expected_of(model: Model) -> dict[str, Any]:
    """What the model says the export holds of this sequence: language-neutral, for the sequence file."""
    return {"prefix": model.prefix, "deleted": sorted(model.deleted),
            "chunks": {h: {k: ch.get(k) for k in ("content", "tags", "importance", "zone", "memory_type")}
                       for h, ch in model.chunks.items()},
            "entities": {n: {"is_dna": e["is_dna"], "last_seen": e["last_seen"]} for n, e in model.entities.items()}}


def export_differs(doc: Any, want: dict[str, Any]) -> str | None:
    """What differs between an export and the model's expectation (None: nothing)."""
    if not isinstance(doc, dict):
        return f"the export is {type(doc).__name__}, not a bundle"
    by_hash = client.by_hash(doc)
    wrong = next((x for x in by_hash.get(client.MISTYPED_HASH, [])
                  if isinstance(x.get("content"), str) and x["content"].startswith(want["prefix"])), None)
    if wrong is not None:  # a chunk of the sequence under client.MISTYPED_HASH matches no chunk of the model
        value = wrong["content_hash"]
        return (f"an exported chunk's content_hash is not a string ({type(value).__name__} {client.dumps(value)[:40]}): "
                f"{wrong['content'][:60]!r}")
    rows = {h: r for h, r in by_hash.items()
            if any(isinstance(x.get("content"), str) and x["content"].startswith(want["prefix"]) for x in r)}
    chunks = want["chunks"]
    if set(rows) != set(chunks):
        return (f"the export holds {len(set(rows) - set(chunks))} chunk(s) it should not "
                f"({'deleted or rejected' if set(rows) & set(want['deleted']) else 'unexpected'}) and lacks "
                f"{len(set(chunks) - set(rows))}")
    for h, ch in chunks.items():
        got = rows[h]
        if len(got) != 1:
            return f"a chunk is present {len(got)} times: {ch['content'][:60]!r}"
        for name in ("tags", "importance", "zone", "memory_type"):
            if got[0].get(name) != ch[name]:
                return f"the stored row's {name} is {got[0].get(name)!r}, not the first import's {ch[name]!r}"
    entities = client.entities_by_name(doc)
    for name, e in want["entities"].items():
        got_e = entities.get(name)
        if got_e is None:
            return f"entity {name[-12:]!r} is missing"
        if got_e.get("is_dna") is not e["is_dna"] or client.instant(got_e.get("last_seen")) != client.instant(e["last_seen"]):
            return f"entity {name[-12:]!r} is {got_e}, the model says {e}"
    return None


def tally(doc: Any, model: Model) -> dict[str, int]:
    """Jepsen-style counts of the sequence's chunks in one export."""
    rows = {h: r for h, r in client.by_hash(doc).items()
            if any(isinstance(x.get("content"), str) and x["content"].startswith(model.prefix) for x in r)}
    return history_counts.counts(
        acknowledged=model.acknowledged,
        lost=len(set(model.chunks) - set(rows)),
        duplicated=sum(1 for h in model.chunks if len(rows.get(h, ())) > 1),
        resurrected=len(set(rows) & model.deleted),
        corrupted=sum(1 for h, ch in model.chunks.items() if h in rows and any(
            rows[h][0].get(k) != ch[k] for k in ("tags", "importance", "zone", "memory_type"))))


def compare(ctx: CheckContext, model: Model) -> None:
    doc = client.export(ctx, "full")
    model.tally = tally(doc, model)
    problem = export_differs(doc, expected_of(model))
    if problem:
        raise Divergence(sequence.expect(ctx, "memoryai.export", expected_of(model), problem))


def readings_of(ctx: CheckContext) -> Readings:
    return Readings(reimport_counters=ctx.option("reimport_counters"), since_boundary=ctx.option("since_boundary"))


def scoped_expected(model: Model, allowed: tuple[ExportAnswer, ...]) -> dict[str, Any]:
    """What a scoped export may hold of this sequence: language-neutral, for the sequence file."""
    return {"prefix": model.prefix, "allowed": [{"hashes": sorted(a.hashes), "why": a.why} for a in allowed]}


def scoped_differs(doc: Any, want: dict[str, Any]) -> str | None:
    """None when the sequence's chunks in a scoped export are one of the sets the oracle allows."""
    if not isinstance(doc, dict):
        return f"the export is {type(doc).__name__}, not a bundle"
    rows = {h for h, r in client.by_hash(doc).items()
            if any(isinstance(x.get("content"), str) and x["content"].startswith(want["prefix"]) for x in r)}
    sets = [set(a["hashes"]) for a in want["allowed"]]
    if any(rows == hashes for hashes in sets):
        return None
    closest = min(sets, key=lambda hashes: len(rows ^ hashes))
    return (f"the export holds {len(rows - closest)} chunk(s) it should not and lacks {len(closest - rows)} "
            f"(allowed: {'; '.join(a['why'] for a in want['allowed'])})")


CORE_TYPES = st.sampled_from(memoryai.CORE_TYPES)


class Brain(RuleBasedStateMachine):
    """One tenant's imports, re-imports, exports and deletions; bound to a run by `model_based.for_run`."""

    ctx: ClassVar[CheckContext]
    can_delete: ClassVar[bool]  # the delete_chunk hook is offered

    def __init__(self) -> None:
        super().__init__()
        self.model = Model(prefix=self.ctx.unique("sm"))
        self.names = [f"{self.model.prefix}-entity-{i}" for i in range(2)]
        self.n = 0
        self.ctx.state(client.MemoryaiRun).models.append(self.model)
        sequence.begin(self.ctx)

    def new_chunk(self, memory_type: str, zone: str, pinned: bool) -> dict[str, Any]:
        self.n += 1
        # each chunk a minute older than the one before: `since` between them selects some, not all
        return client.chunk(self.ctx, "sm", memory_type, content=f"{self.model.prefix} #{self.n} ✓", zone=zone, is_pinned=pinned,
                       importance=round(0.1 * (self.n % 10), 1), tags=[f"t{self.n}"],
                       created_at=client.now_iso(-3600 - 60 * self.n))

    def send(self, bundle: dict[str, Any], what: str) -> bool:
        """One import, the reply matched with the oracle's outcomes; the one it fits is the next state."""
        outcomes = import_answers(self.model.state, bundle, readings_of(self.ctx))
        reply = client.import_bundle(self.ctx, bundle)
        fits = [o for o in outcomes if o.accepted == reply.ok]
        if not fits and not reply.ok:
            raise TargetError(f"{what}: a conformant bundle was refused: {reply.raw[:200]!r}")
        if not fits:
            raise Divergence(sequence.expect(self.ctx, "reply", {"ok": False},
                                             f"{what} was accepted; the spec allows only: {'; '.join(o.why for o in outcomes)}"))
        self.model.take(fits[0].state)
        self.model.steps.append(what)
        return reply.ok

    def in_creation_order(self) -> list[str]:
        """The live chunks' hashes oldest first: the hashes differ from one replay to the next (the
        sequence's prefix is new each time), their order must not, or what a draw picks (and so the
        bundles a delete leaves to draw from) changes between replays."""
        return sorted(self.model.chunks, key=lambda k: self.model.chunks[k]["created_at"])

    def accept(self, bundle: dict[str, Any], what: str) -> None:
        if self.send(bundle, what):
            self.model.acknowledged += len(bundle["chunks"])
            self.model.bundles.append(bundle)

    @initialize()
    def two_bundles(self) -> None:
        """Every sequence starts with two imports and the first imported again (not the latest)."""
        self.import_new([("fact", "standard", False)], 0, 60, False)
        self.import_new([("decision", "critical", True)], 1, 30, True)
        self.accept(self.model.bundles[0], "import the first bundle again")

    @rule(kinds=st.lists(st.tuples(CORE_TYPES, st.sampled_from(memoryai.ZONES), st.booleans()), min_size=1, max_size=3),
          entity=st.sampled_from([0, 1]), age=st.integers(1, 5000), dna=st.booleans())
    def import_new(self, kinds: list[Any], entity: int, age: int, dna: bool) -> None:
        chunks = [self.new_chunk(*k) for k in kinds]
        ent = {"name": self.names[entity], "frequency": 1, "first_seen": client.now_iso(-9000),
               "last_seen": client.now_iso(-age), "is_dna": dna}
        self.accept(client.bundle(self.ctx, chunks, entities=[ent]), f"import {len(chunks)} new chunk(s) and entity {entity}")

    @precondition(lambda self: bool(self.model.bundles))
    @rule(data=st.data())
    def import_earlier_again(self, data: Any) -> None:
        bundle = data.draw(st.sampled_from(self.model.bundles))
        self.accept(bundle, "import an earlier bundle again")

    @precondition(lambda self: bool(self.model.chunks))
    @rule(data=st.data())
    def import_rival_row(self, data: Any) -> None:
        h = data.draw(st.sampled_from(self.in_creation_order()))
        rival = dict(self.model.chunks[h], tags=["rival"], importance=0.95, zone="ephemeral")
        self.accept(client.bundle(self.ctx, [rival]), "import a rival row of a stored chunk")

    @rule()
    def import_rejected(self) -> None:
        probe = self.new_chunk("fact", "standard", False)
        self.send(client.bundle(self.ctx, [probe], version=memoryai.MAX_VERSION + 998), "import a bundle of version 999 (rejected)")

    @precondition(lambda self: bool(self.model.chunks))
    @rule(data=st.data(), scope=st.sampled_from(["dna_only", "since"]), zone=st.sampled_from(["Z", "+05:30"]),
          shift=st.sampled_from([-1, 0, 1]))
    def export_scoped(self, data: Any, scope: str, zone: str, shift: int) -> None:
        """A scoped export: dna_only, or since a stored chunk's creation (a second either side, or at it), in Z
        or +05:30; the sequence's chunks in it are one of the sets the oracle allows. A target that
        does not serve the scope is not judged here (export_scope_dna_only and export_scope_since are)."""
        since = None
        if scope == "since":
            h = data.draw(st.sampled_from(self.in_creation_order()))
            at = client.instant(self.model.chunks[h]["created_at"])
            assert at is not None
            since = client.iso(at, shift, zone)
        allowed = export_answers(self.model.state, scope, since, readings_of(self.ctx))
        reply = self.ctx.target.call("export", client.export_body(self.ctx, scope, since))
        self.model.steps.append(f"export {scope}{' since ' + since if since else ''}")
        if not reply.ok or not isinstance(reply.body, dict):
            self.ctx.note(f"a {scope} export was not served ({reply.status}): the sequence does not judge it")
            return
        want = scoped_expected(self.model, allowed)
        problem = scoped_differs(reply.body, want)
        if problem:
            raise Divergence(sequence.expect(self.ctx, "memoryai.scoped_export", want, problem))

    @precondition(lambda self: bool(self.model.chunks) and self.can_delete)
    @rule(data=st.data())
    def delete(self, data: Any) -> None:
        h = data.draw(st.sampled_from(self.in_creation_order()))
        client.hook(self.ctx, "delete_chunk", {"content_hash": h}, "deletion in sequences")
        self.model.take(delete(self.model.state, h))
        # whether importing a deleted chunk again restores it is open: never ask
        self.model.bundles = [b for b in self.model.bundles if all(ch["content_hash"] != h for ch in b["chunks"])]
        self.model.steps.append("delete a stored chunk")

    @rule()
    def export_matches(self) -> None:
        self.model.steps.append("export")
        compare(self.ctx, self.model)

    def teardown(self) -> None:
        if self.model.steps and not sequence.diverged(self.ctx):
            compare(self.ctx, self.model)


