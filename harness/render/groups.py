"""Failures grouped by cause: one crash that every check hits is one entry with its count, not 22 blocks.

A cause is the outcome word and what went wrong: an error's reason, or a failure's titles. Checks
whose cause is the same text share a group; the group shows the first check's details (the others
differ only in which check saw it) and names every check it hit. The terminal, summary.md and
report.html all group with `group_problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.wording import plural
from .common import outcome_label

__all__ = ["Group", "cause_of", "clip", "group_heading", "group_problems", "named", "plural", "render_groups_text"]

ORDER = {"failed": 0, "errored": 1, "warning": 2}


@dataclass
class Group:
    label: str  # failed, errored, warning
    cause: str
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first(self) -> dict[str, Any]:
        return self.results[0]

    @property
    def check_ids(self) -> list[str]:
        return [r["check_id"] for r in self.results]


def cause_of(r: dict[str, Any]) -> str:
    """What went wrong, without which check saw it."""
    if r["outcome"] == "errored" or not r.get("failures"):
        return str(r.get("reason") or "")
    return "; ".join(dict.fromkeys(str(f["title"]) for f in r["failures"]))


def explained_by(r: dict[str, Any]) -> str:
    """The check whose established deviation explains every failure of the result (core/established.py), or ""."""
    causes = {str(f.get("explained_by") or "") for f in r.get("failures") or ()}
    return causes.pop() if len(causes) == 1 and r["outcome"] == "failed" else ""


def group_problems(results: list[dict[str, Any]]) -> list[Group]:
    """Failed, errored and warning results grouped by cause: failures first, then errors, then warnings. A
    failure a deviation established earlier in the run explains joins the group of the check that
    established it (its root cause), when that check is in the list."""
    groups: dict[tuple[str, str], Group] = {}
    by_check: dict[str, Group] = {}
    later: list[dict[str, Any]] = []
    for r in results:
        if r["outcome"] not in ("failed", "errored"):
            continue
        if explained_by(r):
            later.append(r)
            continue
        label = outcome_label(r)
        key = (label, cause_of(r))
        group = groups.setdefault(key, Group(label, key[1]))
        group.results.append(r)
        by_check[r["check_id"]] = group
    for r in later:
        root = by_check.get(explained_by(r))
        if root is not None:
            root.results.append(r)
        else:
            key = (outcome_label(r), f"explained by {explained_by(r)}: {cause_of(r)}")
            groups.setdefault(key, Group(key[0], key[1])).results.append(r)
    return sorted(groups.values(), key=lambda g: ORDER.get(g.label, 3))


def named(ids: list[str], limit: int = 12) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def clip(text: str, limit: int = 200) -> str:
    """At most `limit` characters, cut at a word boundary and said."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + " …"


def group_heading(g: Group) -> str:
    """One line: the outcome, the count when more than one check, the checks."""
    if len(g.results) == 1:
        return f"{g.label} {g.first['check_id']}"
    return f"{g.label} ×{len(g.results)} (one cause): {named(g.check_ids)}"


def render_groups_text(results: list[dict[str, Any]]) -> str:
    """The terminal's closing list: each distinct cause once, with its count, the checks it hit and how to rerun."""
    groups = group_problems(results)
    if not groups:
        return ""
    problems = sum(len(g.results) for g in groups)
    out = [f"Failures by cause: {plural(len(groups), 'cause')} for {plural(problems, 'check')}"]
    for g in groups:
        out.append(f"  {len(g.results)} × {g.label}: {clip(g.cause) or '(no reason given)'}")
        out.append(f"      {plural(len(g.results), 'check')}: {named(g.check_ids)}")
        if g.first.get("reproduce"):
            out.append(f"      Reproduce with: {g.first['reproduce']}")
    return "\n".join(out) + "\n"
