"""The 0.2 AI endpoints without an AI key, and §7 security considerations that show over the API.

§7 audit logging and "content not logged" are not observable over the API: "content not logged" is
checked only on the log file the user names (option omp.server_log), and is not assessed otherwise
(suites/omp/errata.md O24). The rate-limit probe is registered last so its burst, sent with a tool
key, never throttles a check that comes after it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, NeedsOperator, NotExercised, SkipCheck
from memconform.suites.omp import client, controls, rules
from memconform.suites.omp.ai_calls import ai_reason
from memconform.suites.omp.server_log import SCAN_CAP, ServerLog
from memconform.suites.omp.suite import SUITE

MIN_KEY_LEN = 32
WRITTEN = {"create": "a created memory", "update": "an updated, then deleted, memory", "import": "an imported memory"}


def refuse_to_call(ctx: CheckContext, endpoint: str) -> None:
    """memconform never calls a real AI provider: without the user's word that the target has no AI key
    the rule is not exercised (not assessed, naming the option; it never decides the exit code), and on
    a target that states it has a key the rule (an answer without a key) does not apply."""
    reason = ai_reason(ctx)
    if reason is None:
        return
    if client.facts(ctx).ai_key_configured:
        raise SkipCheck(reason, not_applicable=True)
    raise NotExercised(f"{endpoint} without an AI key", "omp.ai_endpoints=no-key", reason)


def no_key_failures(ctx: CheckContext, send: Any, endpoint: str) -> Iterator[Failure]:
    refuse_to_call(ctx, endpoint)
    tool = f"mc-ai-{ctx.run_id}"
    marker = ctx.unique("ai")
    answer = send(ctx, {"transcript": f"{marker}. Alice: I always use TypeScript. Bob: What about Python?", "source_tool": tool})
    if answer.status in (404, 405, 501):
        raise SkipCheck(f"{endpoint} is not offered ({answer.status}): a 0.2 endpoint a v0.1 server need not have", not_applicable=True)
    yield from rules.error_failures(ctx, answer, 422, "no_api_key")
    stored = [m for m in client.exported(ctx) if (m.get("source") or {}).get("tool") == tool or marker in str(m.get("content"))]
    if stored:
        yield Failure(f"{endpoint} without an AI key stored memories", [m.get("content", "")[:60] for m in stored[:3]],
                      "nothing stored", "$.memories")


@SUITE.check(section="§3.3 (0.2)", keyword="MUST", level="ai",
           sentence='Error 422: no_api_key — no AI API key configured')
def extract_without_ai_key(ctx: CheckContext) -> Iterator[Failure]:
    yield from no_key_failures(ctx, client.extract, "extract")


@SUITE.check(section="§3.3 (0.2)", keyword="MUST", level="ai",
           sentence='Error 422: no_api_key — no AI API key configured')
def compress_without_ai_key(ctx: CheckContext) -> Iterator[Failure]:
    yield from no_key_failures(ctx, client.compress, "compress")


@SUITE.check(section="§7", keyword="MUST", level="security",
           sentence='API keys MUST be at least 32 characters of cryptographic randomness')
def api_keys_at_least_32_chars(ctx: CheckContext) -> Iterator[Failure]:
    named: dict[str, str] = {}
    global_key = getattr(client.http(ctx), "api_key", None)
    if global_key:
        named["the global key (--api-key)"] = global_key
    creds = client.facts(ctx).credentials
    if creds:
        named.update({f"the key of tool {tool!r}": key for tool, key in creds.tool_keys.items()})
        if creds.other_user_key:
            named["the second user's key"] = creds.other_user_key
    if not named:
        raise SkipCheck("the harness was given no API key to measure")
    for who, key in named.items():
        if len(key) < MIN_KEY_LEN:  # the key itself never reaches the report: only its length
            yield Failure(f"{who} is shorter than 32 characters", f"{len(key)} characters", f">= {MIN_KEY_LEN}", "$")


@SUITE.check(section="§7", keyword="MUST NOT", level="security",
           sentence='Memory content MUST NOT be logged in plain text in production logs')
def content_not_logged(ctx: CheckContext) -> Iterator[Failure]:
    """A create, an update, a delete of that memory and an import, the content of each write opening with a
    fresh token; then what the server's log (option omp.server_log) gained meanwhile: a token there is that
    content in plain text.
    The positive control: the log grew during the writes, so it is the log this server writes."""
    path = ctx.option("server_log") or client.facts(ctx).server_log
    if not path:
        raise NeedsOperator("§7 content not logged in plain text", "omp.server_log=PATH",
                            "the server's log is not visible over the API: name the file the server writes it to "
                            "(errata O24)")
    log = ServerLog(path)
    before = log.size()
    tokens: dict[str, str] = {}

    def content(write: str) -> str:
        tokens[write] = uuid.uuid4().hex[:24]  # a prefix of 16 hex digits is already found by chance in no log
        return f"{tokens[write]} private note from {ctx.unique('log')}"

    made = client.created(ctx, client.memory(ctx, "log-create", content=content("create")))
    controls.control(client.update(ctx, made["id"], {"content": content("update")}), "an update of a memory's content")
    controls.control(client.delete(ctx, made["id"]), "a delete of that memory")  # a server may log what it deletes
    controls.control(client.import_(ctx, client.export_file([client.full_memory(ctx, "log-import", content=content("import"))])), "an import of one memory")
    growth = log.since(before)
    logged = [(write, growth.data.find(token[:16].encode())) for write, token in tokens.items()]
    for write, at in logged:
        if at >= 0:
            line = growth.data[growth.data.rfind(b"\n", 0, at) + 1:at + 80].decode("utf-8", "replace")
            yield Failure(f"the content of {WRITTEN[write]} is in the server log in plain text", line[-200:],
                          "no memory content in the log", "$.content", f"server log {path}")
    if any(at >= 0 for _, at in logged):
        return
    if growth.grew == 0:
        raise Inconclusive(f"the server log {path} did not grow during four writes: nothing shows it is the log "
                           "this server writes (§7 also asks that writes be logged)")
    if growth.grew > len(growth.data):
        raise Inconclusive(f"the server log grew {growth.grew} bytes during four writes; only the first {SCAN_CAP} were read")


@SUITE.check(section="§7", keyword="SHOULD", level="security",
           sentence='Implementations SHOULD rate-limit per API key')
def rate_limited_per_key(ctx: CheckContext) -> Iterator[Failure]:
    creds = client.facts(ctx).credentials
    if creds is None or not creds.tool_keys:
        raise SkipCheck("needs a key other than the global one (--option omp.credentials=FILE), so the burst never "
                        "throttles the run's own key")
    key = creds.tool_keys[sorted(creds.tool_keys)[-1]]
    burst = int(ctx.option("rate_limit_burst"))
    limited, sent = None, 0
    while sent < burst:
        sent += 1
        answer = client.list_(ctx, {"limit": "1"}, key, quiet=True)
        if answer.status == 429:
            limited = answer
            break
        if not answer.ok:
            yield Failure("the rate-limit probe was refused before any limit", answer.brief(), "200 or 429", "$")
            return
    client.latency_note(ctx)
    if limited is None:
        yield Failure("no request of a burst was rate-limited", f"{burst} requests with one key, all served",
                      "429 rate_limited within the burst", "$", "option omp.rate_limit_burst sets the burst")
        return
    ctx.note(f"rate-limited after {sent} requests; Retry-After: {limited.headers.get('retry-after', '<absent>')}")
    yield from rules.error_failures(ctx, limited, 429, "rate_limited")
    other = client.list_(ctx, {"limit": "1"})
    if other.status == 429:
        yield Failure("the limit of one key throttled another key: not per API key", other.status, 200, "$")
