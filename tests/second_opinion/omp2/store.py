"""In-memory storage, one space of memories per user; who may see and write what."""

import itertools
import threading
from dataclasses import dataclass, field

from model import is_expired, new_memory_id, now_utc


@dataclass(frozen=True)
class Principal:
    """The holder of an API key: a user, and for a per-tool key the one source.tool it is bound to."""

    user: str
    tool: str | None = None

    def may_write_as(self, tool: str) -> bool:
        return self.tool is None or self.tool == tool


@dataclass
class Record:
    memory: dict
    owner: str
    created_order: int
    updated_order: int
    vector: list = field(default_factory=list)

    @property
    def tool(self) -> str:
        return self.memory["source"]["tool"]


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self._spaces: dict[str, dict[str, Record]] = {}
        self._order = itertools.count(1)

    def next_order(self) -> int:
        return next(self._order)

    def fresh_id(self) -> str:
        with self.lock:
            while True:
                candidate = new_memory_id()
                if all(candidate not in space for space in self._spaces.values()):
                    return candidate

    def put(self, record: Record) -> None:
        with self.lock:
            self._spaces.setdefault(record.owner, {})[record.memory["id"]] = record

    def get(self, owner: str, memory_id: str) -> Record | None:
        """A live (not expired) memory of this user, or None."""
        with self.lock:
            record = self._spaces.get(owner, {}).get(memory_id)
            if record is None or is_expired(record.memory, now_utc()):
                return None
            return record

    def get_from_anyone(self, memory_id: str) -> Record | None:
        with self.lock:
            for owner in self._spaces:
                record = self.get(owner, memory_id)
                if record is not None:
                    return record
            return None

    def live(self, owner: str) -> list[Record]:
        moment = now_utc()
        with self.lock:
            return [r for r in self._spaces.get(owner, {}).values() if not is_expired(r.memory, moment)]

    def remove(self, owner: str, memory_id: str) -> None:
        with self.lock:
            self._spaces.get(owner, {}).pop(memory_id, None)

    def count_live(self) -> int:
        with self.lock:
            return sum(len(self.live(owner)) for owner in list(self._spaces))


def visible_to(principal: Principal, record: Record, tool_restricts_reads: bool = True) -> bool:
    if record.owner != principal.user:
        return False
    return not tool_restricts_reads or principal.tool is None or record.tool == principal.tool
