"""The model: predictions the example checks read, judging an answer, and the answers to create, get, update, delete and list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memconform.suites.omp import format as omp

from .base import Check, Readings, Reason, Request, body_of, brief, instant, principal, status_of
from .pages import ListReading, in_order, join_names, keyword_hits, list_readings, ordered, sort_key
from .search import SearchAnswers
from .shapes import INVALID, OPEN, error_is, fields_differ, memory_is, memory_shape, refused
from .state import ImportEffect
from .transfer import TransferAnswers


@dataclass
class Model(SearchAnswers, TransferAnswers):
    """The state of an OMP server as the spec says it must be, and the answers it allows."""

    # -- predictions the example checks read --------------------------------------------------

    def list_page(self, request: Request) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Under the first reading that serves an exact page: every match in sort order, and the page."""
        for reading in list_readings(request.params, self.readings):
            if reading.filters is not None and reading.exact:
                matches = ordered([d for d in self.memories(request.key) if reading.filters.fit(d)], reading.sort)
                return matches, matches[reading.offset:reading.offset + reading.limit]
        raise ValueError(f"no reading of {request.params} serves an exact page")

    def search_sets(self, request: Request) -> dict[str, set[str]]:
        """A keyword search: {readings: the ids every match holds} (before the limit), per accepted reading."""
        body = request.body if isinstance(request.body, dict) else {}
        docs = self.memories(request.key)
        out: dict[str, set[str]] = {}
        for tags_name, filters in self._search_filters(body).items():
            for match_name, hits in keyword_hits(str(body.get("q", "")), [d for d in docs if filters.fit(d)], self.readings).items():
                out[join_names(tags_name, match_name)] = {d["id"] for d in hits}
        return out

    # -- judging --------------------------------------------------------------------------------

    def expect(self, request: Request) -> dict[str, Check]:
        """The answers acceptable for the request in this state: {reading: what it predicts}."""
        handler = getattr(self, f"_expect_{request.op}", None)
        if handler is None:
            raise ValueError(f"the OMP model has no operation {request.op!r}")
        return handler(request)  # type: ignore[no-any-return]

    def expect_read_back(self, request: Request) -> dict[str, Check]:
        """A write and the GET of its id that follows: {reading: a check of the pair (write answer, read
        answer)}; the pair fits a reading when the write fits it and the read fits the state it leaves."""
        out: dict[str, Check] = {}
        for name, check in self.expect(request).items():
            out[name] = self._pair_check(request, check)
        return out

    def _pair_check(self, request: Request, check: Check) -> Check:
        def pair(answer: Any) -> str | None:
            write, read = answer
            problem = check(write)
            if problem is not None:
                return f"the {request.op}: {problem}"
            after = self.reread(self.readings)
            after.apply(request, write)
            problems = [want(read) for want in after.expect(Request("get", request.key, request.id)).values()]
            return None if None in problems else f"read back: {problems[0]}"
        return pair

    def reread(self, readings: Readings) -> Model:
        """A copy of the state under other readings."""
        copy = Model(readings, self.complete)
        copy.users = {user: dict(docs) for user, docs in self.users.items()}
        copy.gone = set(self.gone)
        return copy

    def fits(self, request: Request, answer: Any) -> list[str]:
        """The readings whose prediction the answer matched (for ctx.observe)."""
        return [name for name, check in self.expect(request).items() if check(answer) is None]

    def accepts(self, request: Request, answer: Any) -> Reason | None:
        """None when the answer is in the model's set, else what each reading expected."""
        problems: dict[str, str] = {}
        for name, check in self.expect(request).items():
            problem = check(answer)
            if problem is None:
                return None
            problems[name] = problem
        first = next(iter(problems.values()), "no reading allows any answer")
        return Reason(first, brief(answer), problems)

    def step(self, request: Request, answer: Any) -> Reason | None:
        reason = self.accepts(request, answer)
        if reason is None:
            self.apply(request, answer)
        return reason

    def apply(self, request: Request, answer: Any) -> None:
        """Advance the state from an answer the model accepted."""
        status, body = status_of(answer), body_of(answer)
        who = principal(request.key)
        docs = self.users.setdefault(who.user, {})
        if request.op == "create" and status == 201 and isinstance(body, dict):
            docs[body["id"]] = body
            self.gone.discard(body["id"])
            self.audit.append((request.key, "create", body["id"]))
        elif request.op == "update" and status == 200 and isinstance(body, dict) and request.id in docs:
            docs[request.id] = body
            self.audit.append((request.key, "update", request.id))
        elif request.op == "delete" and status == 204 and request.id in docs:
            docs.pop(request.id)
            self.gone.add(request.id)
            self.audit.append((request.key, "delete", request.id))
        elif request.op == "import" and 200 <= status < 300:
            self.pending = self._import_effects(request)
        elif request.op == "import" and 400 <= status < 500:  # errata O7: the whole file refused, nothing stored
            self.pending = [ImportEffect(e.content, None, "not") for e in self._import_effects(request)]
        elif request.op == "export" and status == 200 and self.pending is not None and isinstance(body, dict):
            self._resolve_import(request.key, body.get("memories") or [])

    # -- create, get, update, delete ---------------------------------------------------------

    def _expect_create(self, request: Request) -> dict[str, Check]:
        body, who = request.body, principal(request.key)
        validity = self.validator.memory(body, partial=False)
        refuse = {"the memory refused with 422": error_is(self.readings, 422, "validation_error")}
        if validity.kind == INVALID:
            return {f"invalid ({'; '.join(validity.why)}): 422": refuse["the memory refused with 422"]}
        if who.tool is not None and (body.get("source") or {}).get("tool") != who.tool:
            return {"a create for another tool: 403": error_is(self.readings, 403, "forbidden")}
        made = {"created: 201 with the memory as written": memory_is(self._written(body), status=201)}
        if validity.kind == OPEN:
            made[f"open ({'; '.join(validity.why)}): refused with a 4xx"] = refused(self.readings)
        return made

    @staticmethod
    def _written(body: dict[str, Any]) -> dict[str, Any]:
        want = {k: body.get(k) for k in ("content", "type", "namespace", "metadata", "expires_at", "source")}
        want["tags"] = body.get("tags") or []
        if isinstance(want["source"], dict):
            want["source"] = {k: v for k, v in want["source"].items() if v is not None}
        return want

    def _not_visible(self, where: str) -> dict[str, Check]:
        if where == "other-tool":
            return {f"another tool's memory: {s}": error_is(self.readings, s, "forbidden" if s == 403 else "memory_not_found")
                    for s in (403, 404) if self.readings.allows("tool_key_status", str(s))}
        if where == "other-user":
            return {f"another user's memory: {s}": error_is(self.readings, s, "forbidden" if s == 403 else "memory_not_found")
                    for s in (404, 403) if self.readings.allows("cross_user_status", str(s))}
        if not self.complete and where == "none":
            return {"not known to the model: 404": error_is(self.readings, 404, "memory_not_found"), "any memory": any_memory}
        return {"no such memory: 404 memory_not_found": error_is(self.readings, 404, "memory_not_found")}

    def _expect_get(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own" or doc is None:
            return self._not_visible(where)
        return {"200 with the memory as stored": memory_is(doc, status=200, stored=True)}

    def _expect_delete(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own":
            return self._not_visible(where)
        return {"deleted: 204": lambda a: None if status_of(a) == 204 else f"answered {brief(a)}, not 204"}

    def _expect_update(self, request: Request) -> dict[str, Check]:
        where, doc = self.find(request.key, request.id)
        if where != "own" or doc is None:
            return self._not_visible(where)
        patch, who = request.body, principal(request.key)
        validity = self.validator.memory(patch, partial=True)
        if validity.kind == INVALID:
            return {f"invalid ({'; '.join(validity.why)}): 422": error_is(self.readings, 422, "validation_error")}
        if who.tool is not None and isinstance(patch.get("source"), dict) and patch["source"].get("tool", who.tool) != who.tool:
            return {"an update to another tool: 403": error_is(self.readings, 403, "forbidden")}
        out: dict[str, Check] = {}
        namespace_null = "namespace" in patch and patch["namespace"] is None
        for name, merged in self._updated(doc, patch).items():
            out[join_names(NAMESPACE_NULL_CLEARS, name.removeprefix("updated: only the given fields changed"))
                if namespace_null else name] = updated_is(doc, merged)
        if namespace_null:  # errata O8: cleared, or refused with 422 and nothing changed
            if self.readings.namespace_null == "refused":
                out = {}
            if self.readings.namespace_null in ("either", "refused"):
                out[NAMESPACE_NULL_REFUSED] = error_is(self.readings, 422, "validation_error")
        if "id" in patch or "created_at" in patch:  # errata O8: never applied; ignored, or the body refused with 422
            out["id or created_at in the body: refused with 422"] = error_is(self.readings, 422, "validation_error")
        if validity.kind == OPEN:
            out[f"open ({'; '.join(validity.why)}): refused with a 4xx"] = refused(self.readings)
        return out

    @staticmethod
    def _updated(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The memory after a partial update (errata O8): given fields replace, the rest stay; id and created_at never."""
        fields = {k: v for k, v in patch.items() if k in ("content", "type", "tags", "namespace", "metadata", "expires_at")}
        merged = {**doc, **fields}
        if "metadata" in fields and fields["metadata"] is None:
            merged["metadata"] = {}
        if not isinstance(patch.get("source"), dict):
            return {"updated: only the given fields changed": merged}
        source = {k: v for k, v in patch["source"].items() if v is not None}
        if {"tool", "timestamp"} <= set(source):
            return {"updated: only the given fields changed": {**merged, "source": source}}
        return {"updated: a partial source merged": {**merged, "source": {**(doc.get("source") or {}), **source}}}

    # -- list -----------------------------------------------------------------------------------

    def _expect_list(self, request: Request) -> dict[str, Check]:
        docs = self.memories(request.key)
        out: dict[str, Check] = {}
        for reading in list_readings(request.params, self.readings):
            name = ", ".join(reading.names) or "the page of the matching memories"
            out[name] = refused(self.readings) if reading.filters is None else self._page_check(reading, docs)
        return out

    def _page_check(self, reading: ListReading, docs: list[dict[str, Any]]) -> Check:
        assert reading.filters is not None
        filters = reading.filters
        matches = ordered([d for d in docs if filters.fit(d)], reading.sort)

        def check(answer: Any) -> str | None:
            body = body_of(answer)
            if status_of(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
                return f"not a 200 list page ({brief(answer)})"
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if len(served) > (reading.limit if reading.exact else omp.MAX_LIMIT):
                return f"more memories than the limit ({len(served)} > {reading.limit if reading.exact else omp.MAX_LIMIT})"
            if reading.exact:
                for name, applied in (("limit", reading.limit), ("offset", reading.offset)):
                    if body.get(name) not in (reading.echo_limit if name == "limit" and reading.echo_limit else (applied,)):
                        return f"{name} does not echo what was applied ({body.get(name, '<absent>')!r}, not {applied})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            if not in_order(served, reading.sort):
                return f"the page is not in {reading.sort} order"
            return self._page_matches(reading, matches, served, body)
        return check

    def _page_matches(self, reading: ListReading, matches: list[dict[str, Any]], served: list[dict[str, Any]],
                      body: dict[str, Any]) -> str | None:
        known = {m["id"]: m for m in matches}
        ids = [m.get("id") for m in served]
        if len(set(ids)) != len(ids):
            return "a memory is served twice on one page"
        for mem in served:
            if mem.get("id") in known and fields_differ(mem, known[mem["id"]], stored=True):
                return f"a memory is not served as stored: {fields_differ(mem, known[mem['id']], stored=True)}"
        if not self.complete:
            total = body.get("total")
            if reading.exact and isinstance(total, int) and total < len(matches):
                return f"total does not count every match ({total} < {len(matches)} known)"
            return None
        if not set(ids) <= set(known):
            return f"not the page of the matching memories (unknown memories {sorted(set(map(str, ids)) - set(known))[:3]})"
        if not reading.exact:
            return None
        if body.get("total") != len(matches):
            return f"total does not count every match ({body.get('total', '<absent>')!r}, not {len(matches)})"
        wanted = matches[reading.offset:reading.offset + reading.limit]
        if any(sort_key(m, reading.sort) is None for m in matches):  # stamps unknown: the page's size
            return None if len(served) == len(wanted) else f"not the page of the matching memories ({len(served)} served, {len(wanted)} expected)"
        if [sort_key(m, reading.sort) for m in served] != [sort_key(m, reading.sort) for m in wanted]:
            return (f"not the page of the matching memories ({len(served)} served {ids[:5]}, "
                    f"expected {[m['id'] for m in wanted][:5]} of {len(matches)})")
        return None



NAMESPACE_NULL_CLEARS, NAMESPACE_NULL_REFUSED = "namespace null clears it", "namespace null refused, nothing changed"


def any_memory(answer: Any) -> str | None:
    return None if status_of(answer) == 200 and memory_shape(body_of(answer)) is None else f"answered {brief(answer)}"


def updated_is(before: dict[str, Any], want: dict[str, Any]) -> Check:
    """200 with the merged memory; id and created_at kept; updated_at moved forward (errata O6, O8)."""
    def check(answer: Any) -> str | None:
        if status_of(answer) != 200:
            return f"answered {brief(answer)}, not 200"
        body = body_of(answer)
        problem = memory_shape(body) or fields_differ(body, want)
        if problem:
            return problem
        if body.get("id") != before.get("id"):
            return f"the id changed to {body.get('id')!r}"
        if instant(body.get("created_at")) != instant(before.get("created_at")):
            return f"created_at changed to {body.get('created_at')!r}"
        old, new = instant(before.get("updated_at")), instant(body.get("updated_at"))
        whole = "." not in str(before.get("updated_at")) and "." not in str(body.get("updated_at"))
        if old is not None and new is not None and (new < old or (new == old and not whole)):
            return f"updated_at did not move forward ({body.get('updated_at')!r} after {before.get('updated_at')!r})"
        return None
    return check
