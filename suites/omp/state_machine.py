"""Model-based stateful testing of OMP: a hypothesis RuleBasedStateMachine drives random sequences of
create, update (null on the nullable fields), delete, get, list (every filter, sort, limit, offset, and a
parameter the spec leaves open at times), search (every mode, type, tags, namespace, limit), export and
import (every strategy, with one invalid memory at times), with every key kind the target offers at
OMP-Full, and judges every answer by the one model of an OMP server (suites/omp/model/): the answer
must be in the set the model allows under the accepted readings.

Every memory of one sequence holds a sequence-unique marker (and the run id), so answers are judged
on this sequence's data alone; the sequence deletes what it made. Steps are bounded per profile
(`ci`: few, derandomized, not shrunk). Elsewhere a failing sequence is shrunk; its steps are the
failure's detail, and its requests a sequence file (`memconform replay`) and a curl script under
the report folder (memconform.core.sequence).
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, ClassVar
from urllib.parse import quote

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule
from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.suites.omp import client, model, root_causes, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING
from memconform.suites.omp.suite import claimed_levels
from memconform.targets.base import Reply

# (examples, steps per example) by profile: ci is small and derandomized
TAG_POOL = ("red", "green", "blue")


class Mismatch(model_based.Divergence):
    """The target's answer differs from the model's."""


@dataclasses.dataclass
class ExplainedDivergences:
    """The run's record (ctx.state) of the divergences a deviation another check established explains, by
    message (as model_based.Diverged keeps it, whether raised or recorded first): the target's own answers,
    asked at the divergence, showed that deviation alone produced it."""

    by_message: dict[str, str] = dataclasses.field(default_factory=dict)


def memory_differences(served: dict[str, Any], model: dict[str, Any]) -> list[str]:
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


def export_differs(exported: list[dict[str, Any]], want: dict[str, Any]) -> str | None:
    """What differs between the sequence's memories in an export and the model's expectation."""
    mine = [mem for mem in exported if want["marker"] in str(mem.get("content"))]
    ids = {mem.get("id"): mem for mem in mine}
    contents = {mem.get("content"): mem for mem in mine}
    if "memories" in want:
        if set(ids) != set(want["memories"]):
            return f"export holds {len(ids)} memories of the sequence, model {len(want['memories'])}"
        for mem_id, fields in want["memories"].items():
            diffs = memory_differences(ids[mem_id], fields)
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


class Target:
    """The target as the model sees it: one model Request per call, answered through the suite's client."""

    def __init__(self, ctx: CheckContext, keys: dict[str, Any]) -> None:
        self.ctx, self.keys = ctx, keys

    def call(self, request: model.Request) -> Reply:
        key = self.keys[request.key]
        ctx = self.ctx
        if request.op == "create":
            return client.create(ctx, request.body, key, record=False, quiet=True)
        if request.op in ("get", "delete"):
            return client.send(ctx, "GET" if request.op == "get" else "DELETE", f"/memories/{request.id}", key=key, record=False, quiet=True)
        if request.op == "update":
            return client.update(ctx, str(request.id), request.body, key, record=False, quiet=True)
        if request.op == "list":
            query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in request.params)
            return client.send(ctx, "GET", f"/memories?{query}", key=key, record=False, quiet=True)
        if request.op == "search":
            return client.search(ctx, request.body, key, record=False, quiet=True)
        if request.op == "export":
            return client.export(ctx, key, record=False, quiet=True)
        if request.op == "import":
            params = dict(request.params)
            body = request.body if ctx.option("conflict_in") != "query" else {k: v for k, v in request.body.items() if k != "conflict"}
            if ctx.option("conflict_in") == "body":
                params = {}
            return client.send(ctx, "POST", "/import", body=body, params=params or None, key=key, record=False, quiet=True)
        raise ValueError(request.op)


def keys_of(ctx: CheckContext) -> dict[str, Any]:
    """The key kinds a sequence uses: the global key, and at OMP-Full the per-tool keys and the second user's."""
    keys: dict[str, Any] = {"global": client.GLOBAL}
    if "full" not in (claimed_levels(ctx) or set()):
        return keys
    creds = client.facts(ctx).credentials
    if creds is not None:
        keys.update({f"tool:{tool}": key for tool, key in sorted(creds.tool_keys.items())[:1]})
        if creds.other_user_key:
            keys["other-user"] = creds.other_user_key
    return keys


# the key kinds the run found (keys_of): drawn through the machine itself, one class for every run
KEY_KINDS = st.runner().flatmap(lambda machine: st.sampled_from(["global", "global", *machine.keys]))


class OmpMachine(RuleBasedStateMachine):
    """Random sequences of every operation judged by the model; bound to a run by `model_based.for_run`."""

    ctx: ClassVar[CheckContext]
    keys: ClassVar[dict[str, Any]]  # key kind -> key (keys_of)
    full: ClassVar[bool]  # more than the global key: OMP-Full's namespaces and per-tool keys
    readings: ClassVar[model.Readings]
    log: ClassVar[list[str]]  # the current sequence's steps in words (the failure's detail)
    ids = Bundle("ids")

    def __init__(self) -> None:
        super().__init__()
        self.marker = f"sm{uuid.uuid4().hex[:10]}"
        self.words = [f"{self.marker}w{i}" for i in range(3)]
        self.model = model.Model(self.readings)
        self.model.acknowledged = 0  # type: ignore[attr-defined]  # history_counts reads these two
        self.model.tally = history_counts.counts()  # type: ignore[attr-defined]
        self.target = Target(self.ctx, self.keys)
        self.counter = 0
        self.steps = 0
        self.log.clear()
        sequence.begin(self.ctx)
        self.ctx.state(client.OmpRun).models.append(self.model)

    def ask(self, line: str, request: model.Request) -> Reply:
        """Send the request; an answer outside the model's set ends the sequence, naming every reading."""
        self.log.append(line)
        answer = self.target.call(request)
        if request.op == "export":
            answer = self.mine(answer)
        reason = self.model.step(request, answer)
        if reason is not None:
            message = sequence.expect(self.ctx, *self.replay_expectation(request), f"{line}: {reason}")
            if request.op == "list" and self.tags_late(request, answer):
                self.ctx.state(ExplainedDivergences).by_message[message[:1000]] = FILTERS_AFTER_PAGING
            raise Mismatch(message)
        if answer.ok and request.op in ("create", "update", "delete"):
            self.model.acknowledged += 1  # type: ignore[attr-defined]
        return answer

    def tags_late(self, request: model.Request, answer: Reply) -> bool:
        """Is this list answer, asked while the target is as the sequence left it, exactly the untagged page
        with the tags applied afterwards (root_causes.tags_filtered_late, one more request, asked only once
        another check established that deviation)? A repeated parameter is never taken for it."""
        params = dict(request.params)
        if len(params) != len(request.params):
            return False
        return root_causes.tags_filtered_late(self.ctx, params, answer, key=self.keys[request.key])

    def mine(self, answer: Reply) -> Reply:
        """An export narrowed to this sequence's memories (the model knows only those)."""
        body = answer.body
        if answer.status != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
            return answer
        narrowed = {**body, "memories": [x for x in body["memories"] if self.marker in str(x.get("content") if isinstance(x, dict) else "")]}
        return dataclasses.replace(answer, body=narrowed)

    def replay_expectation(self, request: model.Request) -> tuple[str, dict[str, Any]]:
        """What a replay re-judges at the divergence: the memory, the export, or the status."""
        where, doc = self.model.find(request.key, request.id)
        if request.op == "get" and doc is not None and where == "own":
            return "omp.memory", _model_fields(doc)
        if request.op == "export":
            return "omp.export", {"marker": self.marker, "memories": {i: _model_fields(d) for i, d in
                                                                      ((d["id"], d) for d in self.model.memories(request.key))}}
        return "omp.model", self.model.snapshot(request)

    def content(self, word: int) -> str:
        self.counter += 1
        return f"{self.ctx.unique('sm')} {self.marker} {self.words[word]} n{self.counter}"

    def tags(self, picks: list[int]) -> list[str]:
        return [self.marker, *(f"{self.marker}-{TAG_POOL[i]}" for i in sorted(set(picks)))]

    def tool_of(self, key: str) -> str:
        return key[5:] if key.startswith("tool:") else client.OWN_TOOL

    @rule(target=ids, key=KEY_KINDS, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES),
          picks=st.lists(st.integers(0, 2), max_size=2), ns=st.booleans(), expires=st.booleans())
    def create(self, key: str, word: int, kind: str, picks: list[int], ns: bool, expires: bool) -> str:
        body = client.memory(self.ctx, "sm", tool=self.tool_of(key), content=self.content(word), type=kind, tags=[],
                        namespace=f"ns:{self.marker}" if ns else None, expires_at=client.now_iso(86400) if expires else None)
        body["tags"] = self.tags(picks)
        if not ns:
            body.pop("namespace")
        answer = self.ask(f"create as {key}: {kind} tags={body['tags'][1:]} ns={ns} expires={expires}", model.Request("create", key, body=body))
        self.list_page(key, None, None, None, "created_at_desc", "5", "0")  # read your write: the page and total hold it
        return str(answer.body["id"]) if answer.status == 201 and isinstance(answer.body, dict) else "mem_" + "0" * 16

    # every sequence starts with two memories, the first edited once (its new words must be what search
    # finds): updates, deletes and rivals have something to work on
    @initialize(target=ids, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES))
    def first_memory(self, word: int, kind: str) -> Any:  # a bundle member: hypothesis types rules' results so
        mem_id = self.create("global", word, kind, [0], False, False)
        self.update(mem_id, "global", (word + 1) % 3, None, "keep", "keep")
        return mem_id

    @initialize(target=ids, word=st.integers(0, 2), kind=st.sampled_from(omp.TYPES))
    def second_memory(self, word: int, kind: str) -> Any:
        return self.create("global", word, kind, [1], True, False)

    @rule(mem_id=ids, key=KEY_KINDS, word=st.integers(0, 2) | st.none(), picks=st.none() | st.lists(st.integers(0, 2), max_size=2),
          expires=st.sampled_from(["keep", "null", "set"]), ns=st.sampled_from(["keep", "null", "set"]))
    def update(self, mem_id: str, key: str, word: int | None, picks: list[int] | None, expires: str, ns: str) -> None:
        patch: dict[str, Any] = {}
        if word is not None:
            patch["content"] = self.content(word)
        if picks is not None:
            patch["tags"] = self.tags(picks)
        if expires != "keep":
            patch["expires_at"] = None if expires == "null" else client.now_iso(7200)
        if ns != "keep":
            patch["namespace"] = None if ns == "null" else f"ns2:{self.marker}"
        answer = self.ask(f"update {mem_id} as {key}: {sorted(patch)} expires={expires} ns={ns}", model.Request("update", key, mem_id, patch))
        if word is not None and answer.status == 200:  # read your write: the new content is what search finds now
            self.search(key, word, "keyword", None, None, None, None)

    @rule(mem_id=ids, key=KEY_KINDS)
    def delete(self, mem_id: str, key: str) -> None:
        self.ask(f"delete {mem_id} as {key}", model.Request("delete", key, mem_id))

    @rule(mem_id=ids, key=KEY_KINDS)
    def get(self, mem_id: str, key: str) -> None:
        self.ask(f"get {mem_id} as {key}", model.Request("get", key, mem_id))

    @rule(key=KEY_KINDS, kind=st.none() | st.sampled_from(omp.TYPES), pick=st.none() | st.integers(0, 2),
          other=st.none() | st.sampled_from(["tool", "namespace", "tags-repeated", "type-empty", "limit-101", "limit-bad",
                                             "offset-bad", "sort-bad"]),
          sort=st.none() | st.sampled_from(omp.SORTS), limit=st.none() | st.sampled_from(["1", "2", "5", "100"]),
          offset=st.none() | st.sampled_from(["0", "1", "4"]))
    def list_page(self, key: str, kind: str | None, pick: int | None, other: str | None, sort: str | None, limit: str | None,
                  offset: str | None) -> None:
        tags = self.marker + (f",{self.marker}-{TAG_POOL[pick]}" if pick is not None else "")
        params = [("tags", tags), *((n, v) for n, v in (("type", kind), ("sort", sort), ("limit", limit), ("offset", offset)) if v)]
        params += self.odd_parameter(other, key)
        self.ask(f"list as {key}: {params}", model.Request.list(params, key))

    def odd_parameter(self, other: str | None, key: str) -> list[tuple[str, str]]:
        """One more list parameter: a filter the sequence can match, or a value the spec leaves open (O9, O30)."""
        odd = {"tool": [("tool", self.tool_of(key))], "namespace": [("namespace", f"ns:{self.marker}")] if self.full else [],
               "tags-repeated": [("tags", f"{self.marker},{self.marker}-{TAG_POOL[0]}")], "type-empty": [("type", "")],
               "limit-101": [("limit", "101")], "limit-bad": [("limit", "0")], "offset-bad": [("offset", "-1")],
               "sort-bad": [("sort", "newest")]}
        return odd.get(other or "", [])

    @rule(key=KEY_KINDS, word=st.integers(0, 2), mode=st.sampled_from([None, "keyword", "keyword", "semantic", "hybrid"]),
          kind=st.none() | st.sampled_from(omp.TYPES), pick=st.none() | st.integers(0, 2), ns=st.none() | st.booleans(),
          limit=st.none() | st.sampled_from([1, 3, 100]))
    def search(self, key: str, word: int, mode: str | None, kind: str | None, pick: int | None, ns: bool | None,
               limit: int | None) -> None:
        query: dict[str, Any] = {"q": self.words[word], **({"mode": mode} if mode else {})}
        if limit is not None:
            query["limit"] = limit
        if kind:
            query["type"] = kind
        if pick is not None:
            query["tags"] = [f"{self.marker}-{TAG_POOL[pick]}"]
        if mode in ("semantic", "hybrid"):  # similarity may find any memory: this sequence's tag scopes it
            query["tags"] = [self.marker, *query.get("tags", [])]
        if ns is not None and self.full:
            query["namespace"] = f"ns:{self.marker}" if ns else f"ns2:{self.marker}"
        self.ask(f"search as {key}: {query}", model.Request("search", key, body=query))

    @rule(strategy=st.sampled_from(omp.CONFLICTS), rival=st.none() | ids, bad=st.booleans(), word=st.integers(0, 2))
    def import_batch(self, strategy: str, rival: str | None, bad: bool, word: int) -> None:
        new = client.full_memory(self.ctx, "sm-imp", content=self.content(word), tags=[], created_at=self.stamp())
        new["tags"] = self.tags([])
        batch = [new]
        if rival is not None:
            batch.append(dict(client.full_memory(self.ctx, "sm-rival", content=self.content(word), tags=[], created_at=self.stamp()),
                              id=rival, tags=self.tags([0])))
        if bad:
            broken = client.full_memory(self.ctx, "sm-bad", content=self.content(word) + "z" * omp.MAX_CONTENT)
            batch.insert(len(batch) // 2, broken)
        doc = dict(client.export_file(batch), conflict=strategy)
        self.ask(f"import {strategy} rival={rival} bad={bad}", model.Request("import", "global", body=doc, params=(("conflict", strategy),)))
        self.export("global")  # the import read back: the model resolves what it stored

    def stamp(self) -> str:
        """A distinct created_at for each imported memory, so order stays observable."""
        self.counter += 1
        return f"2025-06-01T{self.counter // 3600 % 24:02d}:{self.counter // 60 % 60:02d}:{self.counter % 60:02d}Z"

    @rule(key=KEY_KINDS)
    def export(self, key: str) -> None:
        self.ask(f"export as {key}", model.Request("export", key))

    @invariant()
    def export_matches_model(self) -> None:
        self.steps += 1
        if self.steps % 3:
            return  # every third step: the export is the costliest read
        self.tally()
        self.export("global")

    def tally(self) -> None:
        """The Jepsen-style counts of this sequence's last export against the model."""
        answer = self.mine(client.export(self.ctx, record=False, quiet=True))
        served = {x.get("id"): x for x in (answer.body or {}).get("memories", [])} if isinstance(answer.body, dict) else {}
        held = {d["id"]: d for d in self.model.memories()}
        self.model.tally = history_counts.counts(  # type: ignore[attr-defined]
            acknowledged=self.model.acknowledged, lost=len(set(held) - set(served)),  # type: ignore[attr-defined]
            resurrected=len(self.model.gone & set(served)),
            corrupted=sum(1 for i, d in held.items() if i in served and model.fields_differ(served[i], d, stored=True)))

    def teardown(self) -> None:
        for user_key in self.keys:
            for doc in self.model.memories(user_key):
                client.delete(self.ctx, doc["id"], self.keys[user_key], record=False, quiet=True)


