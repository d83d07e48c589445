"""Bearer authentication (§3.2): every endpoint but health answers 401 without a valid key."""

from __future__ import annotations

from collections.abc import Iterator

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client as c
from memconform.suites.omp import controls as ev
from memconform.suites.omp import rules
from memconform.suites.omp.ai_calls import ai_reason
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply


def protected_calls(ctx: CheckContext, key: str | None) -> Iterator[tuple[Reply, str]]:
    """Every endpoint but health with the given (missing or wrong) key; each write carries a marker."""
    made = c.created(ctx, c.memory(ctx, "auth"))
    marker = ctx.unique("unauth")
    body = c.memory(ctx, "unauth", content=f"{marker} must not be stored")
    yield c.create(ctx, body, key), marker
    yield c.list_(ctx, {"limit": "1"}, key), marker
    yield c.get(ctx, made["id"], key), marker
    yield c.update(ctx, made["id"], {"content": f"{marker} overwritten"}, key), marker
    yield c.delete(ctx, made["id"], key), marker
    yield c.search(ctx, {"q": "memconform", "mode": "keyword"}, key), marker
    yield c.export(ctx, key), marker
    yield c.import_(ctx, c.export_file([c.full_memory(ctx, "unauth-import", content=f"{marker} imported")]), key=key), marker
    if ai_reason(ctx) is None:  # only where calling them cannot reach a real AI provider
        yield c.extract(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": c.OWN_TOOL}, key), marker
        yield c.compress(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": c.OWN_TOOL}, key), marker
    after = c.get(ctx, made["id"])
    if after.status != 200 or (isinstance(after.body, dict) and after.body.get("content") != made["content"]):
        raise _Tampered(after)


class _Tampered(Exception):
    def __init__(self, answer: Reply) -> None:
        super().__init__(answer.brief())
        self.answer = answer


def auth_failures(ctx: CheckContext, key: str | None) -> Iterator[Failure]:
    # the positive control: the same reads with the valid key are served
    probe = c.created(ctx, c.memory(ctx, "auth-control"))
    for what, answer in (("get", c.get(ctx, probe["id"])), ("list", c.list_(ctx, {"limit": "1"})),
                         ("search", c.search(ctx, {"q": "memconform", "mode": "keyword"})), ("export", c.export(ctx, record=False))):
        ev.control(answer, f"the same {what} with the valid key")
    markers: list[str] = []
    try:
        for answer, marker in protected_calls(ctx, key):
            markers.append(marker)
            yield from rules.error_failures(ctx, answer, 401, "unauthorized")
    except _Tampered as exc:
        yield Failure("a request without a valid key changed or deleted a memory", exc.answer.brief(), "the memory unchanged", "$")
    if markers and c.with_marker(c.exported(ctx), markers[0]):
        yield Failure("a request without a valid key stored memories", marker, "nothing stored", "$.memories")


@SUITE.check(section="§3.2", keyword="MUST", level="core",
           sentence='`unauthorized` 401 Missing or invalid API key')
def auth_missing_key_401(ctx: CheckContext) -> Iterator[Failure]:
    yield from auth_failures(ctx, None)


@SUITE.check(section="§3.2", keyword="MUST", level="core",
           sentence='`unauthorized` 401 Missing or invalid API key')
def auth_wrong_key_401(ctx: CheckContext) -> Iterator[Failure]:
    yield from auth_failures(ctx, "memconform-wrong-key-" + c.word() + c.word())
