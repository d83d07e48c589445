"""Model-based stateful testing of OMP (issue 13): a hypothesis RuleBasedStateMachine drives random
sequences of create, update (null on the nullable fields), delete, get, list (filters, sort, limit,
offset), search, export and import (every strategy, with one invalid memory at times) against the
target, and compares every answer with an in-harness model of what the spec says the state must be.

Every memory of one sequence holds a sequence-unique marker (and the run id), so answers are judged
on this sequence's data alone; the sequence deletes what it made. Steps are bounded per profile
(`ci`: few, derandomized, not shrunk). Elsewhere a failing sequence is shrunk; its steps are the
failure's detail and its requests a curl script under the report folder.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from memconform.core.model import Failure
from memconform.core.registry import check
from memconform.formats import omp

from . import client as c
from . import rules

omp_check = partial(check, suite=omp.SUITE, spec=omp.SPEC)

# (examples, steps per example) by profile: ci is small and derandomized
BUDGET = {"ci": (3, 12), "quick": (3, 10)}
DEFAULT_BUDGET = (12, 25)
TAG_POOL = ("red", "green", "blue")


class Mismatch(AssertionError):
    """The target's answer differs from the model's."""


class Model:
    """What the spec says this sequence's memories are: id -> fields, with the target's own timestamps."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[str, Any]] = {}
        self.gone: set[str] = set()

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


def curl_line(ctx: Any, method: str, path: str, body: Any, params: dict[str, str] | None) -> str:
    """One replayable request; the key is read from $OMP_API_KEY, never written."""
    base = ctx.target.base_url.rstrip("/")
    url = base + ("" if base.endswith("/v1") else "/v1") + path + ("?" + urlencode(params) if params else "")
    data = f" -H 'Content-Type: application/json' --data {shlex.quote(json.dumps(body, ensure_ascii=False))}" if body is not None else ""
    return f"curl -sS -X {method} -H \"Authorization: Bearer $OMP_API_KEY\" {shlex.quote(url)}{data}; echo"


def save_script(ctx: Any, curls: list[str]) -> str | None:
    """The shrunk failing sequence as a shell script under the report folder (replay: OMP_API_KEY=... sh FILE)."""
    if ctx.report_dir is None:
        return None
    path = Path(ctx.report_dir) / f"omp-model-sequence-{ctx.run_id}.sh"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n# the shrunk sequence that left the target different from the model\n" + "\n".join(curls) + "\n",
                    encoding="utf-8")
    return str(path)


def machine_class(ctx: Any, log: list[str], curls: list[str]) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

    class OmpMachine(RuleBasedStateMachine):
        ids = Bundle("ids")

        def __init__(self) -> None:
            super().__init__()
            self.marker = f"sm{uuid.uuid4().hex[:10]}"
            self.words = [f"{self.marker}w{i}" for i in range(3)]
            self.model = Model()
            self.counter = 0
            log.clear()
            curls.clear()

        def step(self, line: str, method: str = "", path: str = "", body: Any = None, params: dict[str, str] | None = None) -> None:
            log.append(line)
            if method:
                curls.append(curl_line(ctx, method, path, body, params))

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
                raise Mismatch(f"create answered {answer.brief()}")
            self.model.put(answer.body)
            self.list_page(None, None, "created_at_desc", 5, 0)  # read your write: the page and total hold it
            return str(answer.body["id"])

        @rule(mem_id=ids, word=st.none() | st.integers(0, 2), picks=st.none() | st.lists(st.integers(0, 2), max_size=2),
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
                    raise Mismatch(f"update of a deleted memory answered {answer.status}, not 404")
                return
            if not answer.ok and ns == "null" and answer.status == 422:
                return  # errata O8: refusing namespace null is a reading; then nothing changed
            if answer.status != 200 or not isinstance(answer.body, dict):
                raise Mismatch(f"update answered {answer.brief()}")
            expected = dict(self.model.memories[mem_id], **{k: v for k, v in patch.items()})
            self.model.put({**answer.body})
            diffs = _same(answer.body, expected)
            if diffs:
                raise Mismatch(f"update of {mem_id} served {'; '.join(diffs)}")
            if word is not None:  # read your write: the new content is what search finds now
                self.search(word, None, None)

        @rule(mem_id=consumes(ids))
        def delete(self, mem_id: str) -> None:
            self.step(f"delete {mem_id}", "DELETE", f"/memories/{mem_id}")
            answer = c.delete(ctx, mem_id, record=False, quiet=True)
            if mem_id in self.model.gone:
                if answer.status != 404:
                    raise Mismatch(f"a second delete answered {answer.status}, not 404")
                return
            if answer.status != 204:
                raise Mismatch(f"delete answered {answer.brief()}")
            self.model.memories.pop(mem_id, None)
            self.model.gone.add(mem_id)

        @rule(kind=st.none() | st.sampled_from(omp.TYPES), pick=st.none() | st.integers(0, 2),
              sort=st.sampled_from(omp.SORTS), limit=st.integers(1, 5), offset=st.integers(0, 4))
        def list_page(self, kind: str | None, pick: int | None, sort: str, limit: int, offset: int) -> None:
            tags = self.marker + (f",{self.marker}-{TAG_POOL[pick]}" if pick is not None else "")
            params = {"tags": tags, "sort": sort, "limit": str(limit), "offset": str(offset), **({"type": kind} if kind else {})}
            self.step(f"list {params}", "GET", "/memories", params=params)
            answer = c.list_(ctx, params, record=False, quiet=True)
            if answer.status != 200 or not isinstance(answer.body, dict) or not isinstance(answer.body.get("memories"), list):
                raise Mismatch(f"list answered {answer.brief()}")
            wanted_tag = f"{self.marker}-{TAG_POOL[pick]}" if pick is not None else None
            ordered = self.model.ordered(sort)
            pool = ordered if ordered is not None else list(self.model.memories.values())
            match = [m for m in pool if (kind is None or m["type"] == kind) and (wanted_tag is None or wanted_tag in (m["tags"] or []))]
            served = [m.get("id") for m in answer.body["memories"] if isinstance(m, dict)]
            if answer.body.get("total") != len(match):
                raise Mismatch(f"list total {answer.body.get('total')!r}, model {len(match)}")
            if ordered is not None and served != [m["id"] for m in match[offset:offset + limit]]:
                raise Mismatch(f"list page {served}, model {[m['id'] for m in match[offset:offset + limit]]}")
            if ordered is None and not set(served) <= {m["id"] for m in match}:
                raise Mismatch(f"list page holds memories outside the filters: {served}")

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
                raise Mismatch(f"search answered {answer.brief()}")
            wanted = {m["id"] for m in self.model.memories.values() if self.words[word] in m["content"].split()
                      and (kind is None or m["type"] == kind) and (pick is None or query["tags"][0] in (m["tags"] or []))}
            served = {m.get("id") for m in answer.body["memories"] if isinstance(m, dict)}
            if served != wanted:
                raise Mismatch(f"search found {sorted(map(str, served))}, model {sorted(wanted)}")

        @rule(mem_id=ids)
        def get(self, mem_id: str) -> None:
            self.step(f"get {mem_id}", "GET", f"/memories/{mem_id}")
            answer = c.get(ctx, mem_id, record=False, quiet=True)
            if mem_id in self.model.gone:
                if answer.status != 404:
                    raise Mismatch(f"a deleted memory answered {answer.status} on get")
                return
            if answer.status != 200 or not isinstance(answer.body, dict):
                raise Mismatch(f"get answered {answer.brief()}")
            diffs = _same(answer.body, self.model.memories[mem_id])
            if diffs:
                raise Mismatch(f"get {mem_id}: {'; '.join(diffs)}")

        @rule(strategy=st.sampled_from(omp.CONFLICTS), rival=st.none() | ids, bad=st.booleans(), word=st.integers(0, 2))
        def import_batch(self, strategy: str, rival: str | None, bad: bool, word: int) -> None:
            from .import_checks import import_with

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
                raise Mismatch(f"import answered {answer.brief()}")
            if not answer.ok and not bad:
                raise Mismatch(f"an import of valid memories was refused: {answer.brief()}")
            self.refresh()
            by_content = {m["content"]: m for m in self.model.memories.values()}
            if not answer.ok:  # errata O7: the whole file refused, then nothing of it is stored
                if any(mem["content"] in by_content for mem in batch):
                    raise Mismatch(f"a refused import ({answer.status}) stored part of its batch")
                return
            for mem in batch:
                if "z" * 100 in mem["content"]:
                    if mem["content"] in by_content:
                        raise Mismatch("an invalid memory of an import was stored")
                    continue
                is_rival = mem["id"] == rival
                stored = mem["content"] in by_content
                if is_rival and strategy == "skip" and stored:
                    raise Mismatch("conflict=skip stored a memory whose id exists")
                if (not is_rival or strategy != "skip") and not stored:
                    raise Mismatch(f"conflict={strategy}: an imported memory is missing")
                if is_rival and strategy == "overwrite" and by_content[mem["content"]]["id"] != rival:
                    raise Mismatch("conflict=overwrite did not keep the id")
                if is_rival and strategy == "duplicate" and by_content[mem["content"]]["id"] == rival:
                    raise Mismatch("conflict=duplicate reused an existing id")

        def refresh(self) -> None:
            """The model after an import is what export says of this sequence's memories, checked above."""
            exported = [m for m in c.exported(ctx) if self.marker in str(m.get("content"))]
            before = dict(self.model.memories)
            self.model.memories = {}
            for doc in exported:
                self.model.put(doc)
            lost = set(before) - set(self.model.memories)
            if lost:
                raise Mismatch(f"an import lost memories that existed: {sorted(lost)[:3]}")

        @invariant()
        def export_matches_model(self) -> None:
            if len(log) % 3:
                return  # every third step: the export is the costliest read
            exported = {m.get("id"): m for m in c.exported(ctx) if self.marker in str(m.get("content"))}
            if set(exported) != set(self.model.memories):
                raise Mismatch(f"export holds {len(exported)} memories of the sequence, model {len(self.model.memories)}")
            for mem_id, model in self.model.memories.items():
                diffs = _same(exported[mem_id], model)
                if diffs:
                    raise Mismatch(f"export {mem_id}: {'; '.join(diffs)}")

        def teardown(self) -> None:
            for mem_id in list(self.model.memories):
                c.delete(ctx, mem_id, record=False, quiet=True)

    return OmpMachine


@omp_check(section="§8", keyword="MUST", level="core",
           sentence="Implements all endpoints in §3.3 with correct HTTP methods and status codes")
def model_based_sequences(ctx: Any) -> Iterator[Failure]:
    """Random sequences of every operation compared with the model; the shrunk failing sequence is the detail."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    examples, steps = BUDGET.get(ctx.profile.name, DEFAULT_BUDGET)
    log: list[str] = []
    curls: list[str] = []
    machine = machine_class(ctx, log, curls)
    ci = ctx.profile.name == "ci"
    # ci does not shrink: against a live server each shrink step replays a sequence, which can take minutes
    phases = (Phase.explicit, Phase.generate) if ci else (Phase.explicit, Phase.generate, Phase.shrink)
    config = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None, phases=phases,
                      derandomize=ci, suppress_health_check=list(HealthCheck), print_blob=False)
    try:
        run_state_machine_as_test(machine, settings=config)
    except Mismatch as exc:
        script = save_script(ctx, curls)
        yield Failure("a sequence of operations left the target different from the model", str(exc)[:400],
                      "every answer as the model says", "$",
                      "steps: " + " | ".join(log[-20:]) + (f"; replay: OMP_API_KEY=... sh {script}" if script else ""))
    ctx.note(f"{examples} sequences of up to {steps} steps compared with the model")
