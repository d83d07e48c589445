"""The examples of MemoryAI's table of readings (suites/memoryai/readings.py): a request meeting each point, an
answer per reading, and one no reading allows. Those made of the model's state and the batch predictions are made
when a row of theirs is built (`model_examples`), so judging a bundle's checksum imports neither."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reading_kinds import (
    ChecksumCase,
    ContentHash,
    InvalidChunks,
    MiddleItem,
    Reimport,
    ScopedExport,
)

# ---- the examples: a request meeting each point, an answer per reading, and one no reading allows ----------
# (tests/test_memoryai_one_table.py asks every check a row names to accept the first and refuse the second)

SINCE = "2026-06-29T12:00:00Z"


def example_chunk(content: str, created_at: str = "2026-01-01T00:00:00Z", **fields: Any) -> dict[str, Any]:
    return {"content": content, "memory_type": "fact", "content_hash": memoryai.content_hash(content),
            "created_at": created_at, "accessed_at": created_at, **fields}


def example_bundle(chunks: Iterable[Mapping[str, Any]], entities: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    return {"format": memoryai.FORMAT, "version": 1, "generator": "memconform table", "exported_at": "2026-07-01T00:00:00Z",
            "manifest": {"scope": "full", "since": None, "embedding_model": "none", "embedding_dim": 0,
                         "counts": {"chunks": len(list(chunks))}, "checksum": ""},
            "chunks": [dict(c) for c in chunks], "entities": [dict(e) for e in entities]}


# E1: non-ASCII text and a float, so each reading gives its own digest
CHECKSUMMED = ChecksumCase(example_bundle([example_chunk("café au lait", importance=1.0)]))
NFC_CONTENT = ContentHash("cafe\u0301")  # NFC makes it "café"
REIMPORT = Reimport(example_bundle([example_chunk("reimported")], [{"name": "reimported entity", "frequency": 2,
                                                                    "first_seen": "2026-01-01T00:00:00Z",
                                                                    "last_seen": "2026-01-02T00:00:00Z", "is_dna": False}]),
                    "reimported entity")
_GOOD = [example_chunk("kept a"), example_chunk("kept b")]
_AROUND = {name: example_chunk(f"since {name}", at) for name, at in
           (("before", "2026-06-29T11:59:59Z"), ("at", SINCE), ("after", "2026-06-29T12:00:01Z"))}


def around(*names: str) -> frozenset[str]:
    """The hashes of the example chunks created before, at or after SINCE."""
    return frozenset(_AROUND[n]["content_hash"] for n in names)


MIDDLE_OPEN = MiddleItem("open")


@cache
def model_examples() -> dict[str, Any]:
    """The examples made of the model's state and the batch predictions, made when a row of theirs is built (a
    bundle's checksum needs neither); module attributes of these names still answer (`__getattr__`)."""
    from memconform.kit import batch_failures
    from memconform.suites.memoryai import model

    state = model.State(chunks={c["content_hash"]: c for c in _AROUND.values()})
    return {
        "INVALID_CHUNKS": InvalidChunks(model.State(), example_bundle([_GOOD[0], {"memory_type": "fact"}, _GOOD[1]]),
                                        frozenset(c["content_hash"] for c in _GOOD)),
        "SINCE_EXPORT": ScopedExport(state, "since", SINCE),
        "SINCE_BESIDE_FULL": ScopedExport(state, "full", SINCE),
        "STOPPED_MIDWAY": batch_failures.BatchResult(accepted=True, reported=False, stored=(True, True, False, False, False)),
        "BATCH_ANSWERS": {batch_failures.ALL: batch_failures.BatchResult(True, False, (True,) * 5),
                          batch_failures.REPORTED: batch_failures.BatchResult(True, True, (True, True, False, True, True)),
                          batch_failures.REFUSED: batch_failures.BatchResult(False, False, (False,) * 5)},
    }


def stream_example(key: str, wrapped: str | None) -> dict[str, Any]:
    record = {"content": "streamed", "memory_type": "fact"}
    return {key: "chunk", wrapped: record} if wrapped else {key: "chunk", **record}
