"""Spec sections as report.html lists them: in the spec's order (by number, or as a spec with named
sections orders them), each with its title (sections.json, from the spec texts)."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

_NUMBER = re.compile(r"§?(\d+(?:\.\d+)*)")


@functools.cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(__package__).joinpath("sections.json").read_text("utf-8"))
    return data


@dataclass
class SectionRow:
    suite: str
    section: str  # the top-level section: "§3", or a named section
    title: str
    passed: int = 0
    failed: int = 0  # failed or errored: drawn red
    other: int = 0  # inconclusive and warnings: assessed, neither passed nor failed

    @property
    def assessed(self) -> int:
        return self.passed + self.failed + self.other

    @property
    def label(self) -> str:
        return f"{self.suite} {self.section}" + (f" {self.title}" if self.title and self.title != self.section else "")


def top_section(section: str) -> str:
    m = _NUMBER.match(section)
    return f"§{m.group(1).split('.')[0]}" if m else section


def _title(suite: str, top: str) -> str:
    titles = (_table().get(suite) or {}).get("titles") or {}
    return str(titles.get(top.lstrip("§"), top if not top.startswith("§") else ""))


def sort_key(suite: str, top: str) -> tuple[Any, ...]:
    """Numbered sections by number; named ones in the spec's order; anything unknown after, by name."""
    m = _NUMBER.match(top)
    if m:
        return (0, tuple(int(p) for p in m.group(1).split(".")), top)
    order = (_table().get(suite) or {}).get("order") or []
    return (1, order.index(top), top) if top in order else (2, (), top)


def section_rows(results: list[dict[str, Any]]) -> list[SectionRow]:
    """One row per suite and top-level section (not-applicable skips not counted), suites in report order."""
    rows: dict[tuple[str, str], SectionRow] = {}
    for r in results:
        top = top_section(r["section"])
        row = rows.setdefault((r["suite"], top), SectionRow(r["suite"], top, _title(r["suite"], top)))
        if r["outcome"] == "skipped" and r.get("not_applicable"):
            continue
        if r["outcome"] == "passed":
            row.passed += 1
        elif r["outcome"] in ("failed", "errored") and not r.get("warning"):
            row.failed += 1
        else:
            row.other += 1
    suites = list(dict.fromkeys(r["suite"] for r in results))
    return sorted(rows.values(), key=lambda x: (suites.index(x.suite), sort_key(x.suite, x.section)))
