"""The model's answers to a search (§3.3 `POST /v1/search`): modes, filters, limits, totals."""

from __future__ import annotations

from typing import Any

from memconform.suites.omp import format as omp

from .base import Check, Request, body_of, brief, words
from .pages import (
    Filters,
    comma_tags,
    join_names,
    keyword_hits,
    search_invalid,
    search_odd,
    search_page_shape,
)
from .shapes import error_is, fields_differ, refused
from .state import ModelState


class SearchAnswers(ModelState):
    """The answers a search may get in the state held."""

    # -- search ---------------------------------------------------------------------------------

    def _expect_search(self, request: Request) -> dict[str, Check]:
        body = request.body
        if not isinstance(body, dict):
            return {"not an object: 4xx": refused(self.readings)}
        invalid = search_invalid(body)
        if invalid:
            return {f"{invalid}: 422": error_is(self.readings, 422, "validation_error")}
        out: dict[str, Check] = {}
        nulls = [name for name in ("type", "namespace") if name in body and body[name] is None]
        if nulls and self.readings.null_optional != "absent":  # errata O37: read as no filter, or refused
            out[f"{' and '.join(nulls)} null: refused with 422"] = error_is(self.readings, 422, "validation_error")
            if self.readings.null_optional == "refuse":
                return out
        odd = search_odd(body)
        if odd:
            out[f"{odd}: refused with a 4xx"] = refused(self.readings)
            if self.readings.bad_params == "reject":
                return out
        docs = self.memories(request.key)
        mode = body.get("mode", "keyword")
        q = body.get("q")
        for tags_name, filters in self._search_filters(body).items():
            matched = [d for d in docs if filters.fit(d)]
            for limit_name, limit in self._search_limits(body).items():
                if odd or q == "" or not isinstance(q, str) or mode not in (*omp.SEARCH_MODES, None):
                    out[join_names(tags_name, limit_name, "a page of the filtered memories")] = self._loose_search(
                        matched, filters, limit, mode)
                    continue
                if mode in ("semantic", "hybrid"):
                    out[join_names(tags_name, limit_name, f"{mode} served by similarity")] = self._similar_search(
                        matched, filters, limit, mode, q)
                    if self.readings.semantic_required:
                        continue
                for match_name, hits in keyword_hits(q, matched, self.readings).items():
                    prefix = f"{mode} answered by a keyword search" if mode in ("semantic", "hybrid") else ""
                    out[join_names(tags_name, limit_name, prefix, match_name)] = self._keyword_check(hits, filters, limit)
        out.update(self._table_refusals(body))
        return out

    def _table_refusals(self, body: dict[str, Any]) -> dict[str, Check]:
        """The refusals OMP's table of readings allows for this search (suites/omp/readings.py: a semantic or
        hybrid search at OMP-Core, O13; a q without word characters, O34), as the fuzzer reads them."""
        from memconform.suites.omp.readings import BASE_TABLE, SEARCH, Asked

        asked = Asked(*SEARCH, body=body)
        out: dict[str, Check] = {}
        for row in BASE_TABLE.of("O13", "O34"):
            if "model" in row.checks and row.meets(asked) and row.accepted(self.readings):
                out[row.name] = self._refusal_check(row, asked)
        return out

    def _refusal_check(self, row: Any, asked: Any) -> Check:
        def check(answer: Any) -> str | None:
            problem = refused(self.readings)(answer)
            if problem is None and not row.predicts(asked, answer):
                problem = f"the refusal names another field ({brief(answer)})"
            return problem
        return check

    def _search_filters(self, body: dict[str, Any]) -> dict[str, Filters]:
        tags = body.get("tags")
        if isinstance(tags, str):
            tags = list(comma_tags(tags))
        kind = body.get("type") if body.get("type") in omp.TYPES else None
        namespace = body.get("namespace")
        if not tags:
            return {"": Filters(type=kind, namespace=namespace)}
        out = {}
        if self.readings.allows("search_tags_match", "all"):
            out["search tags: all"] = Filters(type=kind, namespace=namespace, tags=tuple(tags))
        if self.readings.allows("search_tags_match", "any") and len(tags) > 1:
            out["search tags: any"] = Filters(type=kind, namespace=namespace, tags=tuple(tags), tags_any=True)
        return out

    def _search_limits(self, body: dict[str, Any]) -> dict[str, int]:
        limit = body.get("limit")
        if limit is None:
            return {f"search default limit {n}": n for n in (omp.DEFAULT_LIMIT, 10) if self.readings.allows("search_default_limit", str(n))}
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        if isinstance(limit, int) and 1 <= limit <= omp.MAX_LIMIT:
            return {"": limit}
        return {"a sane limit": omp.MAX_LIMIT}

    def _keyword_check(self, hits: list[dict[str, Any]], filters: Filters, limit: int) -> Check:
        wanted = {d["id"]: d for d in hits}

        def check(answer: Any) -> str | None:
            problem = search_page_shape(answer)
            if problem:
                return problem
            body = body_of(answer)
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if body.get("mode_used") != "keyword":
                return f"mode_used {body.get('mode_used', '<absent>')!r} for a keyword search"
            if len(served) > limit:
                return f"more memories than the limit ({len(served)} > {limit})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            ids = [m.get("id") for m in served]
            if len(set(ids)) != len(ids):
                return "a memory is served twice"
            if self.complete and not set(ids) <= set(wanted):
                return f"keyword search served memories without the query words ({sorted(set(map(str, ids)) - set(wanted))[:3]})"
            for mem in served:
                if mem.get("id") in wanted and fields_differ(mem, wanted[mem["id"]], stored=True):
                    return f"a memory is not served as stored: {fields_differ(mem, wanted[mem['id']], stored=True)}"
            if self.complete and len(served) != min(limit, len(wanted)):
                return f"not every match up to the limit ({len(served)} served, {min(limit, len(wanted))} expected)"
            if not self.complete and len(served) < min(limit, len(wanted)):
                return f"not every match up to the limit ({len(served)} served, at least {min(limit, len(wanted))} expected)"
            return self._total(body, len(wanted), len(served))
        return check

    def _total(self, body: dict[str, Any], matches: int, page: int) -> str | None:
        total = body.get("total")
        if not isinstance(total, int) or isinstance(total, bool):
            return f"total {total!r} is not an integer"
        allowed = {"search total: matches": matches, "search total: page": page}
        fits = [n for n, v in allowed.items() if self.readings.allows("search_total", n.split(": ")[1])
                and (total == v if self.complete or n.endswith("page") else total >= v)]
        return None if fits else f"total {total} is neither the matches ({matches}) nor the page ({page})"

    def _similar_search(self, matched: list[dict[str, Any]], filters: Filters, limit: int, mode: str, q: str) -> Check:
        """A semantic or hybrid search served as such (errata O13): a page of the filtered memories whose
        `mode_used` names a similarity mode; when the model holds everything the filters reach and every
        memory sharing a word of q fits in the limit, each memory sharing most of q's words (at least two)
        is served, which only similarity finds; at OMP-Search a semantic page ranks a memory sharing no
        word of q below such a similar one."""
        loose = self._loose_search(matched, filters, limit, mode)
        wanted = set(words(q))

        def shared(doc: dict[str, Any]) -> int:
            return len(wanted & set(words(str(doc.get("content")))))

        similar = {d["id"]: shared(d) for d in matched if shared(d) >= 2 and 2 * shared(d) > len(wanted)}
        reachable = sum(1 for d in matched if shared(d)) <= limit and not any("embedding" in d for d in matched)

        def check(answer: Any) -> str | None:
            problem = loose(answer)
            if problem:
                return problem
            body = body_of(answer)
            used = body.get("mode_used")
            if used not in ("semantic", "hybrid"):
                return f"mode_used {used!r} is not a similarity mode (a keyword answer is judged as keyword search)"
            ids = [m.get("id") for m in body["memories"] if isinstance(m, dict)]
            missing = [i for i in similar if i not in ids]
            if self.complete and reachable and missing:
                return (f"mode_used says {used} but a memory sharing {similar[missing[0]]} of {len(wanted)} query words "
                        f"was not found ({missing[0]}): a keyword search presented as {used}?")
            if self.readings.semantic_required and mode == "semantic":
                served = {m.get("id"): m for m in body["memories"] if isinstance(m, dict)}
                unrelated = [i for i in ids if i in served and not shared(served[i]) and i not in similar]
                for near in (i for i in ids if i in similar):
                    above = [i for i in unrelated if ids.index(i) < ids.index(near)]
                    if above:
                        return f"semantic search ranks a memory sharing no word of q ({above[0]}) above a similar one ({near})"
            return None
        return check

    def _loose_search(self, matched: list[dict[str, Any]], filters: Filters, limit: int, mode: Any) -> Check:
        """A mode whose ranking the spec leaves open, or an odd value served: filters, limit and honesty only."""
        known = {d["id"] for d in matched}

        def check(answer: Any) -> str | None:
            problem = search_page_shape(answer)
            if problem:
                return problem
            body = body_of(answer)
            served = [m for m in body["memories"] if isinstance(m, dict)]
            if body.get("mode_used") not in omp.SEARCH_MODES:
                return f"mode_used {body.get('mode_used', '<absent>')!r} is not a mode"
            if mode in omp.SEARCH_MODES and mode != "keyword" and self.readings.semantic_required and body.get("mode_used") != mode:
                return f"mode_used {body.get('mode_used')!r}, not {mode!r} (OMP-Search)"
            if len(served) > limit:
                return f"more memories than the limit ({len(served)} > {limit})"
            unfit = [m.get("id") for m in served if not filters.fit(m)]
            if unfit:
                return f"served memories outside the filters ({unfit[:3]})"
            if self.complete and not {m.get("id") for m in served} <= known:
                return "served memories the model does not hold"
            return None
        return check
