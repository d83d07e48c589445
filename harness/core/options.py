"""A suite's options: the readings of ambiguous spec text it can be pinned to, declared as data.

Each suite package lists its options in its own `options.py` (`OPTIONS = Options(OptionSpec(...), ...)`),
and its SuiteSpec holds that table (`SuiteSpec(options=OPTIONS)`): the harness finds an option through
the suite, never through a table some import filled. A run reads one with `ctx.option(name)`
(core/profile.py resolves `--option` against the suite's table); `memconform list --options`, the
report header and the JUnit properties list the same tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .results import HarnessError


@dataclass(frozen=True)
class OptionSpec:
    """One option: its default and, when it is a choice, every value it may take (none: a free value,
    such as a path or a size)."""

    name: str
    default: str
    choices: tuple[str, ...]
    help: str

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise HarnessError(f"option name {self.name!r}: letters, digits and underscores only")
        if self.choices and self.default not in self.choices:
            raise HarnessError(f"option {self.name}: the default {self.default!r} is not one of its choices "
                               f"({', '.join(self.choices)})")


class Options:
    """A suite's options by name, in the order declared; fixed once made (nothing adds to it later)."""

    __slots__ = ("_by_name",)

    def __init__(self, *specs: OptionSpec) -> None:
        by_name: dict[str, OptionSpec] = {}
        for spec in specs:
            if spec.name in by_name:
                raise HarnessError(f"option {spec.name!r} is declared twice")
            by_name[spec.name] = spec
        self._by_name = by_name

    def get(self, name: str) -> OptionSpec | None:
        return self._by_name.get(name)

    def __getitem__(self, name: str) -> OptionSpec:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[OptionSpec]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def defaults(self) -> dict[str, str]:
        """Every option's default by name: what a table of readings reads when no run pins anything."""
        return {name: spec.default for name, spec in self._by_name.items()}

    def pinned(self, ctx: Any) -> dict[str, str]:
        """Every option as the running check's run set it (ctx.option), by name."""
        return {name: str(ctx.option(name)) for name in self._by_name}

    def __repr__(self) -> str:
        return f"Options({', '.join(self._by_name)})"
