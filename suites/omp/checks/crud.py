"""PUT and DELETE /v1/memories/:id (§3.3): partial updates, nullable fields, immutables, 404s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.model import Failure
from memconform.suites.omp import client as c
from memconform.suites.omp import controls as ev
from memconform.suites.omp import format as omp
from memconform.suites.omp import model as m
from memconform.suites.omp import rules
from memconform.suites.omp.checks.listing import ids
from memconform.suites.omp.suite import SUITE


def _created_rich(ctx: CheckContext, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = c.memory(ctx, label, tags=[label], namespace=f"project:{ctx.run_id}", type="episodic",
                       metadata={"memconform_run": ctx.run_id, "k": "v"})
    return request, c.created(ctx, request)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='updated_at: string // ISO 8601 UTC timestamp')
def update_partial(ctx: CheckContext) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "update")
    new_tags = [c.run_tag(ctx), "updated"]
    answer = c.update(ctx, before["id"], {"tags": new_tags})
    if answer.status != 200 or not isinstance(answer.body, dict):
        yield Failure("a partial update did not answer 200 with the memory", answer.status, 200, "$")
        return
    # the model's memory after the update: the given field replaced, every other kept, updated_at moved on
    model = m.Model.seeded([before], m.Readings.from_options(ctx.option))
    request = m.Request("update", id=before["id"], body={"tags": new_tags})
    reason = model.step(request, answer)
    if reason is not None:
        yield Failure(f"the update's answer is not the memory with only the given field changed: {reason.title}",
                      reason.received, reason.expected, "$(put)")
        return
    read = c.get(ctx, before["id"])
    reason = model.accepts(m.Request("get", id=before["id"]), read)
    if reason is not None:
        yield Failure(f"the memory read after the update is not the one the update answered: {reason.title}",
                      reason.received, reason.expected, "$(get)")


def updated_at_failures(old: Any, new: Any) -> Iterator[Failure]:
    """updated_at moves: strictly later, unless both carry whole seconds and the same second (errata O6)."""
    t_old, t_new = rules.instant(old), rules.instant(new)
    whole_seconds = "." not in str(old) and "." not in str(new)  # equal stamps within one second are fair
    if t_old is None or t_new is None:
        yield Failure("updated_at is not readable before or after the update", [old, new], "ISO 8601 UTC", "$.updated_at")
    elif t_new < t_old or (t_new == t_old and not whole_seconds):
        yield Failure("updated_at did not move forward on update", new, f"later than {old}", "$.updated_at")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Request body: Partial Memory object (excluding id, created_at)')
def update_keeps_id_and_created_at(ctx: CheckContext) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "immutable")
    other = c.new_id()
    answer = c.update(ctx, before["id"], {"id": other, "created_at": "2001-01-01T00:00:00Z", "tags": [c.run_tag(ctx), "immutable2"]})
    if not answer.ok:
        yield from rules.validation_failures(ctx, answer)  # refusing the fields is a careful reading too
    after = c.get(ctx, before["id"])
    if after.status != 200 or not isinstance(after.body, dict):
        yield Failure("the memory is gone from its id after an update that named another id", after.status, 200, "$")
        return
    if after.body.get("created_at") != before.get("created_at"):
        yield Failure("created_at was changed by an update", after.body.get("created_at"), before.get("created_at"), "$.created_at")
    if c.get(ctx, other, quiet=True).status != 404:
        yield Failure("an update moved the memory to the id given in the body", other, "404 for that id", "$.id")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`validation_error` 422 Request body failed schema validation')
def update_invalid_changes_nothing(ctx: CheckContext) -> Iterator[Failure]:
    _, made = _created_rich(ctx, "update-bad")
    # the positive control: the same update with a valid value is accepted (then the refusals are judged)
    ev.control(c.update(ctx, made["id"], {"content": made["content"], "tags": made["tags"], "type": made["type"]}),
               "the same update with valid content, tags and type")
    before = c.get(ctx, made["id"]).accepted_json(dict, "getting the memory")
    for patch in ({"content": "x" * (omp.MAX_CONTENT + 1)}, {"tags": "not-a-list"}, {"type": "opinion"}):
        yield from rules.validation_failures(ctx, c.update(ctx, before["id"], patch))
    after = c.get(ctx, before["id"]).accepted_json(dict, "getting the memory")
    changed = {k: after.get(k) for k in before if after.get(k) != before[k]}
    if changed:
        yield Failure("a refused update changed the memory", changed, "unchanged", "$")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Response 404 Not Found: { "error": "memory_not_found" }')
def delete_then_gone(ctx: CheckContext) -> Iterator[Failure]:
    made = c.created(ctx, c.memory(ctx, "delete"))
    answer = c.delete(ctx, made["id"])
    if answer.status != 204:
        yield Failure("delete did not answer 204 No Content", answer.status, 204, "$")
    if answer.raw.strip():
        yield Failure("204 No Content came with a body", answer.raw[:100], "no body", "$")
    yield from rules.error_failures(ctx, c.get(ctx, made["id"]), 404, "memory_not_found")
    yield from rules.error_failures(ctx, c.delete(ctx, made["id"]), 404, "memory_not_found")
    if made["id"] in ids(c.exported(ctx)):
        yield Failure("a deleted memory is still exported", made["id"], "absent", "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='expires_at: string | null // ISO 8601 UTC or null (never expires)')
def update_clears_nullable(ctx: CheckContext) -> Iterator[Failure]:
    """expires_at is `string | null`: an update giving null clears it (null is provided, and a value).
    namespace is optional: null clears it, or is refused with 422 and changes nothing (errata O8)."""
    _, made = _created_rich(ctx, "nullable")
    ev.control(c.update(ctx, made["id"], {"expires_at": c.now_iso(86400 * 30)}), "setting expires_at by update")
    answer = c.update(ctx, made["id"], {"expires_at": None})
    got = c.get(ctx, made["id"]).accepted_json(dict, "getting the memory")
    if not answer.ok:
        yield Failure("an update giving expires_at null was refused", answer.brief(), "200, expires_at null", "$.expires_at")
    elif got.get("expires_at") is not None:
        yield Failure("an update giving expires_at null did not clear it", got.get("expires_at"), None, "$.expires_at")
    answer = c.update(ctx, made["id"], {"namespace": None})
    got = c.get(ctx, made["id"]).accepted_json(dict, "getting the memory")
    seen = ctx.observe("O8", {
        "namespace null clears it": answer.ok and got.get("namespace") is None,
        "namespace null refused, nothing changed": 400 <= answer.status < 500 and got.get("namespace") == made.get("namespace"),
    }, title="an update giving namespace null neither cleared it nor was refused leaving it unchanged", path="$.namespace")
    if seen.failure and answer.status >= 500:
        yield from rules.validation_failures(ctx, answer)  # says "a server error"
    elif seen.failure:
        seen.failure.received = f"update {answer.status}; namespace now {got.get('namespace')!r}, was {made.get('namespace')!r}"
        yield seen.failure
    elif not answer.ok:
        yield from rules.validation_failures(ctx, answer)
