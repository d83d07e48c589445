"""OMP over HTTP: one function per endpoint, memories with run-unique content, and the facts of a target.

Checks never build requests themselves. Every exchange goes through the target's one seam,
`ctx.target.call(Request(...))`, with a route that returns every status, and comes back as a
`Reply` (status code, parsed body or None, raw bytes) so a check can judge a status code; the `*_ok`
helpers are for set-up steps, where anything but a 2xx JSON answer is the target erroring (the check
errors, it does not fail).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, HarnessError, SkipCheck, TargetError
from memconform.kit.shared_rules import now_iso
from memconform.suites.omp import format as omp
from memconform.targets import is_http
from memconform.targets.base import Reply, Request, Route

if TYPE_CHECKING:
    from memconform.targets.http import HttpTarget
from memconform.targets.nodelay import judge_stall

GLOBAL = "global"  # sentinel: the target's own API key (the client default)
OWN_TOOL = "memconform"
# exchanges the ~40 ms Nagle/delayed-ACK stall shows on (bytes sent and received), and the large
# answers of the same run that serve as its control (their full segments are never held back)
SMALL_BYTES = 2048
CONTROL_BYTES = 4096
MIN_STALL_SAMPLES = 20
_LOCK = threading.Lock()


@dataclass
class OmpRun:
    """What the OMP checks share during one run (ctx.state(OmpRun))."""

    exchanges: list[tuple[float, int, int]] = field(default_factory=list)  # (seconds, bytes sent, got): stalls
    sample_request: Any = None  # the sample memory's create request, for the shape checks
    level_note: str | None = None  # what health said of the level claimed
    cleanup_counts: tuple[int, int] | None = None  # (removed, left) by the sweep
    cleanup_registered: bool = False
    models: list[Any] = field(default_factory=list)  # the state machine's models, one per example



def http(ctx: CheckContext) -> HttpTarget:
    target = ctx.target
    if not is_http(target):
        raise SkipCheck(f"OMP is an HTTP API: it needs an http:// target (or reference:omp), not {target.kind!r} "
                        f"({target.description})", not_applicable=True)
    return target


def _prefix(target: HttpTarget) -> str:
    return "" if target.base_url.endswith(omp.BASE) else omp.BASE


def send(ctx: CheckContext, method: str, path: str, *, body: Any = None, raw: bytes | None = None,
         params: dict[str, str] | None = None, key: str | None = GLOBAL, record: bool = True,
         quiet: bool = False) -> Reply:
    """One request. key=GLOBAL uses the target's key, None sends no Authorization, a string sends that key."""
    target = http(ctx)
    headers: dict[str, str] = {}
    if key not in (GLOBAL, None):
        headers["Authorization"] = f"Bearer {key}"
    route = Route(method, _prefix(target) + path, statuses="returned")
    reply = target.call(Request(f"{method} {path}", body=body, raw=raw, params=params, headers=headers, route=route,
                                auth=key is not None))
    # failures name the OMP path as the spec writes it (without the base the target was given)
    reply = dataclasses.replace(reply, path=path + (f"?{_query(params)}" if params else ""))
    if record:
        sent = len(raw) if raw is not None else len(json.dumps(body)) if body is not None else 0
        with _LOCK:
            ctx.state(OmpRun).exchanges.append((reply.elapsed_s, sent, len(reply.raw)))
    if not quiet:
        ctx.note(reply.brief())
    return reply


def preflight_send(ctx: CheckContext, method: str, path: str, **kw: Any) -> Reply:
    """A request of the suite's preflight: a target that cannot answer it is one harness error line."""
    try:
        return send(ctx, method, path, **kw)
    except TargetError as exc:
        raise HarnessError(f"the OMP preflight could not reach the target: {exc}") from None


def _query(params: dict[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in params.items())


# ---- endpoints ---------------------------------------------------------------------------------

def create(ctx: CheckContext, memory: dict[str, Any], key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "POST", "/memories", body=memory, key=key, **kw)


def created(ctx: CheckContext, memory: dict[str, Any], key: str | None = GLOBAL) -> dict[str, Any]:
    body: dict[str, Any] = create(ctx, memory, key).accepted_json(dict, "creating a memory")
    if not isinstance(body.get("id"), str):
        raise TargetError(f"a created memory has no string id: {body!r:.200}")
    return body


def get(ctx: CheckContext, mem_id: str, key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "GET", f"/memories/{mem_id}", key=key, **kw)


def update(ctx: CheckContext, mem_id: str, patch: Any, key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "PUT", f"/memories/{mem_id}", body=patch, key=key, **kw)


def delete(ctx: CheckContext, mem_id: str, key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "DELETE", f"/memories/{mem_id}", key=key, **kw)


def list_(ctx: CheckContext, params: dict[str, str] | None = None, key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "GET", "/memories", params=params, key=key, **kw)


def page_memories(answer: Reply, what: str) -> list[dict[str, Any]]:
    """The memories of a list or search page that must succeed; anything else stops the check."""
    body = answer.accepted_json(dict, what)
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"{what} answered no memories array: {body!r:.200}")
    return [m for m in body["memories"] if isinstance(m, dict)]


def listed(ctx: CheckContext, params: dict[str, str], key: str | None = GLOBAL) -> list[dict[str, Any]]:
    return page_memories(list_(ctx, params, key), f"listing memories {params}")


def search(ctx: CheckContext, query: dict[str, Any], key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "POST", "/memories/search", body=query, key=key, **kw)


def found(ctx: CheckContext, query: dict[str, Any], key: str | None = GLOBAL) -> list[dict[str, Any]]:
    return page_memories(search(ctx, query, key), f"searching {query}")


def export(ctx: CheckContext, key: str | None = GLOBAL, **kw: Any) -> Reply:
    return send(ctx, "GET", "/export", key=key, **kw)


def exported(ctx: CheckContext, key: str | None = GLOBAL) -> list[dict[str, Any]]:
    body = export(ctx, key, record=False).accepted_json(dict, "exporting")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"the export has no memories array: {body!r:.200}")
    return [m for m in body["memories"] if isinstance(m, dict)]


def import_(ctx: CheckContext, doc: Any, conflict: str | None = None, key: str | None = GLOBAL, **kw: Any) -> Reply:
    """POST /v1/import; the strategy goes where option conflict_in says (errata O1)."""
    params = None
    if conflict is not None:
        if ctx.option("conflict_in") == "body" and isinstance(doc, dict):
            doc = dict(doc, conflict=conflict)
        else:
            params = {"conflict": conflict}
    return send(ctx, "POST", "/import", body=doc, params=params, key=key, record=False, **kw)


def health(ctx: CheckContext, key: str | None = None) -> Reply:
    return send(ctx, "GET", "/health", key=key)


def _no_provider_key(body: dict[str, Any]) -> dict[str, Any]:
    """The harness never hands a target an AI provider key (errata O11)."""
    if "api_key" in body:
        raise HarnessError("extract/compress bodies never carry an api_key")
    return body


def extract(ctx: CheckContext, body: dict[str, Any], key: str | None = GLOBAL) -> Reply:
    return send(ctx, "POST", "/extract", body=_no_provider_key(body), key=key)


def compress(ctx: CheckContext, body: dict[str, Any], key: str | None = GLOBAL) -> Reply:
    return send(ctx, "POST", "/compress", body=_no_provider_key(body), key=key)


# ---- memories the suite writes: run-unique content and a run tag -------------------------------


def run_tag(ctx: CheckContext) -> str:
    return f"mc-{ctx.run_id}"


def word() -> str:
    """A token no other memory holds: letters and digits only, so every tokenizer keeps it whole."""
    return "w" + uuid.uuid4().hex[:14]


def new_id() -> str:
    return "mem_" + uuid.uuid4().hex[:16]


def memory(ctx: CheckContext, label: str, *, tool: str = OWN_TOOL, tags: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    """A create body whose content no other run and no other check writes."""
    body: dict[str, Any] = {
        "content": fields.pop("content", None) or f"{ctx.unique(label)} memconform probe",
        "type": fields.pop("type", "semantic"),
        "source": {"tool": tool, "timestamp": now_iso(-60)},
        "tags": [run_tag(ctx), *(tags or [])],
        "expires_at": None,
        "metadata": {"memconform_run": ctx.run_id},
    }
    body.update(fields)
    return body


def full_memory(ctx: CheckContext, label: str, **fields: Any) -> dict[str, Any]:
    """A whole Memory object (with id and timestamps) for import files."""
    stamp = fields.pop("created_at", now_iso(-3600))
    body = memory(ctx, label, **fields)
    return {"id": fields.get("id") or new_id(), **body, "created_at": stamp, "updated_at": stamp}


def export_file(memories: list[dict[str, Any]]) -> dict[str, Any]:
    return {"omp_version": omp.VERSION, "exported_at": now_iso(), "server": "memconform", "memories": memories}


def with_marker(memories: list[dict[str, Any]], marker: str) -> list[dict[str, Any]]:
    return [m for m in memories if isinstance(m.get("content"), str) and marker in m["content"]]


def run_state(ctx: CheckContext) -> dict[str, str]:
    """This run's memories in the export, id -> canonical JSON: what `nothing stored/lost` compares."""
    return {str(m.get("id")): json.dumps(m, sort_keys=True) for m in with_marker(exported(ctx), ctx.run_id)}


def state_changes(before: dict[str, str], after: dict[str, str], what: str) -> Iterator[Failure]:
    added = sorted(set(after) - set(before))
    lost = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    if added:
        yield Failure(f"{what}: memories were stored", [json.loads(after[k]).get("content", "")[:80] for k in added[:5]],
                      "nothing stored", "$.memories", f"{len(added)} new memories of this run in the export")
    if lost:
        yield Failure(f"{what}: memories were lost", lost[:5], "every existing memory kept", "$.memories")
    if changed:
        yield Failure(f"{what}: existing memories changed", changed[:5], "unchanged", "$.memories")


# ---- what a target states about itself ---------------------------------------------------------

def facts(ctx: CheckContext) -> omp.TargetFacts:
    """The target's own facts (reference, mutants) or the user's options; every key is redacted."""
    def build() -> omp.TargetFacts:
        stated = ctx.target.stated_facts("omp")
        if stated is None:
            path = ctx.option("credentials")
            creds = omp.Credentials.from_file(path) if path else None
            ai = ctx.option("ai_endpoints")
            stated = omp.TargetFacts(ai_key_configured=False if ai == "no-key" else None, credentials=creds)
        if stated.credentials:
            for secret in stated.credentials.secrets():
                ctx.add_secret(secret)
        return stated
    return ctx.once("omp_facts", build)


def credentials(ctx: CheckContext, need_other_user: bool = False) -> omp.Credentials:
    creds = facts(ctx).credentials
    if creds is None or not creds.tool_keys:
        raise SkipCheck("no per-tool keys known: pass --option omp.credentials=FILE with {\"tool_keys\": {TOOL: KEY}}")
    if need_other_user and not creds.other_user_key:
        raise SkipCheck("no second user's key known: add \"other_user_key\" to the omp.credentials file")
    return creds


# ---- the ~40 ms stall of small requests without TCP_NODELAY ------------------------------------

def nodelay_stall(latencies: list[float], control: list[float] | None = None) -> str | None:
    """The note when small requests stall ~40 ms (harness/targets/nodelay.py), judged against the large
    answers of the same run; it says how sure it is. A note, never a verdict."""
    note = judge_stall(latencies, control or [])
    return note.text() if note else None


def stall_samples(ctx: CheckContext) -> tuple[list[float], list[float]]:
    """(small exchanges, large answers) of this run, in seconds."""
    with _LOCK:
        exchanges = list(ctx.state(OmpRun).exchanges)
    small = [e for e, sent, got in exchanges if sent + got <= SMALL_BYTES and e]
    control = [e for e, _, got in exchanges if got >= CONTROL_BYTES and e]
    return small, control


def run_notes(ctx: CheckContext) -> list[str]:
    """The run-level note for the report footer: the stall over every request of the run."""
    stall = nodelay_stall(*stall_samples(ctx))
    return [stall] if stall else []


def latency_note(ctx: CheckContext) -> None:
    small, control = stall_samples(ctx)
    if small:
        ctx.note(f"median latency of {len(small)} small requests so far: {statistics.median(small) * 1000:.1f} ms")
    stall = nodelay_stall(small, control)
    if stall:
        ctx.note(stall)
