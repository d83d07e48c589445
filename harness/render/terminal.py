"""What `memconform run` prints after its progress, for a person reading a terminal: the failures by cause
(each cause once, with its count, the checks it hit, one example and one rerun line), warnings apart, one
line of readings per suite (a reading that a failure of the same point contradicts is never counted as
followed), the notes, then the verdict table last and the report's paths, report.html first. `verbose`
adds every failure in full and every reading. Rendered from the report's records, as summary.md and
report.html are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.report import Report
from ..core.wording import plural
from .common import contradicted_text, readings_shown, spec_versions
from .groups import causes_text, clip, failure_text

NOTE_CHARS = 240


def render_causes(report: Report) -> str:
    """Failures and errors by cause, then the warnings by cause, counted apart."""
    return causes_text(report.results)


def _readings(report: Report, verbose: bool) -> list[str]:
    """One line per suite: the points followed, and those a failing check of the same point contradicts
    (never counted as followed); `verbose`: every reading, a contradicted one by the checks that failed."""
    readings = readings_shown(report)
    if verbose:
        return [f"reading ({x['suite']} {x['point']}): contradicted by {', '.join(x['contradicted_by'])}" if x["contradicted_by"]
                else f"reading ({x['suite']} {x['point']}): seen {', '.join(x['seen'])}" for x in readings]
    followed: dict[str, int] = {}
    against: dict[str, list[str]] = {}
    for x in readings:
        followed.setdefault(x["suite"], 0)
        if x["contradicted_by"]:
            against.setdefault(x["suite"], []).append(contradicted_text(x))
        else:
            followed[x["suite"]] += 1
    out = []
    for suite, n in followed.items():
        contradicted = against.get(suite, [])
        also = (f", {len(contradicted)} contradicted by a failure of the same point "
                f"({clip('; '.join(contradicted), NOTE_CHARS)})" if contradicted else "")
        out.append(f"readings ({suite}): {plural(n, 'point')} followed{also}, see summary.md#readings "
                   "(--verbose prints them)")
    return out


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
        out += _readings(report, verbose)
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
