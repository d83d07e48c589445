"""What a suite declares for the interop-hole sweep (harness/matrix/interop_sweep.py): the fields a producer
writes and a consumer reads (domain-table operations), a document a producer wrote carrying one class's value
(judged by the suite's own document checks), and the suite's expectation of a consumer meeting that class
(the import check's own word). A suite names its pairing with `SuiteSpec.interop`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .domain import Field, ValueClass


@dataclass(frozen=True)
class Pairing:
    """`document(field, vc, value)`: a document holding the value where a producer writes it, every other field
    valid (None: this pairing places no such field); `expectation(vc)`: "valid" (a consumer must ingest it),
    "invalid" (must refuse it) or "open" (either, the answer recorded), as the consumer's check expects;
    `consumer_checks(field)`: the checks that judge a consumer meeting the field's classes."""

    suite: str
    producer_operation: str
    consumer_operation: str
    document: Callable[[Field, ValueClass, Any], Any]
    expectation: Callable[[ValueClass], str]
    consumer_checks: Callable[[Field], tuple[str, ...]]

    def shared(self, field: Field) -> bool:
        """A producer writes the field and a consumer reads it."""
        return self.producer_operation in field.operations and self.consumer_operation in field.operations
