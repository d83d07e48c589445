"""Bearer authentication (§3.2): every endpoint but health answers 401 without a valid key."""

from __future__ import annotations

from collections.abc import Iterator

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, controls, rules
from memconform.suites.omp.ai_calls import ai_reason
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply


def protected_calls(ctx: CheckContext, key: str | None) -> Iterator[tuple[Reply, str]]:
    """Every endpoint but health with the given (missing or wrong) key; each write carries a marker."""
    made = client.created(ctx, client.memory(ctx, "auth"))
    marker = ctx.unique("unauth")
    body = client.memory(ctx, "unauth", content=f"{marker} must not be stored")
    yield client.create(ctx, body, key), marker
    yield client.list_(ctx, {"limit": "1"}, key), marker
    yield client.get(ctx, made["id"], key), marker
    yield client.update(ctx, made["id"], {"content": f"{marker} overwritten"}, key), marker
    yield client.delete(ctx, made["id"], key), marker
    yield client.search(ctx, {"q": "memconform", "mode": "keyword"}, key), marker
    yield client.export(ctx, key), marker
    yield client.import_(ctx, client.export_file([client.full_memory(ctx, "unauth-import", content=f"{marker} imported")]), key=key), marker
    if ai_reason(ctx) is None:  # only where calling them cannot reach a real AI provider
        yield client.extract(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": client.OWN_TOOL}, key), marker
        yield client.compress(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": client.OWN_TOOL}, key), marker
    after = client.get(ctx, made["id"])
    if after.status != 200 or (isinstance(after.body, dict) and after.body.get("content") != made["content"]):
        raise _Tampered(after)


class _Tampered(Exception):
    def __init__(self, answer: Reply) -> None:
        super().__init__(answer.brief())
        self.answer = answer


def auth_failures(ctx: CheckContext, key: str | None) -> Iterator[Failure]:
    # the positive control: the same reads with the valid key are served
    probe = client.created(ctx, client.memory(ctx, "auth-control"))
    for what, answer in (("get", client.get(ctx, probe["id"])), ("list", client.list_(ctx, {"limit": "1"})),
                         ("search", client.search(ctx, {"q": "memconform", "mode": "keyword"})), ("export", client.export(ctx, record=False))):
        controls.control(answer, f"the same {what} with the valid key")
    markers: list[str] = []
    try:
        for answer, marker in protected_calls(ctx, key):
            markers.append(marker)
            yield from rules.error_failures(ctx, answer, 401, "unauthorized")
    except _Tampered as exc:
        yield Failure("a request without a valid key changed or deleted a memory", exc.answer.brief(), "the memory unchanged", "$")
    if markers and client.with_marker(client.exported(ctx), markers[0]):
        yield Failure("a request without a valid key stored memories", marker, "nothing stored", "$.memories")


@SUITE.check(section="§3.2", keyword="MUST", level="core",
           sentence='`unauthorized` 401 Missing or invalid API key')
def auth_missing_key_401(ctx: CheckContext) -> Iterator[Failure]:
    yield from auth_failures(ctx, None)


@SUITE.check(section="§3.2", keyword="MUST", level="core",
           sentence='`unauthorized` 401 Missing or invalid API key')
def auth_wrong_key_401(ctx: CheckContext) -> Iterator[Failure]:
    yield from auth_failures(ctx, "memconform-wrong-key-" + client.word() + client.word())
