"""Storage of the OMP reference: SQLite (one connection behind a lock), FTS5 for keyword search,
and a small local embedding for semantic search.

The embedding is a sparse bag-of-words vector over exact lower-cased words (unit length): lexical,
not a language model. It is computed here, never downloaded, and labelled as such in health and
suites/omp/errata.md. (A 64-bucket hashed variant was tried first: its collisions let unrelated short
memories outrank the one sharing the query's rare word, so ranking was not dependable.)
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memconform.kit.shared_rules import parse_datetime

EMBED_LABEL = "memconform-bow: sparse bag-of-words vectors of exact words (lexical, not a language model)"
WORD_RE = re.compile(r"[^\W_]+")  # a maximal run of letters/digits, Unicode-aware (errata O2)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    id TEXT NOT NULL,
    content TEXT NOT NULL,
    type TEXT NOT NULL,
    tool TEXT NOT NULL,
    namespace TEXT,
    created_key INTEGER NOT NULL,
    updated_key INTEGER NOT NULL,
    tags TEXT NOT NULL,
    embedding TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (user, id)
);
CREATE INDEX IF NOT EXISTS memories_created ON memories (user, created_key);
CREATE INDEX IF NOT EXISTS memories_updated ON memories (user, updated_key);
CREATE INDEX IF NOT EXISTS memories_namespace ON memories (user, namespace, created_key);
CREATE TABLE IF NOT EXISTS audit (
    at TEXT NOT NULL, user TEXT NOT NULL, key_name TEXT NOT NULL, op TEXT NOT NULL, memory_id TEXT
);
"""

_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, content='memories', content_rowid='seq', tokenize='unicode61 remove_diacritics 0'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
"""

SORT_SQL = {
    "created_at_desc": "created_key DESC, seq DESC",
    "created_at_asc": "created_key ASC, seq ASC",
    "updated_at_desc": "updated_key DESC, seq DESC",
}


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD_RE.findall(text)]


def embed(text: str) -> dict[str, float]:
    counts = Counter(words(text))
    norm = math.sqrt(sum(c * c for c in counts.values()))
    return {w: c / norm for w, c in counts.items()} if norm else {}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(b) < len(a):
        a, b = b, a
    return sum(x * b.get(w, 0.0) for w, x in a.items())  # both are unit vectors (or empty)


def parse_utc(value: Any) -> int | None:
    """Microseconds since the epoch of an ISO 8601 UTC timestamp (Z or +00:00), else None."""
    when = parse_datetime(value, "omp")
    return None if when is None else int(when.timestamp()) * 1_000_000 + when.microsecond


def sort_key(value: Any) -> int:
    """A lenient sort key for any stored timestamp (a mutant may store non-UTC offsets)."""
    key = parse_utc(value)
    if key is not None:
        return key
    try:
        dt = datetime.fromisoformat(str(value))
    except ValueError:
        return 0
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1_000_000)


def format_utc(micros: int) -> str:
    dt = datetime.fromtimestamp(micros // 1_000_000, UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{(micros % 1_000_000) // 1000:03d}Z"


@dataclass
class Scope:
    """Whose memories a request sees: one user, and for a per-tool key only that tool's."""

    user: str
    tool: str | None = None


@dataclass
class Filters:
    type: str | None = None
    tool: str | None = None
    tags: tuple[str, ...] = ()
    tags_match: str = "all"  # "all" (AND, §3.3) or "any"
    namespace: str | None = None


class OmpStore:
    """Memories as JSON documents, with derived columns for filters, sorting, FTS and embeddings."""

    def __init__(self, path: str = ":memory:") -> None:
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL" if path != ":memory:" else "PRAGMA journal_mode=MEMORY")
        self.db.executescript(_SCHEMA)
        try:
            self.db.executescript(_FTS)
            self.fts = True
        except sqlite3.OperationalError:  # no FTS5 in this sqlite3: keyword search scans (same verdicts)
            self.fts = False
        self._last_micros = 0
        self._depth = 0

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the lock and one SQLite transaction: a read-modify-write inside is atomic."""
        with self.lock:
            outer = self._depth == 0
            if outer:
                self.db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self.db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self.db.execute("COMMIT")

    def next_micros(self, after: int = 0) -> int:
        """Now, in whole milliseconds, strictly later than every value handed out before and than `after`."""
        with self.lock:
            now = int(datetime.now(UTC).timestamp() * 1000) * 1000
            value = max(now, self._last_micros + 1000, after - after % 1000 + 1000)
            self._last_micros = value
            return value

    # --- rows ---------------------------------------------------------------------------------

    def _columns(self, doc: dict[str, Any]) -> tuple[Any, ...]:
        source = doc.get("source")
        source = source if isinstance(source, dict) else {}
        return (
            doc["id"], str(doc.get("content", "")), str(doc.get("type", "")), str(source.get("tool", "")),
            doc.get("namespace"), sort_key(doc.get("created_at")), sort_key(doc.get("updated_at")),
            json.dumps(doc.get("tags") or [], ensure_ascii=False),
            json.dumps(embed(str(doc.get("content", ""))), ensure_ascii=False),
            json.dumps(doc, ensure_ascii=False),
        )

    def insert(self, user: str, doc: dict[str, Any]) -> None:
        with self.lock:
            self.db.execute(
                "INSERT INTO memories (user, id, content, type, tool, namespace, created_key, updated_key, tags,"
                " embedding, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (user, *self._columns(doc)),
            )

    def replace(self, user: str, memory_id: str, doc: dict[str, Any]) -> None:
        with self.lock:
            self.db.execute(
                "UPDATE memories SET id = ?, content = ?, type = ?, tool = ?, namespace = ?, created_key = ?,"
                " updated_key = ?, tags = ?, embedding = ?, doc = ? WHERE user = ? AND id = ?",
                (*self._columns(doc), user, memory_id),
            )

    def delete(self, user: str, memory_id: str) -> bool:
        with self.lock:
            return self.db.execute("DELETE FROM memories WHERE user = ? AND id = ?", (user, memory_id)).rowcount > 0

    def get(self, user: str, memory_id: str) -> dict[str, Any] | None:
        with self.lock:
            row = self.db.execute("SELECT doc FROM memories WHERE user = ? AND id = ?", (user, memory_id)).fetchone()
        return json.loads(row[0]) if row else None

    def exists(self, user: str, memory_id: str) -> bool:
        with self.lock:
            return self.db.execute("SELECT 1 FROM memories WHERE user = ? AND id = ?", (user, memory_id)).fetchone() is not None

    def count(self) -> int:
        with self.lock:
            return int(self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def audit(self, at: str, user: str, key_name: str, op: str, memory_id: str | None) -> None:
        """§7: every write is logged, without its content."""
        with self.lock:
            self.db.execute("INSERT INTO audit VALUES (?, ?, ?, ?, ?)", (at, user, key_name, op, memory_id))

    def audit_log(self) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute("SELECT * FROM audit ORDER BY rowid").fetchall()

    # --- queries ------------------------------------------------------------------------------

    @staticmethod
    def _where(scope: Scope, filters: Filters) -> tuple[str, list[Any]]:
        clauses, args = ["m.user = ?"], [scope.user]
        if scope.tool is not None:
            clauses.append("m.tool = ?")
            args.append(scope.tool)
        for column in ("type", "tool", "namespace"):
            value = getattr(filters, column)
            if value is not None:
                clauses.append(f"m.{column} = ?")
                args.append(value)
        if filters.tags and filters.tags_match == "any":
            marks = ", ".join("?" * len(filters.tags))
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value IN ({marks}))")
            args.extend(filters.tags)
        else:
            for tag in filters.tags:
                clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
                args.append(tag)
        return " AND ".join(clauses), args

    def page(self, scope: Scope, filters: Filters, sort: str, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        where, args = self._where(scope, filters)
        with self.lock:
            total = self.db.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", args).fetchone()[0]
            rows = self.db.execute(
                f"SELECT doc FROM memories m WHERE {where} ORDER BY {SORT_SQL[sort]} LIMIT ? OFFSET ?", [*args, limit, offset]
            ).fetchall()
        return [json.loads(r[0]) for r in rows], int(total)

    def all(self, scope: Scope) -> list[dict[str, Any]]:
        return self.page(scope, Filters(), "created_at_asc", -1, 0)[0]

    def keyword(self, scope: Scope, filters: Filters, q: str, case_sensitive: bool = False) -> list[dict[str, Any]]:
        """Every memory whose content holds every word of q, case-insensitively (errata O2); best first."""
        wanted = WORD_RE.findall(q) if case_sensitive else words(q)
        if not wanted:
            return []
        where, args = self._where(scope, filters)
        with self.lock:
            if self.fts:
                match = " ".join('"' + w.replace('"', '""') + '"' for w in wanted)
                rows = self.db.execute(
                    f"SELECT m.doc, m.content FROM memories_fts f JOIN memories m ON m.seq = f.rowid"
                    f" WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts), m.created_key DESC, m.seq DESC",
                    [match, *args],
                ).fetchall()
            else:
                rows = self.db.execute(
                    f"SELECT m.doc, m.content FROM memories m WHERE {where} ORDER BY m.created_key DESC, m.seq DESC", args
                ).fetchall()
        out = []
        for doc, content in rows:  # FTS is the index; this is the definition (words, not prefixes or stems)
            have = set(WORD_RE.findall(content)) if case_sensitive else set(words(content))
            if all(w in have for w in wanted):
                out.append(json.loads(doc))
        return out

    def scored(self, scope: Scope, filters: Filters, q: str) -> list[tuple[float, dict[str, Any]]]:
        """Every memory with its cosine similarity to q under the local embedding, best first."""
        query = embed(q)
        where, args = self._where(scope, filters)
        with self.lock:
            rows = self.db.execute(
                f"SELECT m.doc, m.embedding FROM memories m WHERE {where} ORDER BY m.created_key DESC, m.seq DESC", args
            ).fetchall()
        scored = [(cosine(query, json.loads(vector)), json.loads(doc)) for doc, vector in rows]
        return sorted(scored, key=lambda pair: -pair[0])

    # --- whole-user access (used by import and by the racy mutant) ---------------------------------

    def user_docs(self, user: str) -> list[dict[str, Any]]:
        with self.lock:
            rows = self.db.execute("SELECT doc FROM memories WHERE user = ? ORDER BY seq", (user,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def rewrite_user(self, user: str, docs: list[dict[str, Any]]) -> None:
        with self.lock:
            self.db.execute("DELETE FROM memories WHERE user = ?", (user,))
            for doc in docs:
                self.insert(user, doc)

    def close(self) -> None:
        with self.lock:
            self.db.close()
