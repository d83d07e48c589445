"""The MemoryAI oracle: for a request in a state, every answer §3.1, §3.8 and §6 (with errata E6, E9, E10)
accept. Pure: no I/O, no target.

The state is the brain's chunks by content hash (the first row imported: §3.8 skips later duplicates and
preserves the existing row), the hashes deleted (§6: never exported again), the entities by name, and the
bundles already imported (E6: the very same bundle again may leave the counters as they were). Requests:
an import of a bundle, an export of a scope (`full`, `dna_only`, `since` with an instant in any offset).
Each answer is a tuple of acceptable outcomes; the caller matches the target's reply with them.

Readings (the defaults accept every plausible one; `Readings` pins them): E6 `reimport_counters`
(accumulate | stable), E10 `since_boundary` (inclusive | exclusive), E9 `invalid_chunks` (skip: the valid
chunks of the bundle imported | refuse: the whole bundle refused), E62 `since_with_other_scope` (ignored:
a `since` beside scope full or dna_only selects nothing | applied: it narrows that scope too).
An accepted import's outcome carries the ImportReport chunk counters it implies (§4). E63: an export of
scope `since` with no `since` (absent or null) may be served as every live chunk or refused (`may_refuse_export`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.core import oracle
from memconform.kit.shared_rules import parse_datetime
from memconform.suites.memoryai import format as memoryai


@dataclass(frozen=True)
class Readings:
    reimport_counters: str = "either"  # E6
    since_boundary: str = "either"  # E10
    invalid_chunks: str = "either"  # E9: "skip" or "refuse"
    since_with_other_scope: str = "either"  # E62: "ignored" or "applied"
    dna_rule: str = "union"  # E12: "union" (§3.7: type, zone or pin) or "type-only" (§2)

    def allowed(self, point: str, *names: str) -> tuple[str, ...]:
        pinned = getattr(self, point)
        return names if pinned == "either" else tuple(n for n in names if n == pinned)


DEFAULT = Readings()


@dataclass(frozen=True)
class State:
    chunks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # content_hash -> first row
    deleted: frozenset[str] = frozenset()
    entities: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seen_bundles: frozenset[str] = frozenset()  # canonical text of every bundle imported


@dataclass(frozen=True)
class Answer(oracle.Answer[State]):
    counters: Mapping[str, int] = field(default_factory=dict)  # the ImportReport's chunk counters (§4), when accepted


@dataclass(frozen=True)
class ExportAnswer:
    hashes: frozenset[str]  # the chunks of the state the export holds
    reading: str = ""
    why: str = ""


def instant(value: Any) -> dt.datetime | None:
    return parse_datetime(value, "memoryai")


def bundle_key(bundle: Mapping[str, Any]) -> str:
    return json.dumps(bundle, sort_keys=True, ensure_ascii=False, default=str)


def refused_why(bundle: Any, max_version: int) -> str | None:
    """Why §3.1 has the bundle refused, or None."""
    if not isinstance(bundle, Mapping) or bundle.get("format") != memoryai.FORMAT:
        return "format is not memoryai-bundle"
    version = bundle.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return "version is not an integer >= 1"
    if version > max_version:
        return f"version {version} is newer than {max_version}"
    manifest = bundle.get("manifest")
    if not isinstance(manifest, Mapping) or any(k not in manifest for k in ("scope", "embedding_model", "embedding_dim")):
        return "the manifest lacks scope, embedding_model or embedding_dim"
    return None


def chunk_valid(chunk: Any) -> bool:
    """§3.2's required fields (E9): a string content and a string memory_type."""
    return isinstance(chunk, Mapping) and isinstance(chunk.get("content"), str) and isinstance(chunk.get("memory_type"), str)


def import_answers(state: State, bundle: Mapping[str, Any], readings: Readings = DEFAULT,
                   max_version: int = memoryai.MAX_VERSION) -> tuple[Answer, ...]:
    """Every outcome of importing `bundle` in `state` the spec and the readings allow."""
    why = refused_why(bundle, max_version)
    if why is not None:
        return (Answer(False, state, why=f"refused ({why}), nothing changed"),)
    chunks = [ch for ch in bundle.get("chunks") or [] if isinstance(ch, Mapping)]
    invalid = [ch for ch in bundle.get("chunks") or [] if not chunk_valid(ch)]
    out: list[Answer] = []
    if invalid and "refuse" in readings.allowed("invalid_chunks", "skip", "refuse"):
        out.append(Answer(False, state, "refuse", "the whole bundle refused for its invalid chunks"))
    if invalid and "skip" not in readings.allowed("invalid_chunks", "skip", "refuse"):
        return tuple(out)
    again = bundle_key(bundle) in state.seen_bundles
    valid = [ch for ch in chunks if chunk_valid(ch)]
    added = added_chunks(state, valid)
    report = {"inserted": len(added) - len(state.chunks), "skipped_duplicate": len(valid) - (len(added) - len(state.chunks)),
              "skipped_invalid": len(invalid)}
    for counters in (readings.allowed("reimport_counters", "accumulate", "stable") if again else ("accumulate",)):
        after = State(added, state.deleted, merged_entities(state.entities, bundle.get("entities") or [], counters),
                      state.seen_bundles | {bundle_key(bundle)})
        out.append(Answer(True, after, counters if again else "", f"ingested (counters: {counters})", report))
    return tuple(out)


def added_chunks(state: State, chunks: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """§3.8: a chunk whose content_hash is held (or was deleted) is skipped; the first row stays."""
    out = dict(state.chunks)
    for ch in chunks:
        h = str(ch.get("content_hash") or memoryai.content_hash(ch["content"])).lower()
        if h not in out and h not in state.deleted:
            out[h] = dict(ch)
    return out


def merged_entities(held: Mapping[str, Mapping[str, Any]], incoming: Iterable[Any], counters: str) -> dict[str, Mapping[str, Any]]:
    """§3.8.3: frequency accumulated (or left as it was: E6 stable), the latest last_seen, is_dna OR-ed."""
    out = dict(held)
    for e in incoming:
        if not isinstance(e, Mapping) or not isinstance(e.get("name"), str):
            continue
        old = out.get(e["name"])
        if old is None:
            out[e["name"]] = dict(e)
            continue
        times = [t for t in (old.get("last_seen"), e.get("last_seen")) if instant(t) is not None]
        later = max(times, key=lambda t: instant(t)) if times else old.get("last_seen")  # type: ignore[arg-type,return-value]
        frequency = old.get("frequency", 0) if counters == "stable" else (old.get("frequency") or 0) + (e.get("frequency") or 0)
        out[e["name"]] = {**old, "last_seen": later, "is_dna": bool(old.get("is_dna")) or bool(e.get("is_dna")),
                          "frequency": frequency}
    return out


def delete(state: State, content_hash: str) -> State:
    """§6 through the delete_chunk hook: the chunk is gone and never exported again."""
    chunks = {h: ch for h, ch in state.chunks.items() if h != content_hash}
    return replace(state, chunks=chunks, deleted=state.deleted | {content_hash})


def export_answers(state: State, scope: str = "full", since: str | None = None,
                   readings: Readings = DEFAULT) -> tuple[ExportAnswer, ...]:
    """The chunk sets an export of `scope` may hold (deleted chunks never): full, the DNA chunks (§3.7 union
    rule), or those created after `since` (a chunk created at that very instant in or out: E10). A `since`
    beside scope full or dna_only is ignored or narrows that scope as well (E62)."""
    live = state.chunks
    if scope == "full":
        chosen, what = frozenset(live), "every live chunk"
    elif scope == "dna_only":
        chosen, what = frozenset(h for h, ch in live.items() if memoryai.is_dna(dict(ch), readings.dna_rule)), "the DNA chunks"
    elif scope == "since":
        chosen, what = frozenset(live), "every live chunk"
    else:
        raise ValueError(f"no scope {scope!r}")
    if since is None:
        return (ExportAnswer(chosen, why=what),)
    if instant(since) is None:
        raise ValueError(f"since {since!r} is no ISO-8601 date-time")
    if scope == "since":
        return since_answers(live, chosen, since, readings)
    out = []
    if "ignored" in readings.allowed("since_with_other_scope", "ignored", "applied"):
        out.append(ExportAnswer(chosen, "ignored", f"{what}: since is ignored beside scope {scope}"))
    if "applied" in readings.allowed("since_with_other_scope", "ignored", "applied"):
        out += [ExportAnswer(a.hashes, "applied", f"{what}, {a.why}") for a in since_answers(live, chosen, since, readings)]
    return tuple(out)


def may_refuse_export(scope: Any, since: Any) -> bool:
    """E63: scope `since` without a `since` names no instant: a refusal (4xx) is as plausible as serving every chunk."""
    return scope == "since" and since is None


def since_answers(live: Mapping[str, Mapping[str, Any]], chosen: frozenset[str], since: str,
                  readings: Readings) -> tuple[ExportAnswer, ...]:
    """The chunks of `chosen` created after `since`, under each E10 reading of the boundary."""
    cut = instant(since)
    out = []
    for reading in readings.allowed("since_boundary", "inclusive", "exclusive"):
        def after(ch: Mapping[str, Any], reading: str = reading) -> bool:
            created = instant(ch.get("created_at"))
            return created is not None and (created >= cut if reading == "inclusive" else created > cut)  # type: ignore[operator]
        out.append(ExportAnswer(frozenset(h for h in chosen if after(live[h])), reading,
                                f"chunks created {'at or ' if reading == 'inclusive' else ''}after {since}"))
    return tuple(out)
