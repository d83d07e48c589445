"""summary.md for a pull-request comment: verdicts and failures first, the full table folded.

GitHub refuses a comment over 65,536 characters: the summary stays under LIMIT, cutting the
failure details first (each cut said, pointing at report.html / report.jsonl), never the verdicts.
"""

from __future__ import annotations

from typing import Any

from ..core.report import Report, calls_text
from ..core.wording import visible
from .common import clean, outcome_label, readings_shown
from .groups import clip, failure_text, group_problems, plural

LIMIT = 65_000
FAILURE_CHARS = 4_000  # one failure's block in the comment; report.html has it whole


# the characters that give text a meaning in Markdown (CommonMark + GFM) wherever _cell puts it (inside a
# table cell or a list item, never at a line's start): emphasis, code, links and images, tables,
# strikethrough, each escaped with a backslash; "<", ">" and "&" as entities, so no HTML element or entity
# comes from the data; a line break cannot end the cell
_MARKDOWN_PUNCTUATION = {ord(c): "\\" + c for c in "\\`*_[]|~"}
_MARKDOWN_PUNCTUATION.update({ord("<"): "&lt;", ord(">"): "&gt;", ord("&"): "&amp;", ord("\n"): " ", ord("\r"): " "})


def _cell(text: Any) -> str:
    """Text from a report in Markdown (a table cell, a list item, a heading): shown as the text it is, never as
    Markdown or HTML; a line break cannot end the cell; a control character is written out."""
    return visible(clean(text)).translate(_MARKDOWN_PUNCTUATION)


def _code(text: Any) -> str:
    """An inline code span: no "|" or backtick from the value can end it or the table cell."""
    return "`" + visible(clean(text)).replace("`", "'").replace("|", "\\|").replace("\n", " ").replace("\r", " ") + "`"


def _fence(text: str) -> list[str]:
    body = visible(clean(text)).replace("```", "`\u200b``")
    if len(body) > FAILURE_CHARS:
        body = body[:FAILURE_CHARS] + f"\n... ({len(body) - FAILURE_CHARS} more characters: see report.html)"
    return ["```", body, "```", ""]


def _head(report: Report) -> list[str]:
    h = report.header
    return ["# memconform report", "",
            f"target {_code(h['target'])} · suites {_cell(', '.join(map(str, h['suites'])))} · profile {_code(h['profile'])} · "
            f"seed {_code(h['seed'])} · harness {_cell(h['harness_version'])}", ""]


def _verdicts(report: Report) -> list[str]:
    footer = report.footer
    if footer is None:
        return ["**Truncated run: the report has no footer, so no level has a verdict.**", ""]
    out = ["## Verdicts", "", "| suite | level | verdict |", "|---|---|---|"]
    out += [f"| {_cell(lv['suite'])} | {_cell(lv['title'])} | **{_cell(lv['status'])}**: {_cell(lv['verdict'])} |"
            for lv in footer["levels"]]
    c = footer["counts"]
    warnings = int(footer.get("warnings", 0))  # a warning is counted apart from the failures, everywhere
    out += ["", f"passed {c['passed']}, failed {c['failed'] - warnings}, {plural(warnings, 'warning')}, "
                f"errored {c['errored']}, skipped {c['skipped']}; exit code {footer['exit_code']}", ""]
    return out


def _problems(report: Report, room: int) -> list[str]:
    groups = group_problems(report.results)
    if not groups:
        return []
    total = sum(len(g.results) for g in groups)
    out = [f"## Failures, errors and warnings ({plural(total, 'check')}, {plural(len(groups), 'cause')})", ""]
    used = 0
    for i, g in enumerate(groups):
        shown, _ = g.example()  # the check whose own words name the cause
        head = f"**{_cell(g.label)}** {_code(g.first['check_id'])}" if len(g.results) == 1 else (
            f"**{_cell(g.label)} ×{len(g.results)}**, one cause ({_cell(clip(g.cause))}): "
            + ", ".join(_code(c) for c in g.check_ids[:50])
            + (f" and {len(g.check_ids) - 50} more" if len(g.check_ids) > 50 else ""))
        block = [head, "", *_fence(failure_text(shown))]
        size = sum(len(x) + 1 for x in block)
        if used + size > room:
            rest = [c for x in groups[i:] for c in x.check_ids]
            out += [f"... and {len(rest)} more not shown here (comment size limit): "
                    + ", ".join(_code(x) for x in rest[:200]) + "; see report.html", ""]
            break
        out += block
        used += size
    return out


def _table(report: Report) -> list[str]:
    out = ["<details><summary>Every check (" + str(len(report.results)) + ")</summary>", "",
           "| check | section | keyword | level | outcome |", "|---|---|---|---|---|"]
    out += [f"| {_code(r['check_id'])} | {_cell(r['section'])} | {_cell(r['keyword'])} | {_cell(r['level'])} | {_cell(outcome_label(r))} |"
            for r in report.results]
    return out + ["", "</details>", ""]


def _readings_notes(report: Report) -> list[str]:
    footer = report.footer or {}
    out: list[str] = []
    if footer.get("notes"):
        out += ["## Notes", ""] + [f"- **{_cell(n['suite'])}** {_cell(n['note'])}" for n in footer["notes"]] + [""]
    if footer.get("calls"):
        out += ["## Calls to the target", ""] + [f"- **{_cell(c['suite'])}** {calls_text(c)}" for c in footer["calls"]] + [""]
    if footer.get("readings"):  # "## Readings": the terminal points at summary.md#readings
        shown = readings_shown(report)
        against = sum(1 for x in shown if x["contradicted_by"])
        also = (f" {plural(against, 'point')} contradicted by a failure of a check that met the same point: the "
                "reading is withheld (report.jsonl keeps what was seen)." if against else "")
        out += ["## Readings", "", f"{plural(len(shown), 'open point')} of the specs, with the reading the "
                f"target was seen to follow.{also}", "",
                "<details><summary>Readings seen</summary>", "", "| suite | open point | reading(s) seen | checks |",
                "|---|---|---|---|"]
        out += [f"| {_cell(x['suite'])} | {_cell(x['point'])} | {_cell(_seen_cell(x))} | {_cell(', '.join(x['checks']))} |"
                for x in shown] + ["", "</details>", ""]
    return out


def _seen_cell(x: dict[str, Any]) -> str:
    if x["contradicted_by"]:
        return f"contradicted by {', '.join(x['contradicted_by'])} (failed)"
    return ", ".join(x["seen"])


def render_markdown(report: Report, limit: int = LIMIT) -> str:
    head = _head(report) + _verdicts(report)
    tail = _readings_notes(report)
    table = _table(report)
    fixed = sum(len(x) + 1 for x in head + tail)
    if fixed + sum(len(x) + 1 for x in table) > limit // 2:  # the folded table yields to the failures
        table = ["<details><summary>Every check</summary>", "",
                 f"{len(report.results)} checks: too many for one comment; see report.html", "", "</details>", ""]
    room = limit - fixed - sum(len(x) + 1 for x in table) - 500
    text = "\n".join(head + _problems(report, room) + tail + table) + "\n"
    return text if len(text) <= limit else text[: limit - 60] + "\n\n(cut at the comment size limit: see report.html)\n"
