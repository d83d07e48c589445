"""The MemoryAI reference brain's storage: the SQLite schema, the tenant, and the helpers both the
producer (producer.py) and the consumer (consumer.py) rules use."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from datetime import UTC, datetime
from typing import Any, TypeGuard

from memconform.kit.shared_rules import parse_datetime
from memconform.suites.memoryai.format import MAX_VERSION

GENERATOR = "memconform-reference/0.1"
LOCAL_MODEL = "memconform-hash-384"
LOCAL_DIM = 384
BLOB_SECTIONS = ("l2_sessions", "mood_states", "agents")


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _ts(value: Any) -> datetime | None:
    return parse_datetime(value, "memoryai")


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class BrainStore:
    """One SQLite database (chunks, edges, entities, opaque blob sections) and the local tenant."""

    generator = GENERATOR
    export_filename = "memoryai-brain.json"  # served as the export's Content-Disposition (§6)
    embedding_model = LOCAL_MODEL
    embedding_dim = LOCAL_DIM

    def __init__(self, path: str = ":memory:") -> None:
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL,
                                               deleted INTEGER NOT NULL DEFAULT 0, doc TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS chunks_hash ON chunks (content_hash);
            CREATE TABLE IF NOT EXISTS edges (chunk_a INTEGER, chunk_b INTEGER, edge_type TEXT, doc TEXT NOT NULL,
                                              PRIMARY KEY (chunk_a, chunk_b, edge_type));
            CREATE TABLE IF NOT EXISTS entities (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS blobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, section TEXT, doc TEXT NOT NULL);
            """
        )
        row = self.db.execute("SELECT value FROM meta WHERE key='tenant_id'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('tenant_id', ?)", (str(uuid.uuid4()),))
            self.db.commit()
            row = self.db.execute("SELECT value FROM meta WHERE key='tenant_id'").fetchone()
        self.tenant_id: str = row[0]
        self.tenant_name: str | None = "memconform reference"
        self.tenant_plan: str | None = "reference"

    def _max_version(self) -> int:
        """The newest bundle version the consumer accepts; spec() announces it."""
        return MAX_VERSION

    def close(self) -> None:
        with self.lock:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
