"""What a suite declares for the interop-hole sweep (harness/matrix/interop_sweep.py): the fields a producer
writes and a consumer reads (domain-table operations), a document a producer wrote carrying one class's value
(judged by the suite's own document checks), and the suite's expectation of a consumer meeting that class
(the import check's own word). A suite names its pairing with `SuiteSpec.interop`; its builders are the ones its
consumer checks send, so both sides are judged on the same document."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .domain import Field, ValueClass


@dataclass(frozen=True)
class Pairing:
    """`documents(field, vc)`: the documents holding the class's values where a producer writes them, every other
    field valid (one per value, or one for a pair class whose values travel together); `expectation(vc)`: "valid" (a consumer must ingest it),
    "invalid" (must refuse it) or "open" (either, the answer recorded), as the consumer's check expects;
    `consumer_checks(field)`: the checks that judge a consumer meeting the field's classes."""

    suite: str
    producer_operation: str
    consumer_operation: str
    documents: Callable[[Field, ValueClass], list[Any]]
    expectation: Callable[[ValueClass], str]
    consumer_checks: Callable[[Field], tuple[str, ...]]
    fields: frozenset[str] | None = None  # the fields `documents` places (None: every field both sides meet)

    def shared(self, field: Field) -> bool:
        """A producer writes the field and a consumer reads it (and `documents` places it)."""
        return (self.producer_operation in field.operations and self.consumer_operation in field.operations
                and (self.fields is None or field.id in self.fields))


class UniqueNames:
    """What a check's document builders ask of its context when a pairing calls them: names unique within one
    document (`ctx.unique`), and nothing else."""

    def __init__(self, prefix: str = "interop") -> None:
        self.prefix = prefix
        self.made = 0

    def unique(self, label: str) -> str:
        self.made += 1
        return f"{self.prefix}-{label}-{self.made}"


def check_module(suite: str, check_id: str) -> ModuleType:
    """The module of a registered check, reached through its registration: a pairing builds its documents with
    the very builders its consumer check sends, without importing a check module out of its turn (the suite
    loads every check first, in the order its checks package lists them)."""
    from ..core.registry import REGISTRY
    from ..core.suite import get_suite

    get_suite(suite).load_checks()
    [check] = [c for c in REGISTRY.for_suite(suite) if c.id == check_id]
    return sys.modules[check.fn.__module__]
