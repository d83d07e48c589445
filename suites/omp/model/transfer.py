"""The model's answers to export, import and health (§3.3, §5), and what an import must have done."""

from __future__ import annotations

from typing import Any

from memconform.suites.omp import format as omp

from .base import Check, Request, body_of, brief, instant, principal, status_of
from .pages import plain_strategy
from .shapes import INVALID, OPEN, VALID, error_is, fields_differ, refused
from .state import ImportEffect, ModelState


class TransferAnswers(ModelState):
    """The answers export, import and health may get in the state held."""

    # -- export and import ----------------------------------------------------------------------

    def _expect_export(self, request: Request) -> dict[str, Check]:
        docs = {d["id"]: d for d in self.memories(request.key)}
        pending = self.pending

        def check(answer: Any) -> str | None:
            body = body_of(answer)
            if status_of(answer) != 200 or not isinstance(body, dict) or not isinstance(body.get("memories"), list):
                return f"not a 200 export ({brief(answer)})"
            if not isinstance(body.get("omp_version"), str) or instant(body.get("exported_at")) is None:
                return "the export envelope lacks omp_version or a UTC exported_at"
            served = {m.get("id"): m for m in body["memories"] if isinstance(m, dict)}
            if pending is not None:
                return self._import_seen(docs, served, pending)
            lost = sorted(set(docs) - set(served))
            if lost:
                return f"the export lacks memories the model holds ({lost[:3]})"
            for mem_id, doc in docs.items():
                problem = fields_differ(served[mem_id], doc, stored=True)
                if problem:
                    return f"export {mem_id}: {problem}"
            if self.complete and set(served) - set(docs):
                return f"the export holds memories the model does not ({sorted(map(str, set(served) - set(docs)))[:3]})"
            resurrected = sorted(self.gone & set(map(str, served)))
            if resurrected:
                return f"a deleted memory is exported ({resurrected[:3]})"
            return None
        return {"every memory as stored": check}

    def _expect_health(self, request: Request) -> dict[str, Check]:
        def check(answer: Any) -> str | None:
            body = body_of(answer)
            if status_of(answer) != 200 or not isinstance(body, dict) or body.get("status") != "ok":
                return f"health did not answer 200 with status ok ({brief(answer)})"
            count = body.get("memories_count")
            held = sum(len(d) for d in self.users.values())
            if not isinstance(count, int) or (count != held if self.complete else count < held):
                return f"memories_count {count!r}, the model holds {held}"
            return None
        return {"200 ok with the count": check}

    def conflict_readings(self, request: Request) -> list[str] | None:
        """The strategies a sane server may apply (errata O1, O35); None when only a 422 is allowed."""
        values = [v for k, v in request.params if k == "conflict"]
        if not values and isinstance(request.body, dict) and isinstance(request.body.get("conflict"), str):
            values = [request.body["conflict"]]
        if not values:
            return ["skip"]
        if len(values) > 1:
            return [v for v in dict.fromkeys((values[0], values[-1])) if v in omp.CONFLICTS] or None
        value = values[0]
        if value in omp.CONFLICTS:
            return [value]
        if value == "":
            return ["skip"]
        if value.lower() in omp.CONFLICTS:
            return [value.lower()]
        return None

    def _expect_import(self, request: Request) -> dict[str, Check]:
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("memories"), list):
            return {"not an export object: 422": error_is(self.readings, 422, "validation_error")}
        strategies = self.conflict_readings(request)
        if strategies is None:
            return {"unknown conflict strategy: 422 and nothing imported": error_is(self.readings, 422, "validation_error")}
        items = body["memories"]
        kinds = [self._item_validity(item) for item in items]
        out: dict[str, Check] = {}
        if not plain_strategy(request) or INVALID in kinds or OPEN in kinds:
            if INVALID not in kinds or self.readings.invalid_import in ("either", "refused"):
                out["whole file refused"] = refused(self.readings)
        if INVALID in kinds and self.readings.invalid_import == "refused":
            return out
        out["invalid memory reported, the rest imported" if INVALID in kinds else "imported"] = self._import_report(
            request, items, kinds)
        return out

    def _item_validity(self, item: Any) -> str:
        v = self.validator.memory(item, partial=False)
        if isinstance(item, dict):
            mem_id = item.get("id")
            if mem_id is None:
                v.open("an item without id (errata O35)")
            elif not isinstance(mem_id, str) or not omp.ID_RE.match(mem_id):
                v.open(f"an item id {str(mem_id)[:30]!r} that breaks the format (errata O35)")
            for name in ("created_at", "updated_at"):
                if item.get(name) is None:
                    v.open(f"an item without {name} (errata O35)")
                else:
                    self.validator.stamp(v, item.get(name), name)
        return v.kind

    def _import_report(self, request: Request, items: list[Any], kinds: list[str]) -> Check:
        def check(answer: Any) -> str | None:
            body = body_of(answer)
            if status_of(answer) != 200 or not isinstance(body, dict):
                return f"not a 200 import report ({brief(answer)})"
            errors = body.get("errors")
            if not isinstance(body.get("imported"), int) or not isinstance(body.get("skipped"), int) or not isinstance(errors, list):
                return "the report lacks imported, skipped or errors"
            named = {e.get("index") for e in errors if isinstance(e, dict)} | {e.get("id") for e in errors if isinstance(e, dict)}
            unnamed = [i for i, kind in enumerate(kinds) if kind == INVALID
                       and i not in named and (not isinstance(items[i], dict) or items[i].get("id") not in named or items[i].get("id") is None)]
            if unnamed:
                return f"errors does not name the invalid memories at {unnamed[:3]}"
            sure = sum(1 for k in kinds if k == VALID)
            maybe = sum(1 for k in kinds if k == OPEN)
            done = body["imported"] + body["skipped"]
            if not sure <= done <= sure + maybe:
                return f"imported + skipped is {done}, expected {sure}" + (f" to {sure + maybe}" if maybe else "")
            return None
        return check

    def _import_effects(self, request: Request) -> list[ImportEffect]:
        strategies = self.conflict_readings(request) or ["skip"]
        body = request.body if isinstance(request.body, dict) else {}
        docs = self.users.get(principal(request.key).user, {})
        effects: list[ImportEffect] = []
        seen: set[str] = set()
        for item in body.get("memories") or []:
            if not isinstance(item, dict) or not isinstance(item.get("content"), str):
                continue
            kind = self._item_validity(item)
            mem_id = item.get("id") if isinstance(item.get("id"), str) else None
            exists = mem_id is not None and (mem_id in docs or mem_id in seen)
            if kind == INVALID:
                effects.append(ImportEffect(item["content"], None, "not"))
                continue
            stored = "must" if kind == VALID else "may"
            if len(strategies) > 1:
                stored = "may"
            strategy = strategies[0]
            if exists and strategy == "skip":
                effects.append(ImportEffect(item["content"], mem_id, "not" if stored == "must" else "may"))
            elif strategy == "duplicate" or mem_id is None:
                effects.append(ImportEffect(item["content"], None, stored, item.get("created_at")))
            else:
                effects.append(ImportEffect(item["content"], mem_id, stored, item.get("created_at"),
                                            replaces=mem_id if exists else None))
            if mem_id is not None:
                seen.add(mem_id)
        return effects

    def _import_seen(self, docs: dict[str, dict[str, Any]], served: dict[Any, dict[str, Any]],
                     effects: list[ImportEffect]) -> str | None:
        by_content: dict[Any, list[dict[str, Any]]] = {}
        for mem in served.values():
            by_content.setdefault(mem.get("content"), []).append(mem)
        replaced = {e.replaces for e in effects if e.replaces and e.stored == "must"}
        lost = sorted(i for i in docs if i not in served and i not in replaced)
        if lost:
            return f"an import lost memories that existed ({lost[:3]})"
        touched = {e.id for e in effects if e.id is not None and e.stored != "not"}
        for mem_id in docs.keys() - touched:
            problem = fields_differ(served[mem_id], docs[mem_id], stored=True)
            if problem:
                return f"an import changed a memory it must leave alone ({mem_id}: {problem})"
        for effect in effects:
            found = by_content.get(effect.content, [])
            if effect.stored == "must" and not found:
                return f"an imported memory is missing ({effect.content[:60]!r})"
            if effect.stored == "not" and any(not (m.get("id") in docs and docs[m["id"]].get("content") == effect.content)
                                              for m in found):
                return f"a memory that must not be stored is ({effect.content[:60]!r})"
            if found and effect.id is not None and effect.stored == "must" and all(m.get("id") != effect.id for m in found):
                return f"an imported memory is not under its id {effect.id}"
            if found and effect.id is None and any(m.get("id") in docs for m in found):
                return "conflict=duplicate reused an existing id"
            if found and effect.created_at is not None and self.readings.import_created_at != "either":
                kept = instant(found[0].get("created_at")) == instant(effect.created_at)
                if kept != (self.readings.import_created_at == "keeps"):
                    return f"import {'stamped' if not kept else 'kept'} created_at (pinned: {self.readings.import_created_at})"
        return None

    def _resolve_import(self, key: str, exported: list[Any]) -> None:
        """After an import, the state is what the export said of the model's memories and the imported ones."""
        effects = self.pending or []
        contents = {e.content for e in effects if e.stored != "not"}
        who = principal(key)
        docs = self.users.setdefault(who.user, {})
        served: dict[str, dict[str, Any]] = {m["id"]: m for m in exported if isinstance(m, dict) and isinstance(m.get("id"), str)}
        for mem_id in list(docs):
            if mem_id in served:
                docs[mem_id] = served[mem_id]
        for served_id, mem in served.items():
            if mem.get("content") in contents:
                docs[served_id] = mem
                self.gone.discard(served_id)
                self.audit.append((key, "import", served_id))
        self.pending = None
