"""A model-based check: random sequences of restores (every conflict policy), previews and refused archives
into one namespace, the namespace's export compared with the model after every step.

The model is what the namespace must hold: each record's id and prose (a clone's copies under the new ids
its report names, when it keeps the namespace). What each import may answer and
leave behind is the oracle's (suites/memorizz/model.py): a preview writes nothing; a restore with
conflict=error over an existing record is refused before writing anything (its new records too); skip
keeps the existing records and adds the new ones; replace overwrites and adds; an archive validation
rejects changes nothing. The reply is matched with the oracle's outcomes and the one it fits is the
model's next state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import TargetError
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.client import (
    MemorizzRun,
    by_content,
    export,
    forget_namespaces_at_end,
    import_archive,
    scalar,
)
from memconform.suites.memorizz.model import CONFLICTS, Answer, ImportRequest, Key, answers, export_records


@dataclass
class Model:
    records: dict[str, str] = field(default_factory=dict)  # knowledge_base id -> content
    steps: list[str] = field(default_factory=list)
    acknowledged: int = 0  # records in accepted restores
    tally: dict[str, int] = field(default_factory=history_counts.counts)  # the last comparison's counts


class Divergence(model_based.Divergence):
    """The namespace's export left the model: hypothesis shrinks the sequence that caused it."""


def oracle_state(model: Model, ns: str) -> dict[Key, dict[str, Any]]:
    return {("knowledge_base", rid): {"memory_id": ns, "content": text} for rid, text in model.records.items()}


def oracle_request(archive: dict[str, Any], mode: str, conflict: str, valid: bool = True) -> ImportRequest:
    return ImportRequest(tuple((store, r["id"], r["data"]) for store, r in memorizz.records_of(archive)), mode, conflict, valid)


def take_outcome(ctx: CheckContext, model: Model, ns: str, request: ImportRequest, accepted: bool,
                 what: str) -> Answer:
    """The oracle's outcome the reply fits, made the model's state; a reply fitting none diverges (a refusal
    where only acceptance is allowed is the target's error, as before: a valid restore refused)."""
    found = answers(oracle_state(model, ns), request)
    fits = found.fitting(accepted)
    if not fits:
        if not accepted:
            raise TargetError(f"{what}: refused, the spec allows only {found.expected()}")
        raise Divergence(sequence.expect(ctx, "reply", {"refused": True},
                                         f"{what} was accepted; the spec allows only: {found.expected()}"))
    state = fits[0].state or {}
    model.records = {rid: str(data.get("content")) for (store, rid), data in state.items() if store == "knowledge_base"}
    if accepted and request.mode != "preview":
        model.acknowledged += sum(1 for store, rid, _ in request.records if store == "knowledge_base"
                                  and ((store, rid) not in fits[0].conflicts or request.conflict == "replace"))
    return fits[0]


def records_in(doc: Any) -> dict[Any, str]:
    """knowledge_base id -> prose; a record whose id is an array or object is left out (export_differs names it)."""
    return {record.get("id"): text for text, (store, record) in by_content(doc).items()
            if store == "knowledge_base" and scalar(record.get("id"))}


def mistyped_ids(doc: Any) -> list[Any]:
    """The knowledge_base record ids that are an array or an object."""
    return [r.get("id") for store, r in memorizz.records_of(doc) if store == "knowledge_base" and not scalar(r.get("id"))]


def export_differs(doc: Any, want: dict[str, Any]) -> str | None:
    """What differs between the namespace's export and the model's records (None: nothing)."""
    if not isinstance(doc, dict):
        return f"the export is {type(doc).__name__}, not an archive"
    bad = mistyped_ids(doc)
    if bad:
        return f"knowledge_base record ids (`$.stores.knowledge_base[].id`) that are not strings: {str(bad)[:200]}"
    got, records = records_in(doc), want["records"]
    if got != records:
        extra = sorted(map(str, set(got) - set(records)))
        missing = sorted(set(records) - set(got))
        changed = sorted(k for k in set(got) & set(records) if got[k] != records[k])
        return f"the namespace holds records {extra} it should not, lacks {missing}, and has other prose in {changed}"
    return None


def compare(ctx: CheckContext, ns: str, model: Model) -> None:
    doc = export(ctx, memory_id=ns)
    got = records_in(doc)
    model.tally = history_counts.counts(acknowledged=model.acknowledged, lost=len(set(model.records) - set(got)),
                                corrupted=sum(1 for k in set(got) & set(model.records) if got[k] != model.records[k]))
    selected = export_records(oracle_state(model, ns), memory_id=ns, stores=["knowledge_base"])
    want = {"memory_id": ns, "records": {rid: str(data.get("content")) for (_store, rid), data in selected.items()}}
    problem = export_differs(doc, want)
    if problem:
        raise Divergence(sequence.expect(ctx, "memorizz.export", want, problem))


class Namespace(RuleBasedStateMachine):
    """One namespace restored, previewed and cloned into; bound to a run by `model_based.for_run`."""

    ctx: ClassVar[CheckContext]

    def __init__(self) -> None:
        super().__init__()
        self.model = Model()
        self.ctx.state(MemorizzRun).models.append(self.model)
        sequence.begin(self.ctx)
        self.ns = self.ctx.unique("model-ns")
        forget_namespaces_at_end(self.ctx, self.ns)

    def archive(self, ids: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
        archive = memorizz.empty_archive(source_provider="memconform-model")
        texts = {rid: self.ctx.unique("prose") for rid in ids}
        archive["stores"]["knowledge_base"] = [{"id": rid, "data": {"memory_id": self.ns, "content": text}}
                                               for rid, text in texts.items()]
        agent = self.ctx.unique("model-agent")  # an archive of notes usually travels with its agent
        archive["stores"]["agents"] = [{"id": agent, "data": {"agent_id": agent, "memory_ids": [self.ns],
                                                              "delegates": []}}]
        return memorizz.seal(archive), texts

    def fresh(self, data: Any) -> list[str]:
        return [self.ctx.unique("kb") for _ in range(data.draw(st.integers(1, 3), label="new records"))]

    def step(self, text: str) -> None:
        self.model.steps.append(text)
        compare(self.ctx, self.ns, self.model)

    def send(self, archive: dict[str, Any], mode: str, conflict: str, what: str, valid: bool = True) -> None:
        """One import, its reply matched with the oracle's outcomes, then the namespace compared."""
        accepted, _body = import_archive(self.ctx, archive, mode, conflict)
        request = oracle_request(archive, mode, conflict, valid)
        take_outcome(self.ctx, self.model, self.ns, request, accepted, what)
        self.step(what)

    @initialize()
    def some_records(self) -> None:
        """Every sequence starts with records a later restore can meet, met once under each conflict
        policy: the three paths are in every sequence, whatever the rules drawn after (a small `ci`
        budget may otherwise draw none of them)."""
        archive, _texts = self.archive([self.ctx.unique("kb"), self.ctx.unique("kb")])
        self.send(archive, "restore", "error", "restore 2 new records")
        for conflict in ("skip", "replace", "error"):
            old = sorted(self.model.records)[:1]
            archive, _texts = self.archive(old + [self.ctx.unique("kb")])
            self.send(archive, "restore", conflict, f"restore 1 existing and 1 new record (conflict={conflict})")

    @rule(data=st.data(), conflict=st.sampled_from(CONFLICTS))
    def restore_new(self, data: Any, conflict: str) -> None:
        archive, texts = self.archive(self.fresh(data))
        self.send(archive, "restore", conflict, f"restore {len(texts)} new records (conflict={conflict})")

    def over_existing(self, data: Any, conflict: str) -> None:
        old = data.draw(st.lists(st.sampled_from(sorted(self.model.records)), min_size=1, max_size=2, unique=True),
                        label="existing")
        new = self.fresh(data)  # always some: conflict=skip must still add them
        archive, _texts = self.archive(old + new)
        self.send(archive, "restore", conflict, f"restore {len(old)} existing and {len(new)} new records (conflict={conflict})")

    # one rule per policy: each is drawn as often as the other operations
    @precondition(lambda self: bool(self.model.records))
    @rule(data=st.data())
    def restore_over_existing_error(self, data: Any) -> None:
        self.over_existing(data, "error")

    @precondition(lambda self: bool(self.model.records))
    @rule(data=st.data())
    def restore_over_existing_skip(self, data: Any) -> None:
        self.over_existing(data, "skip")

    @precondition(lambda self: bool(self.model.records))
    @rule(data=st.data())
    def restore_over_existing_replace(self, data: Any) -> None:
        self.over_existing(data, "replace")

    @rule(data=st.data())
    def preview(self, data: Any) -> None:
        ids = self.fresh(data) + sorted(self.model.records)[:1]
        archive, _texts = self.archive(ids)
        accepted, _body = import_archive(self.ctx, archive, "preview")
        # a preview may also be answered as a refusal when it lists conflicts: either way nothing is written
        found = answers(oracle_state(self.model, self.ns), oracle_request(archive, "preview", "error"))
        self.model.records = {rid: str(d.get("content")) for (store, rid), d in (found.outcomes[0].state or {}).items()
                              if store == "knowledge_base"}
        self.step(f"preview {len(ids)} records ({'accepted' if accepted else 'refused'})")

    @rule(data=st.data())
    def clone(self, data: Any) -> None:
        """A clone of new records and one existing: every record added under the new id its id_map names,
        into this namespace if the clone keeps namespaces, into a new one if it rewrites them (M9)."""
        ids = self.fresh(data) + sorted(self.model.records)[:1]
        archive, texts = self.archive(ids)
        accepted, body = import_archive(self.ctx, archive, "clone")
        found = answers(oracle_state(self.model, self.ns), oracle_request(archive, "clone", "error"))
        if not found.fitting(accepted):
            raise TargetError(f"a clone of {len(ids)} records was refused; the spec allows only {found.expected()}")
        id_map = body.get("id_map") if isinstance(body, dict) else None
        new_ns = id_map.get(self.ns) if isinstance(id_map, dict) else None
        if not isinstance(id_map, dict) or not all(isinstance(id_map.get(rid), str) for rid in ids):
            raise TargetError("the clone report has no id_map naming every record's new id")
        if isinstance(new_ns, str) and new_ns != self.ns:
            forget_namespaces_at_end(self.ctx, new_ns)  # rewritten: the copies live in a namespace of their own
        else:  # kept: the copies join this namespace under their new ids
            self.model.records.update({id_map[rid]: texts[rid] for rid in ids})
            self.model.acknowledged += len(ids)
        self.step(f"clone {len(ids)} records (namespaces {'kept' if new_ns in (None, self.ns) else 'rewritten'})")

    @rule(data=st.data(), broken=st.sampled_from(["version", "count", "checksum", "duplicate"]))
    def restore_refused(self, data: Any, broken: str) -> None:
        archive, _texts = self.archive(self.fresh(data))
        kb = archive["stores"]["knowledge_base"]
        if broken == "version":
            archive["version"] = 2
            memorizz.reseal(archive)
        elif broken == "count":
            archive["manifest"]["counts"]["knowledge_base"] += 1
            memorizz.reseal(archive)
        elif broken == "checksum":
            kb[0]["data"]["content"] += " (edited after sealing)"
        else:
            kb.append({"id": kb[0]["id"], "data": {"memory_id": self.ns, "content": self.ctx.unique("twin")}})
            memorizz.seal(archive)
        self.send(archive, "restore", "replace", f"an archive with a broken {broken} (restore refused)", valid=False)


