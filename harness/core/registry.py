"""The table of checks across every suite: each suite keeps its own (SuiteSpec.check registers and validates
them, core/check.py); this is the whole table, loading a suite through its entry point when asked."""

from __future__ import annotations

from .check import Check, CheckFn
from .results import HarnessError
from .suite import all_suites, get_suite, is_stale

__all__ = ["REGISTRY", "Check", "CheckFn", "Registry", "load_suite"]


class Registry:
    def get(self, check_id: str) -> Check:
        try:
            found = get_suite(check_id.split(".", 1)[0]).registered().get(check_id)
        except HarnessError:  # no such suite
            found = None
        if found is None:
            raise HarnessError(f"unknown check id {check_id!r}; `memconform list` shows them")
        return found

    def for_suite(self, suite: str) -> list[Check]:
        return list(get_suite(suite).registered().values())

    def all(self) -> list[Check]:
        return [c for spec in all_suites() for c in spec.registered().values()]


REGISTRY = Registry()


def load_suite(name: str, missing_ok: bool = False) -> None:
    """Import a suite through its entry point, which registers its checks (core/suite.py)."""
    try:
        get_suite(name)
    except ModuleNotFoundError as exc:
        if not (missing_ok and is_stale(name, exc)):
            raise


def select_checks(suite: str, check_ids: list[str] | None) -> list[Check]:
    """A suite's registered checks, or those of them `check_ids` names (with or without the suite's prefix)."""
    return _named(REGISTRY.for_suite(suite), check_ids)


def select_document_checks(suite: str, check_ids: list[str] | None) -> list[Check]:
    """A suite's "document" checks, or those of them `check_ids` names: the document checks of
    select_checks, loading only their modules where the suite declares them (SuiteSpec.document_checks)."""
    return _named(get_suite(suite).load_document_checks(), check_ids)


def _named(checks: list[Check], check_ids: list[str] | None) -> list[Check]:
    if check_ids:
        wanted = set(check_ids)
        checks = [c for c in checks if c.id in wanted or c.id.split(".", 1)[1] in wanted]
    return checks
