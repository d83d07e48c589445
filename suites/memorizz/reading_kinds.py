"""MemoRizz's reading kinds: the forms of request and answer in which its checks meet an open point (a row of
the table in readings.py meets one of these and predicts from its answer). Data only: the table and its
questions are in readings.py, TABLE in table.py."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memconform.kit import batch_failures
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import model

KEY_ORDERS = {"codepoint": "keys sorted by code points", "utf16": "keys sorted by UTF-16 code units"}


def export_request(selection: Mapping[str, Any]) -> model.ExportRequest:
    types = selection.get("types")
    return model.ExportRequest(selection.get("memory_id"), selection.get("agent_id"),
                               tuple(types) if isinstance(types, list | tuple) else None, selection.get("include_embeddings"))


@dataclass(frozen=True)
class Digests:
    """M2: an archive's canonical digest under each key order (they differ); the answer is the claimed digest."""

    by_order: Mapping[str, str]

    @classmethod
    def of(cls, archive: Mapping[str, Any]) -> Digests:
        return cls({order: hashlib.sha256(memorizz.canonical_bytes(dict(archive), order)).hexdigest() for order in KEY_ORDERS})


@dataclass(frozen=True)
class RuleProblem:
    """M4, M5, M8 in a document rule: a problem the scan found only under the reading `reading` ("M5:memorizz-
    includes-keys"); the answer is the problem's readings. The archive does not follow that reading: recorded as
    "not <reading>", a failure only where the option pins the reading."""

    reading: str


@dataclass(frozen=True)
class NaturalId:
    """M4: a cloned record's natural id field `natural` (a store the page does not name); `sent` its value in the
    archive, `new` the record's new id; the answer is the value exported after the clone."""

    natural: str
    sent: Any
    new: str


@dataclass(frozen=True)
class ClonedRecord:
    """M9 on one record: its memory_id as sent; the answer is the memory_id exported after the clone."""

    sent: Any


@dataclass(frozen=True)
class ClonedNamespace:
    """M9 on a namespace: the contents of the records cloned into it; the answer is the sorted contents of the
    records the namespace holds afterwards beside what it held before."""

    contents: tuple[str, ...]


@dataclass(frozen=True)
class ImportedAgent:
    """M10: an imported agent whose automations were sent enabled; the answer is {"automations_enabled": the
    flag (or "<absent>"), "automations": the `enabled` states of its list}."""


@dataclass(frozen=True)
class MiddleRecord:
    """M34: a restore whose middle record is of a class expected `expect`; the answer a `Restored`."""

    expect: str


@dataclass(frozen=True)
class Restored(batch_failures.BatchResult):
    """What a restore did (kit BatchResult), and whether a refused one reported its committed progress
    (`ok: false`, `imported` the number of its records present afterwards)."""

    progress: bool = False

    def partial_with_progress(self) -> bool:
        return not self.accepted and self.progress and any(self.stored) and not self.stored[self.middle]


@dataclass(frozen=True)
class OpenClass:
    """M35, M60: one class of the domain table the page leaves open (`field:class`); the answer: restored or not."""

    point: str
    key: str


@dataclass(frozen=True)
class ExportSelection:
    """M61: an export selecting `selection` (as sent) from the model's `state`; the answer (refused, the archive)."""

    state: model.State
    selection: Mapping[str, Any]

    def answers(self) -> tuple[model.ExportAnswer, ...]:
        return model.export_answers(self.state, export_request(self.selection))


@dataclass(frozen=True)
class PreviewUnderError:
    """M62: a preview of conflicts under conflict=error; the answer whether it said ok."""
