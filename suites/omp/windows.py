"""OMP in windows: an export document's `memories` judged a window at a time, with the findings the
whole-document path reports (tests/test_windowed_validate.py holds them equal).

Every memory rule of checks/export_document.py judges one memory on its own: each runs on each window as
it is read and its findings, re-indexed, are handed back when the check runs. What only the whole export
shows, ids unique across it, is kept here: the first place of each id, reported as the whole-document
check reports a repeat (after the per-memory findings). The envelope check runs on the WindowedDocument
itself (`memories` stands there as an array of its length). A check this plan does not know: the file is
read whole."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from memconform.core.results import Failure
from memconform.kit.windows import NotWindowable
from memconform.kit.windows.plan import Found, PlanContext, Rereader, WindowPlan, replayed

SECTION = "memories"
ENVELOPE_CHECK = "export_document_envelope"
IDS_CHECK = "export_document_memory_ids"
MEMORY_CHECKS = {"export_document_memory_ids", "export_document_content_and_type",
                 "export_document_tags_namespace_metadata", "export_document_timestamps_utc",
                 "export_document_source_object", "export_document_embedding"}
_INDEX = re.compile(r"^\$\.memories\[(\d+)\]")


def _shifted(failure: Failure, first: int) -> Failure:
    if not first or not _INDEX.match(failure.path or ""):
        return failure
    path = _INDEX.sub(lambda m: f"$.memories[{int(m[1]) + first}]", failure.path, count=1)
    return dataclasses.replace(failure, path=path)


class OmpWindows(WindowPlan):
    sections = (SECTION,)

    def __init__(self, context: PlanContext) -> None:
        super().__init__(context)
        names = {c.id.split(".", 1)[1]: c for c in context.checks}
        unknown = set(names) - MEMORY_CHECKS - {ENVELOPE_CHECK}
        if unknown:  # a check added since may walk the memories: only the whole document is known to serve it
            raise NotWindowable(f"checks this plan does not know: {sorted(unknown)}")
        self.by_name = names
        self.found = {name: Found() for name in names if name in MEMORY_CHECKS}
        self.first_at: dict[str, str] = {}  # each memory id -> where it first stood
        self.repeats: list[Failure] = []

    def begin(self, envelope: dict[str, Any]) -> None:
        self.context.ctx.document = envelope  # a given document, not a target's export: checks judge it as it is

    def window(self, section: str, first: int, items: list[Any]) -> None:
        from memconform.suites.omp import rules
        from memconform.suites.omp.export_memories import each_memory

        doc = {SECTION: items}
        ctx = self.context.ctx
        for name, found in self.found.items():
            if found.raised is not None:
                continue
            ctx.check_id = self.by_name[name].id  # readings name the check that saw them
            try:
                if name == IDS_CHECK:  # its per-memory part; the repeats are counted across windows below
                    failures = each_memory(doc, ctx, rules.id_failures)
                else:
                    failures = self.by_name[name].fn(doc, ctx)
                found.failures += (_shifted(failure, first) for failure in failures)
            except Exception as exc:  # noqa: BLE001 - raised again when the check runs, where the runner judges it
                found.raised = exc
            finally:
                ctx.check_id = ""
        if IDS_CHECK in self.found:
            for i, mem in enumerate(items, first):
                if isinstance(mem, dict) and isinstance(mem.get("id"), str):
                    where = f"$.memories[{i}]"
                    if mem["id"] in self.first_at:
                        self.repeats.append(Failure("two memories of the export have one id", mem["id"],
                                                    f"unique (first at {self.first_at[mem['id']]})", f"{where}.id"))
                    self.first_at.setdefault(mem["id"], where)

    def finish(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader,
               late: list[Any]) -> dict[str, Any]:
        if IDS_CHECK in self.found:
            self.found[IDS_CHECK].failures += self.repeats
            self.first_at.clear()
        return {}

    def checks(self, checks: list[Any]) -> list[Any]:
        return [check if (found := self.found.get(check.id.split(".", 1)[1])) is None
                else dataclasses.replace(check, fn=replayed(found)) for check in checks]


WINDOW_PLAN = OmpWindows
