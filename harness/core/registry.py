"""The table of checks. A check is one small named function tied to one spec sentence."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .model import Failure, HarnessError, Keyword
from .suite import get_suite, is_stale, suite_names

CheckFn = Callable[..., Iterator[Failure]]


@dataclass(frozen=True)
class Check:
    id: str
    suite: str
    spec: str
    section: str
    keyword: Keyword
    level: str
    sentence: str
    kind: str  # "document": fn(doc, ctx) ; "target": fn(ctx)
    fn: CheckFn
    needs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "suite": self.suite,
            "spec": self.spec,
            "section": self.section,
            "keyword": self.keyword.value,
            "level": self.level,
            "kind": self.kind,
            "sentence": self.sentence,
        }


class Registry:
    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}

    def add(self, check: Check) -> None:
        known = self._checks.get(check.id)
        # The same function registering again is its module being re-imported (pytester restores
        # sys.modules between tests): keep the newer one. Two different functions is a clash.
        same = known is not None and (known.fn.__module__, known.fn.__qualname__) == (
            check.fn.__module__, check.fn.__qualname__)
        if known is not None and not same:
            raise HarnessError(f"check id {check.id!r} registered twice")
        self._checks[check.id] = check

    def get(self, check_id: str) -> Check:
        try:
            return self._checks[check_id]
        except KeyError:
            raise HarnessError(f"unknown check id {check_id!r}; `memconform list` shows them") from None

    def for_suite(self, suite: str) -> list[Check]:
        load_suite(suite)
        return [c for c in self._checks.values() if c.suite == suite]

    def all(self) -> list[Check]:
        for name in suite_names():
            load_suite(name, missing_ok=True)
        return list(self._checks.values())


REGISTRY = Registry()


def load_suite(name: str, missing_ok: bool = False) -> None:
    """Import a suite through its entry point, which registers its checks (core/suite.py)."""
    try:
        get_suite(name)
    except ModuleNotFoundError as exc:
        if not (missing_ok and is_stale(name, exc)):
            raise


def check(
    *,
    suite: str,
    spec: str,
    section: str,
    keyword: str,
    level: str,
    sentence: str,
    kind: str = "target",
    needs: tuple[str, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Register a generator of failures under its function name, which is the stable check id."""

    def register(fn: CheckFn) -> CheckFn:
        REGISTRY.add(
            Check(
                id=f"{suite}.{fn.__name__}",
                suite=suite,
                spec=spec,
                section=section,
                keyword=Keyword(keyword),
                level=level,
                sentence=" ".join(sentence.split()),
                kind=kind,
                fn=fn,
                needs=needs,
            )
        )
        return fn

    return register
