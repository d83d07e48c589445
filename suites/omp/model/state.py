"""The model's state: every memory of every user, the ids gone, the acknowledged writes, an import not yet read back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Self

from .base import DEFAULT_USER, Readings, Request, principal
from .shapes import Validator


@dataclass
class ImportEffect:
    """What an accepted import must have done to one item, judged on the next export (errata O7, O26)."""

    content: str
    id: str | None  # the id it must be stored under; None: a new id
    stored: str  # "must" | "may" | "not"
    created_at: Any = None
    replaces: str | None = None  # overwrite: the id whose old content must be gone


@dataclass
class ModelState:
    """What the model knows: every memory of every user, the ids gone, the acknowledged writes."""

    readings: Readings = field(default_factory=Readings)
    complete: bool = True
    users: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    audit: list[tuple[str, str, str | None]] = field(default_factory=list)  # (key, op, id) of acknowledged writes
    pending: list[ImportEffect] | None = None  # an import not yet read back

    def __post_init__(self) -> None:
        self.validator = Validator(self.readings)

    # -- state ----------------------------------------------------------------------------------

    @classmethod
    def seeded(cls, docs: Iterable[dict[str, Any]], readings: Readings | None = None, *, complete: bool = True,
               user: str = DEFAULT_USER) -> Self:
        """A model holding these stored memories (as a target served them)."""
        model = cls(readings or Readings(), complete)
        model.users[user] = {d["id"]: d for d in docs if isinstance(d, dict) and isinstance(d.get("id"), str)}
        return model

    def snapshot(self, request: Request) -> dict[str, Any]:
        """The request and the state as JSON, without the target's stamps: a replay's model (`from_snapshot`)."""
        def unstamped(doc: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in doc.items() if k not in ("created_at", "updated_at")}
        return {"request": {"op": request.op, "key": request.key, "id": request.id, "body": request.body,
                            "params": [list(p) for p in request.params]},
                "users": {user: [unstamped(d) for d in docs.values()] for user, docs in self.users.items()},
                "gone": sorted(self.gone)}

    @classmethod
    def from_snapshot(cls, snap: dict[str, Any], readings: Readings | None = None) -> tuple[Self, Request]:
        model = cls(readings or Readings())
        model.users = {user: {d["id"]: d for d in docs} for user, docs in snap["users"].items()}
        model.gone = set(snap.get("gone", []))
        req = snap["request"]
        return model, Request(req["op"], req["key"], req["id"], req["body"], tuple(tuple(p) for p in req["params"]))

    def memories(self, key: str = "global") -> list[dict[str, Any]]:
        """What this key sees: its user's memories, for a per-tool key only its tool's."""
        who = principal(key)
        docs = self.users.get(who.user, {}).values()
        return [d for d in docs if who.tool is None or (d.get("source") or {}).get("tool") == who.tool]

    def find(self, key: str, mem_id: str | None) -> tuple[str, dict[str, Any] | None]:
        """("own", doc), ("other-tool", doc), ("other-user", doc) or ("none", None)."""
        who = principal(key)
        doc = self.users.get(who.user, {}).get(mem_id or "")
        if doc is not None:
            if who.tool is not None and (doc.get("source") or {}).get("tool") != who.tool:
                return "other-tool", doc
            return "own", doc
        if any(mem_id in docs for user, docs in self.users.items() if user != who.user):
            return "other-user", None
        return "none", None
