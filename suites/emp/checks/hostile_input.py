"""Writer: the hostile-JSON battery (memconform.kit.hostile) against append, no bad line written.

The battery's bytes stand for the entry inside the request, spliced in verbatim: {"path": P,
"entry": <bytes>}, so the target's own JSON reader meets them. Each input is an entry whose content
holds its own marker. Storage is read from the file itself: a must-reject input is "stored anyway"
when its marker is on a line of the file that is not a valid entry (not strict JSON, or breaking a
field rule). Reading, as in writer_validates_before_writing: a writer may refuse an entry or write
it repaired (valid); only writing it as given is a failure. The spec defines no answer to bad input,
so a refusal by any means (a crash exit included) that wrote nothing is accepted and a crash is noted;
`--option emp.hostile_refusal=clear` pins memconform's advice, a clear rejection (errata E15).
Under ci one input of every kind is sent (an EMP writer is often a command started per call).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit.hostile import BadInput, StrictJsonError, strict_loads
from memconform.kit.hostile_check import Surface, run_battery, send_bytes, speaks_http
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.common import entry, new_file, read_bytes
from memconform.suites.emp.suite import SUITE


def bad_lines(raw: bytes) -> bytes:
    """The lines of a file that are not valid entries."""
    out = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = strict_loads(line)
            valid = isinstance(value, dict) and not emp.hard_errors(value)
        except StrictJsonError:
            valid = False
        if not valid:
            out.append(line)
    return b"\n".join(out)


@SUITE.check(level="writer", section="Best Practices", keyword="SHOULD", sentence="Validate entries: Check schema before writing")
def hostile_json_refused(ctx: CheckContext) -> Iterator[Failure]:
    path = new_file(ctx)
    head = b'{"path": ' + json.dumps(path).encode() + b', "entry": '

    def make(marker: str) -> dict[str, Any]:
        return entry(ctx, "hostile", content=f"{marker} ✓ caf\u00e9")

    def send(item: BadInput) -> Any:
        return send_bytes(ctx, "append", replace(item, data=head + item.data + b"}"))

    def stored() -> bytes:
        # the control is the first line written: valid, so kept whole; after it, only the bad lines count
        first, _, rest = read_bytes(path).partition(b"\n")
        return first + b"\n" + bad_lines(rest)

    yield from run_battery(ctx, Surface("append", make, send, stored, http=speaks_http(ctx)),
                           crashes_blamed=ctx.option("hostile_refusal") == "clear", each_kind_once=True)
