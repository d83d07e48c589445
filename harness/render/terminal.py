"""What `memconform run` prints after its progress, for a person reading a terminal: the failures by cause
(each cause once, with its count, the checks it hit, one example and one rerun line), warnings apart, one
line of readings per suite, the notes, then the verdict table last and the report's paths, report.html
first. `verbose` adds every failure in full and every reading. Rendered from the report's records, as
summary.md and report.html are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core.report import Report
from ..core.wording import plural
from .common import spec_versions
from .groups import Group, clip, cut_schema_dump, failure_text, group_problems, named, shown_value

EXAMPLE_CHARS = 300  # one received or expected value in the by-cause list; report.html has it whole
NOTE_CHARS = 240
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


def render_causes(report: Report) -> str:
    """Failures and errors by cause, then the warnings by cause, counted apart."""
    return causes_text(report.results)


def causes_text(results: list[dict[str, Any]]) -> str:
    groups = group_problems(results)
    problems = [g for g in groups if g.label != "warning"]
    warnings = [g for g in groups if g.label == "warning"]
    out = _cause_lines(problems, "Failures by cause")
    if warnings:
        out += ([""] if out else []) + _cause_lines(
            warnings, "Warnings by cause (SHOULD/MAY rules no level requires: not failures)")
    return "\n".join(out) + "\n" if out else ""


def _readings(footer: dict[str, Any], verbose: bool) -> list[str]:
    readings = footer.get("readings") or []
    if verbose:
        return [f"reading ({x['suite']} {x['point']}): seen {', '.join(x['seen'])}" for x in readings]
    by_suite: dict[str, int] = {}
    for x in readings:
        by_suite[x["suite"]] = by_suite.get(x["suite"], 0) + 1
    return [f"readings ({suite}): {plural(n, 'point')} followed, see summary.md#readings (--verbose prints them)"
            for suite, n in by_suite.items()]


def _level_table(footer: dict[str, Any], versions: dict[str, str]) -> list[str]:
    """Per suite: each level's counts, warnings apart from failures, then its verdict line."""
    out: list[str] = []
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for lv in footer["levels"]:
        by_suite.setdefault(lv["suite"], []).append(lv)
    for suite, levels in by_suite.items():
        width = max([24, *(len(v["title"]) for v in levels)])
        spec = f" ({versions[suite]})" if versions.get(suite) else ""
        out.append(f"{suite}{spec}")
        out.append(f"  {'level':<{width}} {'passed':>6} {'failed':>6} {'warnings':>8} {'errored':>7} {'skipped':>7}")
        for v in levels:
            cnt = v.get("counts") or {}
            warned = len(v.get("warnings") or [])
            failed = max(0, cnt.get("failed", 0) - warned)  # a warning is a failed SHOULD no clause lists: apart
            out.append(f"  {v['title']:<{width}} {cnt.get('passed', 0):>6} {failed:>6} {warned:>8} "
                       f"{cnt.get('errored', 0):>7} {cnt.get('skipped', 0):>7}")
        out += [f"  {v['verdict']}" for v in levels]
    return out


def totals_line(footer: dict[str, Any]) -> str:
    c = footer["counts"]
    warnings = int(footer.get("warnings", 0))
    return (f"{c['passed']} passed, {c['failed'] - warnings} failed, {plural(warnings, 'warning')}, "
            f"{c['errored']} errored, {c['skipped']} skipped")


def render_terminal(report: Report, report_dir: Path | str | None, verbose: bool = False) -> str:
    """Everything after the progress lines: causes, readings and notes, the verdicts last, then the paths."""
    out: list[str] = []
    footer = report.footer
    causes = render_causes(report)
    if causes:
        out += [causes.rstrip("\n"), ""]
    if verbose:
        for r in report.results:
            if r["outcome"] in ("failed", "errored"):
                out += [failure_text(r), ""]
    if footer is None:
        out.append("truncated run: the report has no footer, so no level has a verdict")
    else:
        out += _readings(footer, verbose)
        out += [f"note ({n['suite']}): {n['note'] if verbose else clip(str(n['note']), NOTE_CHARS)}"
                for n in footer.get("notes", [])]
        if footer.get("readings") or footer.get("notes"):
            out.append("")
        out += _level_table(footer, spec_versions(report))
        out += ["", totals_line(footer)]
    if report_dir is not None:
        folder = str(report_dir).rstrip("/")
        out.append(f"report: {folder}/report.html (report.jsonl, junit.xml, summary.md beside it)")
    return "\n".join(out) + "\n"
