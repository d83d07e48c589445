"""PUT and DELETE /v1/memories/:id (§3.3): partial updates, nullable fields, immutables, 404s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import ask, client, controls, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.dataset import ids
from memconform.suites.omp.model import Model, Readings, Request
from memconform.suites.omp.suite import SUITE


def _created_rich(ctx: CheckContext, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = client.memory(ctx, label, tags=[label], namespace=f"project:{ctx.run_id}", type="episodic",
                       metadata={"memconform_run": ctx.run_id, "k": "v"})
    return request, client.created(ctx, request)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='updated_at: string // ISO 8601 UTC timestamp')
def update_partial(ctx: CheckContext) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "update")
    new_tags = [client.run_tag(ctx), "updated"]
    answer = client.update(ctx, before["id"], {"tags": new_tags})
    if answer.status != 200 or not isinstance(answer.body, dict):
        yield Failure("a partial update did not answer 200 with the memory", answer.status, 200, "$")
        return
    # the model's memory after the update: the given field replaced, every other kept, updated_at moved on
    model = Model.seeded([before], Readings.from_options(ctx.option))
    request = Request("update", id=before["id"], body={"tags": new_tags})
    reason = model.step(request, answer)
    if reason is not None:
        yield Failure(f"the update's answer is not the memory with only the given field changed: {reason.title}",
                      reason.received, reason.expected, "$(put)")
        return
    read = client.get(ctx, before["id"])
    reason = model.accepts(Request("get", id=before["id"]), read)
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
    """An update naming another id and created_at: never applied (ignored, or the body refused with 422,
    errata O8); the model, following the answer, says what the memory and the other id then read as."""
    _, before = _created_rich(ctx, "immutable")
    other = client.new_id()
    model = Model.seeded([before], Readings.from_options(ctx.option))
    patch = {"id": other, "created_at": "2001-01-01T00:00:00Z", "tags": [client.run_tag(ctx), "immutable2"]}
    answer = client.update(ctx, before["id"], patch)
    reason = model.step(Request("update", id=before["id"], body=patch), answer)
    if reason is not None:
        yield Failure(f"PUT /v1/memories/{before['id']} with id and created_at in the body: {reason.title}",
                      ask.summary(answer), reason.expected, "$(put)")
        return
    if not answer.ok:
        yield from rules.validation_failures(ctx, answer)  # the refusal's envelope as every error's (§4)
    for mem_id, what in ((before["id"], "the memory read after the update"), (other, "the id named in the body")):
        failure = ask.judged(model, Request("get", id=mem_id), client.get(ctx, mem_id, quiet=mem_id == other),
                             f"GET /v1/memories/{mem_id} ({what})", "$")
        if failure is not None:
            yield failure


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`validation_error` 422 Request body failed schema validation')
def update_invalid_changes_nothing(ctx: CheckContext) -> Iterator[Failure]:
    _, made = _created_rich(ctx, "update-bad")
    # the positive control: the same update with a valid value is accepted (then the refusals are judged)
    controls.control(client.update(ctx, made["id"], {"content": made["content"], "tags": made["tags"], "type": made["type"]}),
               "the same update with valid content, tags and type")
    before = client.get(ctx, made["id"]).accepted_json(dict, "getting the memory")
    for patch in ({"content": "x" * (omp.MAX_CONTENT + 1)}, {"tags": "not-a-list"}, {"type": "opinion"}):
        yield from rules.validation_failures(ctx, client.update(ctx, before["id"], patch))
    after = client.get(ctx, before["id"]).accepted_json(dict, "getting the memory")
    changed = {k: after.get(k) for k in before if after.get(k) != before[k]}
    if changed:
        yield Failure("a refused update changed the memory", changed, "unchanged", "$")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Response 404 Not Found: { "error": "memory_not_found" }')
def delete_then_gone(ctx: CheckContext) -> Iterator[Failure]:
    made = client.created(ctx, client.memory(ctx, "delete"))
    answer = client.delete(ctx, made["id"])
    if answer.status != 204:
        yield Failure("delete did not answer 204 No Content", answer.status, 204, "$")
    if answer.raw.strip():
        yield Failure("204 No Content came with a body", answer.raw[:100], "no body", "$")
    yield from rules.error_failures(ctx, client.get(ctx, made["id"]), 404, "memory_not_found")
    yield from rules.error_failures(ctx, client.delete(ctx, made["id"]), 404, "memory_not_found")
    if made["id"] in ids(client.exported(ctx)):
        yield Failure("a deleted memory is still exported", made["id"], "absent", "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='expires_at: string | null // ISO 8601 UTC or null (never expires)')
def update_clears_nullable(ctx: CheckContext) -> Iterator[Failure]:
    """expires_at is `string | null`: an update giving null clears it (null is provided, and a value).
    namespace is optional: null clears it, or is refused with 422 and changes nothing (errata O8). The
    model says what each answer and each read-back must be."""
    _, made = _created_rich(ctx, "nullable")
    model = Model.seeded([made], Readings.from_options(ctx.option))
    future = {"expires_at": client.now_iso(86400 * 30)}
    control = controls.control(client.update(ctx, made["id"], future), "setting expires_at by update")
    model.apply(Request("update", id=made["id"], body=future), control)
    yield from _expires_at_cleared(ctx, model, made["id"])
    patch = {"namespace": None}
    request = Request("update", id=made["id"], body=patch)
    answer = client.update(ctx, made["id"], patch)
    got = client.get(ctx, made["id"])
    seen = ask.observe(ctx, "O8", request, (answer, got), seeded=lambda r: model.reread(r), read_back=True,
                       title="an update giving namespace null neither cleared it nor was refused leaving it unchanged",
                       path="$.namespace")
    if seen.failure and answer.status >= 500:
        yield from rules.validation_failures(ctx, answer)  # says "a server error"
    elif seen.failure:
        yield seen.failure
    elif not answer.ok:
        yield from rules.validation_failures(ctx, answer)  # the refusal's envelope as every error's (§4)


def _expires_at_cleared(ctx: CheckContext, model: Model, mem_id: str) -> Iterator[Failure]:
    patch = {"expires_at": None}
    answer = client.update(ctx, mem_id, patch)
    reason = model.step(Request("update", id=mem_id, body=patch), answer)
    if reason is not None:
        title = ("was refused" if not answer.ok else "did not clear it" if isinstance(answer.body, dict)
                 and answer.body.get("expires_at") is not None else f"answered outside the model ({reason.title})")
        yield Failure(f"an update giving expires_at null {title}", ask.summary(answer), reason.expected, "$.expires_at")
        return
    reason = model.accepts(Request("get", id=mem_id), client.get(ctx, mem_id))
    if reason is not None:
        yield Failure(f"the memory read after an update giving expires_at null did not clear it: {reason.title}",
                      reason.received, reason.expected, "$.expires_at")
