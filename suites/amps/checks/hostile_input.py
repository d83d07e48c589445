"""Consumer: the hostile-JSON battery (memconform.kit.hostile) against import_export, nothing stored.

Each input is an export for one subject unique to the check, holding its own marker in an atom's
text; after the battery, that subject's export must hold the control's marker and no must-reject
input's marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.kit.hostile_check import Surface, run_battery, send_bytes, speaks_http
from memconform.suites.amps.client import forget_subject_at_end, make_atom, make_export
from memconform.suites.amps.suite import SUITE


@SUITE.check(section="Reference implementation", keyword="SHOULD", level="consumer",
       sentence="Enough to reject malformed exports and hand you a typed payload.")
def hostile_json_refused(ctx: CheckContext) -> Iterator[Failure]:
    subject = ctx.unique("hostile-subject")
    forget_subject_at_end(ctx, subject)

    def make(marker: str) -> dict[str, Any]:
        return make_export(subject, [make_atom(ctx, "hostile", text=f"Probe fact {marker}.")], [])

    def stored() -> bytes:
        reply = ctx.target.call("export", {"subject_id": subject})
        if not reply.ok:
            raise TargetError(f"export was refused: {reply.raw[:200]!r}")
        return bytes(reply.raw)

    yield from run_battery(ctx, Surface("import_export", make, lambda item: send_bytes(ctx, "import_export", item),
                                        stored, http=speaks_http(ctx)), each_kind_once=True)
