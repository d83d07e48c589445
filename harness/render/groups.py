"""Failures grouped by cause: one mistake that many checks meet is one entry with its count, not 22 blocks.

A cause is the outcome word and what went wrong, normalised so the same mistake reads the same: the
request a title names is dropped, ids, numbers and run tokens are masked, and a title that only says
the answer fitted no reading (or schemathesis's "Response violates schema") is grouped by the spec rule
its expectation names ("the §4 envelope"), so memconform's and schemathesis's words for one rule are one
cause. A check whose failures have several causes joins the one most checks of the run share. The group
shows the first check's details (the others differ only in which check saw it) and names every check it
hit. The terminal, summary.md and report.html all group with `group_problems`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..core.wording import plural
from ..core.wording import shown_value as shown_value  # re-exported: where the renderers found it
from .common import outcome_label

__all__ = ["Group", "cause_of", "clip", "cut_schema_dump", "failure_text", "group_heading", "group_problems", "named", "plural",
           "render_groups_text", "shown_value"]

ORDER = {"failed": 0, "errored": 1, "warning": 2}


@dataclass
class Group:
    label: str  # failed, errored, warning
    cause: str  # in the report's own words
    results: list[dict[str, Any]] = field(default_factory=list)
    key: str = ""  # the normalised cause the results share

    def example(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The result and failure that show the cause best: the first failure whose own title names it."""
        for r in self.results:
            for f in r.get("failures") or []:
                if _names(f, self.key):
                    return r, f
        failures = self.first.get("failures") or []
        return self.first, failures[0] if failures else None

    @property
    def first(self) -> dict[str, Any]:
        return self.results[0]

    @property
    def check_ids(self) -> list[str]:
        return [r["check_id"] for r in self.results]


def cause_of(r: dict[str, Any]) -> str:
    """What went wrong, without which check saw it, as the report words it (shown; `cause_key` groups)."""
    if r["outcome"] == "errored" or not r.get("failures"):
        return str(r.get("reason") or "")
    return "; ".join(dict.fromkeys(str(f["title"]) for f in r["failures"]))


def explained_by(r: dict[str, Any]) -> str:
    """The check whose established deviation explains every failure of the result (core/established.py), or ""."""
    causes = {str(f.get("explained_by") or "") for f in r.get("failures") or ()}
    return causes.pop() if len(causes) == 1 and r["outcome"] == "failed" else ""


_METHODS = "GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS"
# "GET /v1/memories/mem_1 (the id named in the body): ..." -- the request is which check's example, not the cause
_REQUEST_PREFIX = re.compile(rf"^(?:{_METHODS})\s+\S+(?:\s+\([^)]*\))?:\s+")
_REQUEST_SUFFIX = re.compile(rf"\s+at\s+(?:{_METHODS})\s+\S+$")  # schemathesis: "Response violates schema at GET /x"
# a spec rule named by its section: "§4 envelope", "§3.3 list"
_SECTION_RULE = re.compile(r"§\s?\d+(?:\.\d+)*\s+[A-Za-z][\w-]*")
_SECTION_REF = re.compile(r"§\s?(\d+(?:\.\d+)*)(?![\d.]*\s+[A-Za-z])")  # a bare "§4" (a schema's description)
_MASKS = (
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b(?=[\w-]*\d)[\w-]{8,}\b"), "<id>"),  # mem_3Mnk3HZ3EBSKZM2Z, run tokens, hex digests
    (re.compile(r"\d+(?:\.\d+)?"), "N"),
)


def mask(text: str) -> str:
    """The text with ids, run tokens and numbers masked, and its spaces folded."""
    text = " ".join(text.split())
    for pattern, stand_in in _MASKS:
        text = pattern.sub(stand_in, text)
    return text


def _title_tail(f: dict[str, Any]) -> str:
    """A failure's title without the request it names."""
    return _REQUEST_SUFFIX.sub("", _REQUEST_PREFIX.sub("", str(f.get("title") or "")))


def _names(f: dict[str, Any], key: str) -> bool:
    """Does the failure's own title say the cause (not only its expectation)?"""
    tail = _title_tail(f)
    return bool(key) and (key in tail or mask(tail) == key)


def _texts(value: Any) -> list[str]:
    """The strings of an expectation: itself, or the reasons of a readings table (reading -> why not)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, str)]
    return []


def _candidates(f: dict[str, Any]) -> list[str]:
    """The keys one failure could be grouped by, its own words first: the spec rule its title names, else its
    masked title; then each spec rule its expectation names (a readings table's reasons included)."""
    tail = _title_tail(f)
    rule = _SECTION_RULE.search(tail)
    found = [rule.group() if rule else mask(tail)]
    for text in _texts(f.get("expected")):
        found += [m.group() for m in _SECTION_RULE.finditer(text)]
    detail = str(f.get("detail") or "")
    if "Schema at " in detail:  # schemathesis: the section its schema's description cites (JSON-escaped in the dump)
        found += [f"§{m.group(1)}" for m in _SECTION_REF.finditer(detail.replace("\\u00a7", "§"))]
    return list(dict.fromkeys(found))


def _result_candidates(r: dict[str, Any]) -> list[str]:
    if r["outcome"] == "errored" or not r.get("failures"):
        return [mask(str(r.get("reason") or ""))]
    return list(dict.fromkeys(c for f in r["failures"] for c in _candidates(f)))


def _resolve_sections(found: list[str], rules: set[str]) -> list[str]:
    """A bare section ("§4", from a schema's description) stands for the one rule of the run naming that section
    ("§4 envelope"); with none or several it is dropped (a section alone is too coarse to group by)."""
    out = []
    for key in found:
        if key.startswith("§") and " " not in key:
            named = [rule for rule in rules if rule.split(" ")[0] == key]
            if len(named) == 1:
                out.append(named[0])
            continue
        out.append(key)
    return list(dict.fromkeys(out)) or found[:1]


def group_problems(results: list[dict[str, Any]]) -> list[Group]:
    """Failed, errored and warning results grouped by cause: failures first, then errors, then warnings. A
    failure a deviation established earlier in the run explains joins the group of the check that
    established it (its root cause), when that check is in the list."""
    problems = [r for r in results if r["outcome"] in ("failed", "errored") and not explained_by(r)]
    later = [r for r in results if r["outcome"] in ("failed", "errored") and explained_by(r)]
    found = {id(r): _result_candidates(r) for r in problems}
    rules = {k for keys in found.values() for k in keys if k.startswith("§") and " " in k}
    found = {i: _resolve_sections(keys, rules) for i, keys in found.items()}
    shared: Counter[str] = Counter(k for keys in found.values() for k in keys)
    groups: dict[tuple[str, str], Group] = {}
    by_check: dict[str, Group] = {}
    for r in problems:
        label = outcome_label(r)
        keys = found[id(r)]
        key = (label, max(keys, key=lambda k: (shared[k], -keys.index(k))))
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(label, _shown_cause(r, key[1]), key=key[1])
        group.results.append(r)
        by_check[r["check_id"]] = group
    for r in later:
        root = by_check.get(explained_by(r))
        if root is not None:
            root.results.append(r)
        else:
            cause = f"explained by {explained_by(r)}: {cause_of(r)}"
            groups.setdefault((outcome_label(r), cause), Group(outcome_label(r), cause, key=cause)).results.append(r)
    return sorted(groups.values(), key=lambda g: (ORDER.get(g.label, 3), -len(g.results)))


def _shown_cause(r: dict[str, Any], key: str) -> str:
    """The cause in the report's own words: the first failure title naming the rule, without its request."""
    if r["outcome"] == "errored" or not r.get("failures"):
        return str(r.get("reason") or "")
    for f in r["failures"]:
        if _names(f, key):
            return _title_tail(f)
    for f in r["failures"]:
        for text in _texts(f.get("expected")):
            if key in text:
                return text
    return cause_of(r)


_SCHEMA_DUMP = re.compile(r"\n\s*Schema at [^\n]*:\n.*?(?=\n\s*Value:|\Z)", re.S)
_FILTERED_AUTH = re.compile(r"-H\s+'Authorization: \[Filtered\]'")


def cut_schema_dump(detail: str, value_lines: int = 8) -> str:
    """A schemathesis detail without the schema it printed (the failing keyword and the value stay, the
    value cut to a few lines), and its curl line with the key from $MEMCONFORM_API_KEY, copyable."""
    text = _SCHEMA_DUMP.sub("", detail)
    head, sep, rest = text.partition("Value:")
    if sep:
        lines = rest.split("\n")
        value, after = [], []
        for i, line in enumerate(lines):
            if i and line and not line.startswith((" ", "\t")):
                after = lines[i:]
                break
            value.append(line)
        if len(value) > value_lines + 1:
            value = value[: value_lines + 1] + [f"    ... ({len(value) - value_lines - 1} more lines)"]
        text = head + sep + "\n".join(value + after)
    return _FILTERED_AUTH.sub('-H "Authorization: Bearer $MEMCONFORM_API_KEY"', text)


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
    """The terminal's list of causes: each distinct cause once, with its count, the checks it hit, one example
    and how to rerun them; warnings apart."""
    return causes_text(results)


EXAMPLE_CHARS = 300  # one received or expected value in the by-cause list; report.html has it whole
CURL_LINES = 2  # of the example's check; exchanges.har has every request


def rerun_line(g: Group) -> str:
    """One command rerunning every check of the group: the first check's reproduce line with each check named."""
    reproduce = str(g.first.get("reproduce") or "")
    if not reproduce:
        return ""
    base = re.sub(r"(?:\s+--check\s+\S+)+\s*$", "", reproduce)
    if base == reproduce:  # not a `memconform run ... --check ID` line: shown as the report has it
        return reproduce
    ids = g.check_ids if len(g.check_ids) <= 12 else g.check_ids[:12]
    more = f"  # and {len(g.check_ids) - 12} more checks: see report.html" if len(g.check_ids) > 12 else ""
    return base + "".join(f" --check {i}" for i in ids) + more


def _example(g: Group) -> list[str]:
    """The failure that names the cause best, values shown as themselves and cut, and its check's last requests."""
    r, f = g.example()
    out = []
    if f is not None:
        failures = r.get("failures") or []
        out += [f"      e.g. {r['check_id']} [{r['section']} {r['keyword']}]: {clip(str(f['title']), 200)} at {f['path']}",
                f"        received: {shown_value(f['received'], EXAMPLE_CHARS)}",
                f"        expected: {shown_value(f['expected'], EXAMPLE_CHARS)}"]
        if f.get("detail"):
            detail = cut_schema_dump(str(f["detail"])).strip().split("\n")
            out += [f"        {line}" for line in detail[:14]]
            if len(detail) > 14:
                out.append(f"        ... ({len(detail) - 14} more lines: see report.html)")
        if len(failures) > 1:
            out.append(f"        (and {plural(len(failures) - 1, 'more failure')} of this check: see report.html)")
    curl = r.get("curl") or []
    if curl:
        out.append(f"      {r['check_id']}'s last requests (key from $MEMCONFORM_API_KEY; all of them in exchanges.har):")
        out += [f"        {clip(line, EXAMPLE_CHARS)}" for line in curl[-CURL_LINES:]]
    return out


def _cause_lines(groups: list[Group], heading: str) -> list[str]:
    if not groups:
        return []
    checks = len({r["check_id"] for g in groups for r in g.results})
    out = [f"{heading}: {plural(len(groups), 'cause')} for {plural(checks, 'check')}"]
    for g in groups:
        out.append(f"  {len(g.results)} × {g.label}: {clip(g.cause) or '(no reason given)'}")
        out.append(f"      {plural(len(g.results), 'check')}: {named(g.check_ids)}")
        out += _example(g)
        rerun = rerun_line(g)
        if rerun:
            out.append(f"      rerun: {rerun}")
    return out


def causes_text(results: list[dict[str, Any]]) -> str:
    groups = group_problems(results)
    problems = [g for g in groups if g.label != "warning"]
    warnings = [g for g in groups if g.label == "warning"]
    out = _cause_lines(problems, "Failures by cause")
    if warnings:
        out += ([""] if out else []) + _cause_lines(
            warnings, "Warnings by cause (SHOULD/MAY rules no level requires: not failures)")
    return "\n".join(out) + "\n" if out else ""


def failure_text(r: dict[str, Any]) -> str:
    """One result in full for a reader (the terminal, summary.md, junit.xml, the pytest plugin), with its values shown as
    themselves (a string never as a JSON string of JSON) and schemathesis's schema dumps cut (report.jsonl keeps
    them whole)."""
    tag = " (warning: a SHOULD/MAY rule no level requires)" if r.get("warning") else ""
    lines = [f"{r['check_id']} [{r['spec']} {r['section']} {r['keyword']}]{tag} {r['sentence']}"]
    if r.get("reason"):
        lines.append(f"  reason: {outcome_label(r) + ': ' if r['outcome'] == 'skipped' else ''}{r['reason']}")
    for f in r.get("failures") or []:
        lines.append(f"  - {f['title']} at {f['path']}")
        lines.append(f"      received: {shown_value(f.get('received'))}")
        lines.append(f"      expected: {shown_value(f.get('expected'))}")
        if f.get("detail"):
            lines += [f"      {line}" for line in cut_schema_dump(str(f["detail"])).split("\n")]
        if f.get("readings"):
            lines.append(f"      fails under reading(s): {', '.join(f['readings'])}")
    if r["outcome"] in ("failed", "errored") and r.get("reproduce"):
        lines.append(f"  Reproduce with: {r['reproduce']}")
    if r["outcome"] in ("failed", "errored") and r.get("curl"):
        lines.append("  The check's last requests (key from $MEMCONFORM_API_KEY; all of them in exchanges.har):")
        lines += [f"    {c}" for c in r["curl"]]
    return "\n".join(lines)
