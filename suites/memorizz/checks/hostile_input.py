"""Consumer: the hostile-JSON battery (memconform.kit.hostile) against import_archive, nothing written.

The battery's bytes stand for the archive inside the request envelope, spliced in verbatim:
{"mode": "restore", "conflict": "error", "archive": <bytes>}, so the target's own JSON reader meets
them. Each input is a sealed two-record archive in one namespace unique to the check, its note's
prose holding the input's marker; afterwards an export of that namespace must hold the control's
marker and no must-reject input's marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.kit.hostile import BadInput
from memconform.kit.hostile_check import Surface, run_battery, send_bytes, speaks_http
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.client import forget_namespaces_at_end
from memconform.suites.memorizz.sentences import REJECTS
from memconform.suites.memorizz.suite import SUITE

ENVELOPE = b'{"mode": "restore", "conflict": "error", "archive": '


@SUITE.check(section="Validation", keyword="SHOULD", level="consumer", sentence=REJECTS)
def hostile_json_refused(ctx: CheckContext) -> Iterator[Failure]:
    ns = ctx.unique("hostile-ns")
    forget_namespaces_at_end(ctx, ns)

    def make(marker: str) -> dict[str, Any]:
        agent, note = ctx.unique("hostile-agent"), ctx.unique("hostile-kb")
        archive = memorizz.empty_archive(source_provider="memconform-probe")
        archive["stores"]["agents"].append({"id": agent, "data": {"agent_id": agent, "memory_ids": [ns], "delegates": [],
                                                                  "content": ctx.unique("agent-prose")}})
        archive["stores"]["knowledge_base"].append({"id": note, "data": {"id": note, "memory_id": ns,
                                                                          "content": f"{marker} prose ☂"}})
        return memorizz.seal(archive)

    def send(item: BadInput) -> Any:
        return send_bytes(ctx, "import_archive", replace(item, data=ENVELOPE + item.data + b"}"))

    def stored() -> bytes:
        reply = ctx.target.call("export", {"memory_id": ns})
        if not reply.ok:
            raise TargetError(f"export was refused: {reply.raw[:200]!r}")
        return bytes(reply.raw)

    # under ci one input of every kind: a MemoRizz consumer is often a command started per call (its CLI)
    yield from run_battery(ctx, Surface("import_archive", make, send, stored, http=speaks_http(ctx)), each_kind_once=True)
