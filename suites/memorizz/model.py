"""The MemoRizz oracle: for a request in a state, every answer the page (and errata M9, M10, M13, M61) accepts.

Pure: no I/O, no target. A state is what the store holds, `(store, id) -> data`. A request is an import
(mode preview, restore or clone; conflict policy error, skip or replace; whether validation refuses the
archive; a failure armed after N writes) or an export (a selection by namespace, agent or stores). The
answer is a set of acceptable outcomes; a caller finds the one the target gave (`fitting`) and takes its
state as the next one, or fails naming them all. An export's answers (`export_answers`) say which of the
state's records it holds, which stores may hold anything, and whether embeddings were requested.

Readings: the defaults accept every plausible one; `Readings` pins them (options of the suite). A clone's
new ids are the target's to choose, so a clone outcome says how many records are added and under which
namespace rule, not their ids; a failed import (armed failure) may leave the writes before it
("restore is not atomic across stores"), and reports as many as it committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

Key = tuple[str, str]  # (store, record id)
State = Mapping[Key, Mapping[str, Any]]
MODES = ("preview", "restore", "clone")
CONFLICTS = ("error", "skip", "replace")


@dataclass(frozen=True)
class Readings:
    """The open points a run pins (errata M9 namespaces: "either", "keep", "rewrite")."""

    namespaces: str = "either"


DEFAULT = Readings()


@dataclass(frozen=True)
class ImportRequest:
    records: tuple[tuple[str, str, Mapping[str, Any]], ...]  # (store, id, data) in archive order
    mode: str = "restore"
    conflict: str = "error"
    valid: bool = True  # False: the archive breaks a rule validation rejects (M11)
    fail_after: int | None = None  # a failure armed after this many writes (the arm_failure hook)

    def keys(self) -> list[Key]:
        return [(store, rid) for store, rid, _ in self.records]


@dataclass(frozen=True)
class Answer:
    """One acceptable answer: refused or accepted, the conflicts listed, the records written (`imported`),
    and the state after (None for a clone, whose new ids the target chooses: see `added`)."""

    accepted: bool
    state: dict[Key, Mapping[str, Any]] | None
    conflicts: frozenset[Key] = frozenset()
    imported: int = 0
    added: int = 0  # records a clone adds under new ids
    namespaces: str = ""  # a clone's namespace rule: "kept" or "rewritten"
    why: str = ""


@dataclass(frozen=True)
class Answers:
    outcomes: tuple[Answer, ...]
    readings: Readings = field(default=DEFAULT)

    def fitting(self, accepted: bool, imported: int | None = None) -> list[Answer]:
        """The outcomes a reply fits: its acceptance and, where it reports one, its count of writes."""
        return [o for o in self.outcomes if o.accepted == accepted and (imported is None or o.imported == imported)]

    def expected(self) -> str:
        return "; ".join(o.why for o in self.outcomes)


def conflicts(state: State, request: ImportRequest) -> frozenset[Key]:
    """The records of the archive the destination already holds (a clone gives new ids: none)."""
    if request.mode == "clone":
        return frozenset()
    return frozenset(k for k in request.keys() if k in state)


def planned_writes(state: State, request: ImportRequest) -> list[tuple[Key, Mapping[str, Any]]]:
    """The writes of an accepted restore, in archive order: skip leaves existing records, replace overwrites."""
    taken = conflicts(state, request)
    return [((store, rid), data) for store, rid, data in request.records
            if not ((store, rid) in taken and request.conflict == "skip")]


def answers(state: State, request: ImportRequest, readings: Readings = DEFAULT) -> Answers:
    """Every outcome the spec accepts for this import in this state."""
    if request.mode not in MODES or request.conflict not in CONFLICTS or not request.valid:
        return Answers((Answer(False, dict(state), why="refused, nothing written"),), readings)
    taken = conflicts(state, request)
    if request.mode == "preview":
        listing = Answer(True, dict(state), taken, why=f"a preview listing {len(taken)} conflicts, nothing written")
        if taken and request.conflict == "error":  # the preview may also say the restore it previews would be refused
            return Answers((listing, Answer(False, dict(state), taken, why="a preview saying ok: false for its "
                                             f"{len(taken)} conflicts, nothing written")), readings)
        return Answers((listing,), readings)
    if taken and request.conflict == "error":
        return Answers((Answer(False, dict(state), taken, why="refused for conflicts before writing anything"),), readings)
    if request.mode == "clone":
        return Answers(tuple(clone_outcomes(request, readings)), readings)
    writes = planned_writes(state, request)
    if request.fail_after is not None and request.fail_after < len(writes):
        return Answers(tuple(partial_outcomes(state, writes, request.fail_after, taken)), readings)
    after = {**state, **dict(writes)}
    return Answers((Answer(True, after, taken, len(writes), why=f"restored, {len(writes)} records written"),), readings)


def partial_outcomes(state: State, writes: list[tuple[Key, Mapping[str, Any]]], fail_after: int,
                     taken: frozenset[Key]) -> Iterable[Answer]:
    """A failure armed after N writes: the import fails; the writes committed before it may stay (not atomic)
    or be rolled back, and the report's `imported` equals what stays."""
    kept = {**state, **dict(writes[:fail_after])}
    yield Answer(False, kept, taken, fail_after, why=f"failed after {fail_after} writes, which stay and are reported")
    if fail_after:
        yield Answer(False, dict(state), taken, 0, why="failed and rolled back, 0 reported")


def clone_outcomes(request: ImportRequest, readings: Readings) -> Iterable[Answer]:
    """A clone adds every record under a new id; namespaces kept or rewritten (M9)."""
    rules = {"either": ("kept", "rewritten"), "keep": ("kept",), "rewrite": ("rewritten",)}[readings.namespaces]
    for rule in rules:
        yield Answer(True, None, frozenset(), len(request.records), len(request.records), rule,
                      why=f"cloned: {len(request.records)} records under new ids, namespaces {rule}")


def agent_selection(state: State, agent_id: str) -> tuple[set[str], set[str]]:
    """(the agents, the namespaces) an export selecting `agent_id` covers: the agent, its delegates, and the
    namespaces (memory_ids) of both (errata, target operations)."""
    owner = state.get(("agents", agent_id)) or {}
    agents = {agent_id} | {d for d in owner.get("delegates") or [] if isinstance(d, str) and ("agents", d) in state}
    namespaces = {ns for a in agents for ns in (state.get(("agents", a)) or {}).get("memory_ids") or [] if isinstance(ns, str)}
    return agents, namespaces


def export_records(state: State, memory_id: str | None = None, stores: Iterable[str] | None = None,
                   agent_id: str | None = None) -> dict[Key, Mapping[str, Any]]:
    """What an export selecting a namespace, an agent (with its delegates and their namespaces) and,
    optionally, some stores holds of the state."""
    chosen = set(stores) if stores is not None else None
    agents, namespaces = agent_selection(state, agent_id) if agent_id is not None else (set(), set())

    def selected(key: Key, data: Mapping[str, Any]) -> bool:
        if memory_id is not None and data.get("memory_id") != memory_id and memory_id not in (data.get("memory_ids") or []):
            return False  # an agent is in the namespaces it is bound to (memory_ids)
        if agent_id is not None and not (key in {("agents", a) for a in agents} or data.get("memory_id") in namespaces):
            return False
        return chosen is None or key[0] in chosen

    return {k: v for k, v in state.items() if selected(k, v)}


STORES = ("personas", "entity_memory", "knowledge_base", "toolbox", "workflow_memory", "skillbox", "conversation_memory",
          "summaries", "tool_log", "short_term_memory", "semantic_cache", "shared_memory", "agents")


@dataclass(frozen=True)
class ExportRequest:
    """An export's selection as sent (None: the parameter left out)."""

    memory_id: str | None = None
    agent_id: str | None = None
    types: tuple[str, ...] | None = None
    include_embeddings: Any = None


@dataclass(frozen=True)
class ExportAnswer:
    """One acceptable answer to an export: refused, or the state's records it holds (`keys`), the stores that
    may hold any record at all, and whether the manifest must say embeddings were requested."""

    refused: bool
    keys: frozenset[Key] = frozenset()
    stores: frozenset[str] = frozenset(STORES)
    embeddings: bool = False
    reading: str = ""  # the M61 reading this answer is, when the request is one the page leaves open
    why: str = ""


def export_answers(state: State, request: ExportRequest) -> tuple[ExportAnswer, ...]:
    """Every answer an export of this selection may give in this state. Open (errata M61): an unknown agent
    refused or selecting nothing; `types: []` every store, no store, or refused; an unknown store key refused
    or holding nothing; a namespace and an agent together both narrowing every record, or the namespace
    selecting the memories and the agent (with the namespace) the agents."""
    embeddings = request.include_embeddings is True
    types = request.types
    known = tuple(t for t in types if t in STORES) if types is not None else STORES

    def answer(stores: Iterable[str], reading: str = "", nothing: bool = False) -> ExportAnswer:
        chosen = frozenset(stores)
        keys = frozenset() if nothing else frozenset(export_records(state, request.memory_id, chosen, request.agent_id))
        return ExportAnswer(False, keys, chosen, embeddings, reading,
                            f"{len(keys)} of the state's records, only stores {sorted(chosen) if len(chosen) < 13 else 'any'}")

    refused = ExportAnswer(True, why="refused")
    if request.agent_id is not None and ("agents", request.agent_id) not in state:
        return (replace(refused, reading="an unknown agent refused"),
                answer(known, "an unknown agent selects nothing", nothing=True))
    if types is not None and not types:
        return (replace(refused, reading="types [] refused"), answer(STORES, "types [] as every store"),
                answer((), "types [] as no store"))
    if len(known) < len(types or ()):
        return (replace(refused, reading="an unknown store key refused"),
                answer(known, "an unknown store key exports nothing of it"))
    both = answer(known, "a namespace and an agent both narrow")
    if request.memory_id is not None and request.agent_id is not None:
        memories = frozenset(k for k in export_records(state, request.memory_id, known) if k[0] != "agents")
        split = replace(both, keys=memories | {k for k in both.keys if k[0] == "agents"},
                        reading="the namespace selects the memories, the agent the agents")
        if split.keys != both.keys:
            return (both, split)
    return (replace(both, reading=""),)
