"""Model-based stateful testing of OMP: a hypothesis RuleBasedStateMachine drives random
sequences of create, update (null on the nullable fields), delete, get, list (filters, sort, limit,
offset), search, export and import (every strategy, with one invalid memory at times) against the
target, and compares every answer with an in-harness model of what the spec says the state must be.

Every memory of one sequence holds a sequence-unique marker (and the run id), so answers are judged
on this sequence's data alone; the sequence deletes what it made. Steps are bounded per profile
(`ci`: few, derandomized, not shrunk). Elsewhere a failing sequence is shrunk; its steps are the
failure's detail, and its requests a sequence file (`memconform replay`) and a curl script under
the report folder (memconform.core.sequence).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.model import Failure
from memconform.suites.omp import client as c
from memconform.suites.omp import format as omp
from memconform.suites.omp import rules
from memconform.suites.omp.suite import SUITE

# (examples, steps per example) by profile: ci is small and derandomized
TAG_POOL = ("red", "green", "blue")


class Mismatch(model_based.Divergence):
    """The target's answer differs from the model's."""


class Model:
    """What the spec says this sequence's memories are: id -> fields, with the target's own timestamps."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[str, Any]] = {}
        self.gone: set[str] = set()
        self.acknowledged = 0  # creates, updates, deletes and imported memories the target acknowledged
        self.tally = history_counts.counts()  # the last export's counts

    def put(self, doc: dict[str, Any]) -> None:
        self.memories[doc["id"]] = {k: doc.get(k) for k in ("id", "content", "type", "tags", "namespace", "expires_at",
                                                           "created_at", "updated_at")}
        self.memories[doc["id"]]["tool"] = (doc.get("source") or {}).get("tool")

    def ordered(self, sort: str) -> list[dict[str, Any]] | None:
        """The model's order, or None when the target's timestamps tie (order not observable)."""
        field = "updated_at" if sort == "updated_at_desc" else "created_at"
        mems = list(self.memories.values())
        stamps = [rules.instant(m[field]) for m in mems]
        if None in stamps or len(set(stamps)) != len(stamps):
            return None
        return sorted(mems, key=lambda m: rules.instant(m[field]), reverse=sort != "created_at_asc")  # type: ignore[arg-type,return-value]


def _same(served: dict[str, Any], model: dict[str, Any]) -> list[str]:
    diffs = []
    for name in ("content", "type", "namespace"):
        if served.get(name) != model[name]:
            diffs.append(f"{name}: served {served.get(name)!r}, model {model[name]!r}")
    if sorted(served.get("tags") or []) != sorted(model["tags"] or []):
        diffs.append(f"tags: served {served.get('tags')!r}, model {model['tags']!r}")
    if rules.instant(served.get("expires_at")) != rules.instant(model["expires_at"]):
        diffs.append(f"expires_at: served {served.get('expires_at')!r}, model {model['expires_at']!r}")
    return diffs


def _model_fields(model: dict[str, Any]) -> dict[str, Any]:
    return {k: model.get(k) for k in ("content", "type", "namespace", "tags", "expires_at")}


@sequence.comparator("omp.memory")
def _replayed_memory(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    if reply is None or reply.status != 200 or not isinstance(reply.body, dict):
        return f"answered {getattr(reply, 'status', None)}, the model expected 200 with the memory"
    return "; ".join(_same(reply.body, want)) or None


@sequence.comparator("omp.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    body = reply.body if reply is not None and reply.ok else None
    if not isinstance(body, dict) or not isinstance(body.get("memories"), list):
        return f"the export answered {getattr(reply, 'status', None)} without a memories array"
    return export_differs([m for m in body["memories"] if isinstance(m, dict)], want)


def export_differs(exported: list[dict[str, Any]], want: dict[str, Any]) -> str | None:
    """What differs between the sequence's memories in an export and the model's expectation."""
    mine = [m for m in exported if want["marker"] in str(m.get("content"))]
    ids = {m.get("id"): m for m in mine}
    contents = {m.get("content"): m for m in mine}
    if "memories" in want:
        if set(ids) != set(want["memories"]):
            return f"export holds {len(ids)} memories of the sequence, model {len(want['memories'])}"
        for mem_id, fields in want["memories"].items():
            diffs = _same(ids[mem_id], fields)
            if diffs:
                return f"export {mem_id}: {'; '.join(diffs)}"
    lost = [i for i in want.get("present_ids", []) if i not in ids]
    if lost:
        return f"an import lost memories that existed: {sorted(lost)[:3]}"
    missing = [t for t in want.get("present_contents", []) if t not in contents]
    if missing:
        return f"an imported memory is missing: {missing[0][:80]!r}"
    stored = [t for t in want.get("absent_contents", []) if t in contents]
    if stored:
        return f"a memory that must not be stored is: {stored[0][:80]!r}"
    for text, mem_id in want.get("content_ids", {}).items():
        if text in contents and contents[text].get("id") != mem_id:
            return "conflict=overwrite did not keep the id"
    for text, mem_id in want.get("content_not_ids", {}).items():
        if text in contents and contents[text].get("id") == mem_id:
            return "conflict=duplicate reused an existing id"
    return None


def machine_class(ctx: CheckContext, log: list[str]) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, rule

    class OmpMachine(RuleBasedStateMachine):
        ids = Bundle("ids")

        def __init__(self) -> None:
            super().__init__()
            self.marker = f"sm{uuid.uuid4().hex[:10]}"
            self.words = [f"{self.marker}w{i}" for i in range(3)]
            self.model = Model()
            self.counter = 0
            log.clear()
            sequence.begin(ctx)
            ctx.state(c.OmpRun).models.append(self.model)

        def step(self, line: str, *_request: Any, **_fields: Any) -> None:
            log.append(line)

        def mismatch(self, message: str, name: str = "reply", **expected: Any) -> Mismatch:
            """The target left the model: what the model expected is recorded for replay."""
            return Mismatch(sequence.expect(ctx, name, expected, message))

        def stamp(self) -> str:
            """A distinct created_at for each imported memory, so order stays observable."""
            self.counter += 1
            return f"2025-06-01T{self.counter // 3600 % 24:02d}:{self.counter // 60 % 60:02d}:{self.counter % 60:02d}Z"

        def content(self, word: int) -> str:
            self.counter += 1
            return f"{ctx.unique('sm')} {self.marker} {self.words[word]} n{self.counter}"

        def tags(self, picks: list[int]) -> list[str]:
            return [self.marker, *(f"{self.marker}-{TAG_POOL[i]}" for i in sorted(set(picks)))]

        @rule(target=ids, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES), picks=st.lists(st.integers(0, 2), max_size=2),
              ns=st.booleans(), expires=st.booleans())
        def create(self, word: int, kind: str, picks: list[int], ns: bool, expires: bool) -> str:
            body = c.memory(ctx, "sm", content=self.content(word), type=kind, tags=[], namespace=f"ns:{self.marker}" if ns else None,
                            expires_at=c.now_iso(86400) if expires else None)
            body["tags"] = self.tags(picks)
            if not ns:
                body.pop("namespace")
            self.step(f"create {kind} tags={body['tags'][1:]} ns={ns} expires={expires}", "POST", "/memories", body)
            answer = c.create(ctx, body, record=False, quiet=True)
            if answer.status != 201 or not isinstance(answer.body, dict) or not isinstance(answer.body.get("id"), str):
                raise self.mismatch(f"create answered {answer.brief()}", status=201)
            self.model.put(answer.body)
            self.model.acknowledged += 1
            self.list_page(None, None, "created_at_desc", 5, 0)  # read your write: the page and total hold it
            return str(answer.body["id"])

        # every sequence starts with two memories, the first edited once (its new words must be what search
        # finds): updates, deletes and rivals have something to work on
        @initialize(target=ids, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES))
        def first_memory(self, word: int, kind: str) -> Any:  # a bundle member: hypothesis types rules' results so
            mem_id = self.create(word, kind, [0], False, False)
            self.update(mem_id, (word + 1) % 3, None, "keep", "keep")
            return mem_id

        @initialize(target=ids, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES))
        def second_memory(self, word: int, kind: str) -> Any:
            return self.create(word, kind, [1], True, False)

        @rule(mem_id=ids, word=st.integers(0, 2) | st.none(), picks=st.none() | st.lists(st.integers(0, 2), max_size=2),
              expires=st.sampled_from(["keep", "null", "set"]), ns=st.sampled_from(["keep", "null", "set"]))
        def update(self, mem_id: str, word: int | None, picks: list[int] | None, expires: str, ns: str) -> None:
            patch: dict[str, Any] = {}
            if word is not None:
                patch["content"] = self.content(word)
            if picks is not None:
                patch["tags"] = self.tags(picks)
            if expires != "keep":
                patch["expires_at"] = None if expires == "null" else c.now_iso(7200)
            if ns != "keep":
                patch["namespace"] = None if ns == "null" else f"ns2:{self.marker}"
            self.step(f"update {mem_id} {sorted(patch)} expires={expires} ns={ns}", "PUT", f"/memories/{mem_id}", patch)
            answer = c.update(ctx, mem_id, patch, record=False, quiet=True)
            if mem_id in self.model.gone:
                if answer.status != 404:
                    raise self.mismatch(f"update of a deleted memory answered {answer.status}, not 404", status=404)
                return
            if not answer.ok and ns == "null" and answer.status == 422:
                return  # errata O8: refusing namespace null is a reading; then nothing changed
            if answer.status != 200 or not isinstance(answer.body, dict):
                raise self.mismatch(f"update answered {answer.brief()}", status=200)
            expected = dict(self.model.memories[mem_id], **{k: v for k, v in patch.items()})
            self.model.put({**answer.body})
            self.model.acknowledged += 1
            diffs = _same(answer.body, expected)
            if diffs:
                raise self.mismatch(f"update of {mem_id} served {'; '.join(diffs)}", "omp.memory", **_model_fields(expected))
            if word is not None:  # read your write: the new content is what search finds now
                self.search(word, None, None)

        @rule(mem_id=consumes(ids))
        def delete(self, mem_id: str) -> None:
            self.step(f"delete {mem_id}", "DELETE", f"/memories/{mem_id}")
            answer = c.delete(ctx, mem_id, record=False, quiet=True)
            if mem_id in self.model.gone:
                if answer.status != 404:
                    raise self.mismatch(f"a second delete answered {answer.status}, not 404", status=404)
                return
            if answer.status != 204:
                raise self.mismatch(f"delete answered {answer.brief()}", status=204)
            self.model.memories.pop(mem_id, None)
            self.model.gone.add(mem_id)
            self.model.acknowledged += 1

        @rule(kind=st.none() | st.sampled_from(omp.TYPES), pick=st.none() | st.integers(0, 2),
              sort=st.sampled_from(omp.SORTS), limit=st.integers(1, 5), offset=st.integers(0, 4))
        def list_page(self, kind: str | None, pick: int | None, sort: str, limit: int, offset: int) -> None:
            tags = self.marker + (f",{self.marker}-{TAG_POOL[pick]}" if pick is not None else "")
            params = {"tags": tags, "sort": sort, "limit": str(limit), "offset": str(offset), **({"type": kind} if kind else {})}
            self.step(f"list {params}", "GET", "/memories", params=params)
            answer = c.list_(ctx, params, record=False, quiet=True)
            if answer.status != 200 or not isinstance(answer.body, dict) or not isinstance(answer.body.get("memories"), list):
                raise self.mismatch(f"list answered {answer.brief()}", status=200)
            wanted_tag = f"{self.marker}-{TAG_POOL[pick]}" if pick is not None else None
            ordered = self.model.ordered(sort)
            pool = ordered if ordered is not None else list(self.model.memories.values())
            match = [m for m in pool if (kind is None or m["type"] == kind) and (wanted_tag is None or wanted_tag in (m["tags"] or []))]
            served = [m.get("id") for m in answer.body["memories"] if isinstance(m, dict)]
            if answer.body.get("total") != len(match):
                raise self.mismatch(f"list total {answer.body.get('total')!r}, model {len(match)}", values={"total": len(match)})
            if ordered is not None and served != [m["id"] for m in match[offset:offset + limit]]:
                raise self.mismatch(f"list page {served}, model {[m['id'] for m in match[offset:offset + limit]]}",
                                    lists={"memories[].id": [m["id"] for m in match[offset:offset + limit]]})
            if ordered is None and not set(served) <= {m["id"] for m in match}:
                raise self.mismatch(f"list page holds memories outside the filters: {served}",
                                    subsets={"memories[].id": [m["id"] for m in match]})

        @rule(word=st.integers(0, 2), kind=st.none() | st.sampled_from(omp.TYPES), pick=st.none() | st.integers(0, 2))
        def search(self, word: int, kind: str | None, pick: int | None) -> None:
            query: dict[str, Any] = {"q": self.words[word], "mode": "keyword", "limit": 100}
            if kind:
                query["type"] = kind
            if pick is not None:
                query["tags"] = [f"{self.marker}-{TAG_POOL[pick]}"]
            self.step(f"search {query}", "POST", "/memories/search", query)
            answer = c.search(ctx, query, record=False, quiet=True)
            if answer.status != 200 or not isinstance(answer.body, dict) or not isinstance(answer.body.get("memories"), list):
                raise self.mismatch(f"search answered {answer.brief()}", status=200)
            wanted = {m["id"] for m in self.model.memories.values() if self.words[word] in m["content"].split()
                      and (kind is None or m["type"] == kind) and (pick is None or query["tags"][0] in (m["tags"] or []))}
            served = {m.get("id") for m in answer.body["memories"] if isinstance(m, dict)}
            if served != wanted:
                raise self.mismatch(f"search found {sorted(map(str, served))}, model {sorted(wanted)}", sets={"memories[].id": sorted(wanted)})

        @rule(mem_id=ids)
        def get(self, mem_id: str) -> None:
            self.step(f"get {mem_id}", "GET", f"/memories/{mem_id}")
            answer = c.get(ctx, mem_id, record=False, quiet=True)
            if mem_id in self.model.gone:
                if answer.status != 404:
                    raise self.mismatch(f"a deleted memory answered {answer.status} on get", status=404)
                return
            if answer.status != 200 or not isinstance(answer.body, dict):
                raise self.mismatch(f"get answered {answer.brief()}", status=200)
            diffs = _same(answer.body, self.model.memories[mem_id])
            if diffs:
                raise self.mismatch(f"get {mem_id}: {'; '.join(diffs)}", "omp.memory", **_model_fields(self.model.memories[mem_id]))

        @rule(strategy=st.sampled_from(omp.CONFLICTS), rival=st.none() | ids, bad=st.booleans(), word=st.integers(0, 2))
        def import_batch(self, strategy: str, rival: str | None, bad: bool, word: int) -> None:
            from memconform.suites.omp.checks.imports import import_with

            new = c.full_memory(ctx, "sm-imp", content=self.content(word), tags=[], created_at=self.stamp())
            new["tags"] = self.tags([])
            batch = [new]
            if rival is not None and rival not in self.model.gone:
                batch.append(dict(c.full_memory(ctx, "sm-rival", content=self.content(word), tags=[], created_at=self.stamp()),
                                  id=rival, tags=self.tags([0])))
            if bad:
                broken = c.full_memory(ctx, "sm-bad", content=self.content(word) + "z" * omp.MAX_CONTENT)
                batch.insert(len(batch) // 2, broken)
            self.step(f"import {strategy} rival={rival} bad={bad}", "POST", "/import", dict(c.export_file(batch), conflict=strategy),
                      {"conflict": strategy})
            answer = import_with(ctx, batch, strategy)
            if answer.status >= 500:
                raise self.mismatch(f"import answered {answer.brief()}", status_below=500)
            if not answer.ok and not bad:
                raise self.mismatch(f"an import of valid memories was refused: {answer.brief()}", ok=True)
            self.refresh()
            by_content = {m["content"]: m for m in self.model.memories.values()}
            if not answer.ok:  # errata O7: the whole file refused, then nothing of it is stored
                if any(mem["content"] in by_content for mem in batch):
                    raise self.mismatch(f"a refused import ({answer.status}) stored part of its batch", "omp.export",
                                        marker=self.marker, absent_contents=[m["content"] for m in batch])
                return
            self.model.acknowledged += len(batch) - bad
            for mem in batch:
                if "z" * 100 in mem["content"]:
                    if mem["content"] in by_content:
                        raise self.mismatch("an invalid memory of an import was stored", "omp.export",
                                            marker=self.marker, absent_contents=[mem["content"]])
                    continue
                is_rival = mem["id"] == rival
                stored = mem["content"] in by_content
                if is_rival and strategy == "skip" and stored:
                    raise self.mismatch("conflict=skip stored a memory whose id exists", "omp.export",
                                        marker=self.marker, absent_contents=[mem["content"]])
                if (not is_rival or strategy != "skip") and not stored:
                    raise self.mismatch(f"conflict={strategy}: an imported memory is missing", "omp.export",
                                        marker=self.marker, present_contents=[mem["content"]])
                if is_rival and strategy == "overwrite" and by_content[mem["content"]]["id"] != rival:
                    raise self.mismatch("conflict=overwrite did not keep the id", "omp.export",
                                        marker=self.marker, content_ids={mem["content"]: rival})
                if is_rival and strategy == "duplicate" and by_content[mem["content"]]["id"] == rival:
                    raise self.mismatch("conflict=duplicate reused an existing id", "omp.export",
                                        marker=self.marker, content_not_ids={mem["content"]: rival})

        def refresh(self) -> None:
            """The model after an import is what export says of this sequence's memories, checked above."""
            exported = [m for m in c.exported(ctx) if self.marker in str(m.get("content"))]
            before = dict(self.model.memories)
            self.model.memories = {}
            for doc in exported:
                self.model.put(doc)
            lost = set(before) - set(self.model.memories)
            if lost:
                self.model.tally = history_counts.counts(acknowledged=self.model.acknowledged, lost=len(lost))
                raise self.mismatch(f"an import lost memories that existed: {sorted(lost)[:3]}", "omp.export",
                                    marker=self.marker, present_ids=sorted(before))

        @invariant()
        def export_matches_model(self) -> None:
            if len(log) % 3:
                return  # every third step: the export is the costliest read
            exported = {m.get("id"): m for m in c.exported(ctx) if self.marker in str(m.get("content"))}
            model = self.model
            model.tally = history_counts.counts(
                acknowledged=model.acknowledged, lost=len(set(model.memories) - set(exported)),
                resurrected=len(model.gone & set(exported)),
                corrupted=sum(1 for i, m in model.memories.items() if i in exported and _same(exported[i], m)))
            want = {"marker": self.marker, "memories": {i: _model_fields(m) for i, m in model.memories.items()}}
            problem = export_differs(list(exported.values()), want)
            if problem:
                raise self.mismatch(problem, "omp.export", **want)

        def teardown(self) -> None:
            for mem_id in list(self.model.memories):
                c.delete(ctx, mem_id, record=False, quiet=True)

    return OmpMachine


@SUITE.check(section="§8", keyword="MUST", level="core",
           sentence="Implements all endpoints in §3.3 with correct HTTP methods and status codes")
def model_based_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of every operation compared with the model; the shrunk failing sequence is the detail."""
    log: list[str] = []
    config = model_based.budget(ctx, (3, 12), (12, 25))
    diverged = model_based.run_sequences(ctx, machine_class(ctx, log), config, ctx.state(c.OmpRun).models)
    if diverged is not None:
        yield diverged.failure("the target left the model", "every answer as the model says", steps=log[-20:])
    ctx.note(f"{config.max_examples} sequences of up to {config.stateful_step_count} steps compared with the model")
