"""A suite's known-broken implementations as one typed table, read from its mutants module and validated.

A mutants module (SuiteSpec.mutants) keeps plain globals, so a suite writes them as data:

    MUTANTS           {name: factory}                          every mutant
    EXPECTED_KILLS    {name: {check id}} or {name: {check id: words of the failure title}}
    EXPECTED_TITLES   {name: {(check id, words)}}              the failure branch that must fire
    EXPECTED_FAILURES {name: {short id: words}}                the same, with ids without the suite's prefix
    NOTE_ONLY         {name}                                   breaks no rule: a run note only
    OPTION_KILLS      {name: ({option: value}, {check id})}    killed only under a pinned reading
    HTTP_ONLY         {name}                                   only HTTP shows it: served from http_app(name)
    ALSO_RUN          {check id}                               run on every mutant as well (set-up steps)
    KILLS_ONLY        {name}                                   too slow for ALSO_RUN: its kills alone
    KILLED_ELSEWHERE  {check id: the test that kills it}

`Mutants.of(module, suite)` reads them into one object with one spelling of "the branch that must fire"
(`branches`: (check id, words) pairs, whichever table named them) and refuses, naming every problem, a
table that names a mutant that does not exist, a mutant with no kill and no reason to have none, a check id
of another suite, or an HTTP-only mutant without `http_app`. The suite contract (tests/test_suite_contract.py)
reads only this object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .results import HarnessError


@dataclass(frozen=True)
class Mutants:
    suite: str
    module: str
    factories: Mapping[str, Callable[..., Any]]
    kills: Mapping[str, frozenset[str]]
    branches: Mapping[str, frozenset[tuple[str, str]]]
    note_only: frozenset[str] = frozenset()
    option_kills: Mapping[str, tuple[Mapping[str, str], frozenset[str]]] = field(default_factory=dict)
    http_only: frozenset[str] = frozenset()
    http_app: Callable[[str], Any] | None = None
    also_run: frozenset[str] = frozenset()
    kills_only: frozenset[str] = frozenset()
    killed_elsewhere: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return sorted(self.factories)

    def target(self, name: str) -> str:
        """The target string of a mutant that runs in process."""
        return f"python:{self.module}:{name}"

    def checks_run_on(self, name: str) -> list[str]:
        """The checks a contract run of this mutant runs: its kills, and ALSO_RUN unless it is too slow."""
        wanted = set(self.kills.get(name, ()))
        if name not in self.kills_only:
            wanted |= self.also_run
        return sorted(wanted)

    def named_checks(self) -> set[str]:
        """Every check id the tables name."""
        named = {c for kills in self.kills.values() for c in kills}
        named |= {c for pairs in self.branches.values() for c, _ in pairs}
        named |= {c for _, checks in self.option_kills.values() for c in checks}
        return named | self.also_run | set(self.killed_elsewhere)

    @classmethod
    def of(cls, module: ModuleType, suite: str) -> Mutants:
        get = module.__dict__.get
        factories: dict[str, Callable[..., Any]] = dict(get("MUTANTS") or {})
        kills: dict[str, frozenset[str]] = {}
        branches: dict[str, set[tuple[str, str]]] = {}
        for name, named in (get("EXPECTED_KILLS") or {}).items():
            kills[name] = frozenset(named)
            if isinstance(named, Mapping):
                branches.setdefault(name, set()).update(named.items())
        for name, pairs in (get("EXPECTED_TITLES") or {}).items():
            branches.setdefault(name, set()).update(pairs)
        for name, short in (get("EXPECTED_FAILURES") or {}).items():
            branches.setdefault(name, set()).update((f"{suite}.{s}", words) for s, words in short.items())
        option_kills = {name: (dict(options), frozenset(checks))
                        for name, (options, checks) in (get("OPTION_KILLS") or {}).items()}
        table = cls(
            suite=suite, module=module.__name__, factories=factories, kills=kills,
            branches={name: frozenset(pairs) for name, pairs in branches.items()},
            note_only=frozenset(get("NOTE_ONLY") or ()), option_kills=option_kills,
            http_only=frozenset(get("HTTP_ONLY") or ()), http_app=get("http_app"),
            also_run=frozenset(get("ALSO_RUN") or ()), kills_only=frozenset(get("KILLS_ONLY") or ()),
            killed_elsewhere=dict(get("KILLED_ELSEWHERE") or {}),
        )
        problems = table.problems()
        if problems:
            raise HarnessError(f"{module.__name__}: the mutant tables disagree: " + "; ".join(problems))
        return table

    def problems(self) -> list[str]:
        out = []
        known = set(self.factories)
        for what, names in (("EXPECTED_KILLS", set(self.kills)), ("expected branches", set(self.branches)),
                            ("NOTE_ONLY", set(self.note_only)), ("OPTION_KILLS", set(self.option_kills)),
                            ("HTTP_ONLY", set(self.http_only)), ("KILLS_ONLY", set(self.kills_only))):
            if names - known:
                out.append(f"{what} names mutants that do not exist: {sorted(names - known)}")
        unexplained = known - set(self.kills) - self.note_only - set(self.option_kills)
        if unexplained:
            out.append(f"mutants with no expected kill, not NOTE_ONLY nor OPTION_KILLS: {sorted(unexplained)}")
        both = set(self.kills) & (self.note_only | set(self.option_kills))
        if both:
            out.append(f"mutants both killed by default and note-only or option-only: {sorted(both)}")
        empty = sorted(name for name, checks in self.kills.items() if not checks)
        if empty:
            out.append(f"mutants whose EXPECTED_KILLS is empty: {empty}")
        foreign = sorted(c for c in self.named_checks() if not c.startswith(f"{self.suite}."))
        if foreign:
            out.append(f"check ids not of suite {self.suite!r}: {foreign}")
        if self.http_only and self.http_app is None:
            out.append("HTTP_ONLY mutants but no http_app(name) to serve them")
        return out
