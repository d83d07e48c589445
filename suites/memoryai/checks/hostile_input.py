"""Consumer: the hostile-JSON battery (memconform.kit.hostile) against import_bundle and import_file.

Each input is a sealed one-chunk Bundle whose chunk content holds the input's own marker; after
the battery, a full export must hold the control's marker and no must-reject input's marker. The
chunks are deleted at the end of the run where the target offers deletion (client.remember_written).
Reading: the spec asks for no particular refusal of a body that is not a Bundle; the check takes
"a single JSON document" to mean that anything else is refused and nothing of it stored (SHOULD).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.kit.hostile_check import Surface, run_battery, send_bytes, speaks_http
from memconform.suites.memoryai import client
from memconform.suites.memoryai.suite import SUITE


def _maker(ctx: CheckContext) -> Any:
    def make(marker: str) -> dict[str, Any]:
        doc = client.bundle(ctx, [client.chunk(ctx, "hostile", content=f"{marker} — unique memory ✓ 記憶 🧠")])
        client.remember_written(ctx, doc)
        return doc
    return make


def _stored(ctx: CheckContext) -> bytes:
    reply = ctx.target.call("export", client.export_body(ctx, "full"))
    if not reply.ok:
        raise TargetError(f"export was refused: {reply.raw[:200]!r}")
    return bytes(reply.raw)


@SUITE.check(section="§3", keyword="SHOULD", level="2",
       sentence="A Bundle is a single JSON document with this top-level shape:")
def hostile_json_refused(ctx: CheckContext) -> Iterator[Failure]:
    yield from run_battery(ctx, Surface("import_bundle", _maker(ctx), lambda item: send_bytes(ctx, "import_bundle", item),
                                        lambda: _stored(ctx), http=speaks_http(ctx)), each_kind_once=True)


@SUITE.check(section="§3", keyword="SHOULD", level="http",
       sentence="A Bundle is a single JSON document with this top-level shape:")
def hostile_json_file_refused(ctx: CheckContext) -> Iterator[Failure]:
    def send(item: Any) -> Any:
        field = ctx.state(client.MemoryaiRun).multipart or ctx.option("multipart_field")
        field = "file" if field == "either" else field
        return send_bytes(ctx, "import_file", item, filename="bundle.json", params={"_field": field})

    yield from run_battery(ctx, Surface("import_file", _maker(ctx), send, lambda: _stored(ctx), bytes_native=True),
                           each_kind_once=True)
