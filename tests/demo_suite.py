"""A small suite and its known-broken implementations, for the core's own tests (not installed).

`install()` makes the suite known (as an entry point would) and registers its checks; `uninstall()`
removes both, so no other test ever sees a "demo" check.

The spec it stands for: Level 1 Producer (export items with an id, MUST; "includes a checksum", a
SHOULD the conformance clause lists; a hint, a SHOULD no clause lists), Level 2 Consumer (imports
a valid item, rejects an item without id: a negative check with its positive control), Level 3
requires both, and an optional HTTP-like profile whose one operation is `profile`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from memconform.core import suite as suite_module
from memconform.core.registry import Check
from memconform.core.results import ControlRefused, Failure, Inconclusive, Keyword, SkipCheck
from memconform.core.suite import Level, SuiteSpec
from memconform.targets.base import Rejected


def checksum(item: dict[str, Any]) -> str:
    body = {k: v for k, v in item.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


# --- implementations --------------------------------------------------------------------------
class Reference:
    claims = {"1", "2", "3", "http"}

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = [self._item("seed-1"), self._item("seed-2")]

    def _item(self, ident: str, text: str = "t") -> dict[str, Any]:
        item = {"id": ident, "text": text, "hint": "h"}
        item["checksum"] = checksum(item)
        return item

    def levels(self, body: Any = None) -> dict[str, Any]:
        return {"levels": sorted(self.claims)}

    def export(self, body: Any = None) -> dict[str, Any]:
        return {"items": [dict(i) for i in self.items]}

    def import_item(self, body: Any = None) -> dict[str, Any]:
        if not isinstance(body, dict) or not body.get("id"):
            raise Rejected({"error": "id required"})
        self.items.append(self._item(body["id"], body.get("text", "")))
        return {"imported": 1}

    def delete_item(self, body: Any = None) -> dict[str, Any]:
        self.items = [i for i in self.items if i["id"] != body["id"]]
        return {"deleted": 1}

    def profile(self, body: Any = None) -> dict[str, Any]:
        return {"profile": "demo", "echo": body}


class EmptyExportOnly(Reference):
    """Exports an empty store and offers nothing else, yet claims levels 1 and 2."""

    claims = {"1", "2"}
    import_item = None  # type: ignore[assignment]
    delete_item = None  # type: ignore[assignment]
    profile = None  # type: ignore[assignment]

    def __init__(self) -> None:
        self.items = []


class RefusesEverything(Reference):
    def import_item(self, body: Any = None) -> dict[str, Any]:
        raise Rejected({"error": "no"})


class NoChecksum(Reference):
    def export(self, body: Any = None) -> dict[str, Any]:
        return {"items": [{k: v for k, v in i.items() if k != "checksum"} for i in self.items]}


class NoHint(Reference):
    def export(self, body: Any = None) -> dict[str, Any]:
        items = [{k: v for k, v in i.items() if k != "hint"} for i in self.items]
        return {"items": [{**i, "checksum": checksum(i)} for i in items]}


class ProfileCrashes(Reference):
    def profile(self, body: Any = None) -> dict[str, Any]:
        raise RuntimeError("boom")


class NoProfile(Reference):
    claims = {"1", "2", "3"}
    profile = None  # type: ignore[assignment]


class NoDelete(Reference):
    delete_item = None  # type: ignore[assignment]


class Hostile(Reference):
    """Answers with values a report must survive; `payload` is set by the test."""

    payload: Any = None

    def export(self, body: Any = None) -> Any:
        return {"items": [{"id": "x", "text": type(self).payload, "checksum": "0", "hint": "h"}]}


# --- checks -----------------------------------------------------------------------------------
def _items(ctx: Any) -> list[dict[str, Any]]:
    items = ctx.once("export", lambda: ctx.target.call("export").accepted_json(dict, "export"))["items"]
    if not items:
        raise Inconclusive("no items to examine: the target exported an empty store")
    return list(items)


def items_have_ids(ctx: Any) -> Iterator[Failure]:
    for n, item in enumerate(_items(ctx)):
        if not item.get("id"):
            yield Failure("item without id", item, "an id", f"$.items[{n}]")


def has_checksum(ctx: Any) -> Iterator[Failure]:
    for n, item in enumerate(_items(ctx)):
        if item.get("checksum") != checksum(item):
            yield Failure("checksum missing or wrong", item.get("checksum"), checksum(item), f"$.items[{n}].checksum",
                          readings=("sorted-keys",))


def has_hint(ctx: Any) -> Iterator[Failure]:
    for n, item in enumerate(_items(ctx)):
        if "hint" not in item:
            yield Failure("no hint", item, "a hint", f"$.items[{n}]")


def imports_item(ctx: Any) -> Iterator[Failure]:
    ident = ctx.unique("item")
    reply = ctx.target.call("import_item", {"id": ident, "text": "x"})
    if reply.ok:
        ctx.cleanup(f"item {ident}", lambda: ctx.target.call("delete_item", {"id": ident}).ok)
        ctx.reading("D1", "text-kept")
    else:
        yield Failure("a valid item was refused", reply.raw[:200], "accepted")


def rejects_item_without_id(ctx: Any) -> Iterator[Failure]:
    control_id = ctx.unique("control")
    control = ctx.target.call("import_item", {"id": control_id, "text": "x"})
    if not control.ok:
        raise ControlRefused(f"the same item with an id was refused: {control.raw[:120]!r}")
    ctx.cleanup(f"item {control_id}", lambda: ctx.target.call("delete_item", {"id": control_id}).ok)
    reply = ctx.target.call("import_item", {"text": "x"})
    if reply.ok:
        yield Failure("an item without id was accepted", reply.body, "rejected")


def profile_answers(ctx: Any) -> Iterator[Failure]:
    reply = ctx.target.call("profile", {"q": 1})
    if reply.json().get("profile") != "demo":
        yield Failure("profile answered wrong", reply.json(), {"profile": "demo"})


def needs_a_hook(ctx: Any) -> Iterator[Failure]:
    raise SkipCheck("needs the decay hook")
    yield


CHECKS = [
    (items_have_ids, "MUST", "1"), (has_checksum, "SHOULD", "1"), (has_hint, "SHOULD", "1"),
    (imports_item, "MUST", "2"), (rejects_item_without_id, "MUST", "2"), (profile_answers, "SHOULD", "http"),
]


def _claimed(ctx: Any) -> set[str] | None:
    reply = ctx.target.call("levels")
    return set(reply.json()["levels"]) if reply.ok else None


SUITE = SuiteSpec(
    name="demo", spec_title="Demo Protocol", version="1",
    levels=[
        Level("1", "Level 1 Producer", clause=("has_checksum",)),
        Level("2", "Level 2 Consumer"),
        Level("3", "Level 3 Bidirectional", requires=("1", "2")),
        Level("http", "HTTP profile (RECOMMENDED)", optional=True, clause=("profile_answers",)),
    ],
    reference=Reference, claimed_levels=_claimed,
)


def make_check(fn: Any, keyword: str, level: str) -> Check:
    return Check(id=f"demo.{fn.__name__}", suite="demo", spec="Demo Protocol", section="§1", keyword=Keyword(keyword),
                 level=level, sentence=f"{fn.__name__} (demo rule)", kind="target", fn=fn)


def install(extra: list[tuple[Any, str, str]] | None = None) -> None:
    suite_module._LOADED["demo"] = SUITE
    for fn, keyword, level in CHECKS + (extra or []):
        SUITE.add_check(make_check(fn, keyword, level))


def uninstall() -> None:
    suite_module._LOADED.pop("demo", None)
    SUITE.registered().clear()
