"""The §2.1 / §2.3 shape of a memory as create, get, list, search and export return it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, controls, rules
from memconform.suites.omp.dataset import ids
from memconform.suites.omp.suite import SUITE


def _sample(ctx: CheckContext) -> list[tuple[str, dict[str, Any]]]:
    """One rich memory as create, get, list, search and export return it."""
    key = client.word()
    request = client.memory(ctx, "sample", content=f"{ctx.unique('sample')} {key} — ✓ 記憶", type="procedural",
                       tags=["sample"], namespace=f"project:{ctx.run_id}", expires_at=client.now_iso(86400 * 365),
                       metadata={"memconform_run": ctx.run_id, "n": 1, "nested": {"a": [1, None]}})
    request["source"]["session_id"] = "memconform-session"
    made = client.created(ctx, request)
    out = [("$(create)", made)]
    got = client.get(ctx, made["id"]).accepted_json(dict, "getting the sample memory")
    out.append(("$(get)", got))
    out += [("$(list).memories[?]", m) for m in client.listed(ctx, {"tags": client.run_tag(ctx) + ",sample"}) if m.get("id") == made["id"]]
    out += [("$(search).memories[?]", m) for m in client.found(ctx, {"q": key, "mode": "keyword"}) if m.get("id") == made["id"]]
    out += [("$(export).memories[?]", m) for m in client.exported(ctx) if m.get("id") == made["id"]]
    ctx.state(client.OmpRun).sample_request = request
    return out


def sample(ctx: CheckContext) -> list[tuple[str, dict[str, Any]]]:
    return ctx.once("omp_sample", lambda: _sample(ctx))


def _each(ctx: CheckContext, rule: Any) -> Iterator[Failure]:
    for where, mem in sample(ctx):
        yield from rule(mem, where)


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='id: string // Unique ID, format: "mem_" + 16 char alphanumeric')
def memory_id_format(ctx: CheckContext) -> Iterator[Failure]:
    yield from _each(ctx, rules.id_failures)


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='content: string // The memory text. Plain natural language. Max 10,000 chars.')
def memory_content_and_type(ctx: CheckContext) -> Iterator[Failure]:
    yield from _each(ctx, rules.content_type_failures)


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.')
def memory_tags_namespace_metadata(ctx: CheckContext) -> Iterator[Failure]:
    yield from _each(ctx, rules.organisation_failures)


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='created_at: string // ISO 8601 UTC timestamp')
def memory_timestamps_utc(ctx: CheckContext) -> Iterator[Failure]:
    yield from _each(ctx, rules.timestamp_failures)


@SUITE.check(section="§2.3", keyword="MUST", level="core",
           sentence='source: MemorySource // Where this memory came from (see §2.3)')
def memory_source_object(ctx: CheckContext) -> Iterator[Failure]:
    yield from _each(ctx, rules.source_failures)


def _same_instant(a: Any, b: Any) -> bool:
    return a == b or (rules.instant(a) is not None and rules.instant(a) == rules.instant(b))


def echo_failures(request: dict[str, Any], mem: dict[str, Any], where: str) -> Iterator[Failure]:
    for name in ("content", "type", "namespace", "metadata"):
        if name in request and mem.get(name) != request[name]:
            yield Failure(f"{name} is not what was written", mem.get(name, "<absent>"), request[name], f"{where}.{name}")
    if "tags" in request and sorted(mem.get("tags") or []) != sorted(request["tags"]):
        yield Failure("tags are not what was written", mem.get("tags"), request["tags"], f"{where}.tags")
    if "expires_at" in request and not _same_instant(mem.get("expires_at"), request["expires_at"]):
        yield Failure("expires_at is not what was written", mem.get("expires_at", "<absent>"), request["expires_at"], f"{where}.expires_at")
    source: dict[str, Any] = mem["source"] if isinstance(mem.get("source"), dict) else {}
    for name, value in request.get("source", {}).items():
        same = _same_instant(source.get(name), value) if name == "timestamp" else source.get(name) == value
        if not same:
            yield Failure(f"source.{name} is not what was written", source.get(name, "<absent>"), value, f"{where}.source.{name}")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Create a new memory.')
def create_returns_201(ctx: CheckContext) -> Iterator[Failure]:
    request = client.memory(ctx, "create", tags=["create"])
    answer = client.create(ctx, request)
    if answer.status != 201:
        yield Failure("create did not answer 201 Created", answer.status, 201, "$")
    if not answer.ok or not isinstance(answer.body, dict):
        yield Failure("create answered no memory object", answer.raw[:200], "the created Memory", "$")
        return
    yield from echo_failures(request, answer.body, "$(create)")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='session_id?: string // Optional session/conversation ID from the source tool')
def memory_reads_as_written(ctx: CheckContext) -> Iterator[Failure]:
    points = sample(ctx)
    request = ctx.state(client.OmpRun).sample_request
    seen = {where.split(".")[0] for where, _ in points}
    for where in ("$(get)", "$(list)", "$(search)", "$(export)"):
        if where not in seen:
            yield Failure(f"the memory just written is missing from {where[2:-1]}", "absent", request["content"], where)
    for where, mem in points:
        yield from echo_failures(request, mem, where)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='Response 404 Not Found: { "error": "memory_not_found" }')
def get_unknown_id_404(ctx: CheckContext) -> Iterator[Failure]:
    made = client.created(ctx, client.memory(ctx, "known"))
    controls.control(client.get(ctx, made["id"]), "getting a memory that exists")
    yield from rules.error_failures(ctx, client.get(ctx, client.new_id()), 404, "memory_not_found")


ARBITRARY_TAGS = ["Zürich Team", "UPPER case", "résumé", "e\u0301t\u00e9", "日本語", "emoji 🧠🚀", "with/slash:colon",
                  "tab\tand space", "quote\"s", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"]


@SUITE.check(section="§2.1", keyword="MUST", level="core",
           sentence='tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.')
def accepts_arbitrary_strings(ctx: CheckContext) -> Iterator[Failure]:
    """"Arbitrary tags": upper case, spaces, accents, combining marks, CJK, astral characters and
    punctuation are stored as written, and a list filter by such a tag finds the memory."""
    request = client.memory(ctx, "arbitrary", tags=ARBITRARY_TAGS, namespace="Project: Ünïcode 🧠",
                       content=f"{ctx.unique('arbitrary')} Ça va? 你好 — 🧠 e\u0301 \u200d «quotes» <b>&amp;</b>",
                       metadata={"memconform_run": ctx.run_id, "Schlüssel": "wert 🚀"})
    request["source"]["session_id"] = "Session 🚀 #1"
    answer = client.create(ctx, request)
    if not answer.ok or not isinstance(answer.body, dict) or not isinstance(answer.body.get("id"), str):
        yield Failure("a memory with arbitrary Unicode tags, namespace and content was refused", answer.brief(), 201, "$")
        return
    got = client.get(ctx, answer.body["id"]).accepted_json(dict, "getting the memory with arbitrary strings")
    yield from echo_failures(request, got, "$(get)")
    for tag in (ARBITRARY_TAGS[0], ARBITRARY_TAGS[5]):
        listed = ids(client.listed(ctx, {"tags": tag + "," + client.run_tag(ctx), "limit": "100"}))
        if answer.body["id"] not in listed:
            yield Failure(f"a list filter by the tag {tag!r} does not find the memory", len(listed), answer.body["id"], "$.memories")
