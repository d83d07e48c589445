"""The report is a versioned JSON Lines stream: header, one line per result, footer.

JUnit XML and the Markdown summary are rendered from the stream, never from runner state, so a
report file on its own is the whole truth. A stream with no footer is a truncated run.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import IO, Any
from xml.sax.saxutils import escape, quoteattr

from .. import __version__
from .model import HarnessError, Result
from .redact import Redactor

REPORT_VERSION = 1


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    return json.loads(resources.files("memconform").joinpath("schemas/report.schema.json").read_text("utf-8"))


def validate_line(line: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(report_schema()).validate(line)


class ReportWriter:
    """Writes each line as it comes, flushed, so a crash leaves a readable, truncated stream."""

    def __init__(self, path: Path, redactor: Redactor) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.redactor = redactor
        self._fh: IO[str] = path.open("w", encoding="utf-8")

    def write(self, line: dict[str, Any]) -> None:
        line = self.redactor.deep(line)
        validate_line(line)
        self._fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def header(self, *, target: str, suites: list[str], profile: str, seed: int, options: dict[str, str], command: str) -> None:
        self.write({
            "type": "header", "report_version": REPORT_VERSION, "harness_version": __version__,
            "started_at": now(), "target": target, "suites": suites, "profile": profile, "seed": seed,
            "options": options, "command": command, "python": platform.python_version(),
        })

    def result(self, result: Result) -> None:
        self.write(result.to_json())

    def footer(self, counts: dict[str, int], levels: list[dict[str, Any]], exit_code: int,
               notes: list[dict[str, str]] | None = None) -> None:
        self.write({"type": "footer", "finished_at": now(), "counts": counts, "levels": levels, "exit_code": exit_code,
                    "notes": notes or []})

    def close(self) -> None:
        self._fh.close()


def read_report(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    header: dict[str, Any] | None = None
    results: list[dict[str, Any]] = []
    footer = None
    # split on "\n" only: str.splitlines() would also break on U+2028, U+0085 ... inside JSON strings
    for n, text in enumerate(path.read_text("utf-8").rstrip("\n").split("\n"), 1):
        try:
            line = json.loads(text)
        except ValueError:
            raise HarnessError(f"{path}:{n}: not a JSON line (a run cut off mid-write?)") from None
        validate_line(line)
        kind = line["type"]
        if kind == "header":
            header = line
        elif kind == "result":
            results.append(line)
        else:
            footer = line
    if header is None:
        raise HarnessError(f"{path}: no header line")
    return header, results, footer


def render_junit(header: dict[str, Any], results: Iterable[dict[str, Any]], footer: dict[str, Any] | None) -> str:
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_suite.setdefault(r["suite"], []).append(r)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for suite, items in by_suite.items():
        fails = sum(r["outcome"] == "failed" for r in items)
        errs = sum(r["outcome"] == "errored" for r in items)
        skips = sum(r["outcome"] == "skipped" for r in items)
        total = sum(r["duration_s"] for r in items)
        out.append(f'  <testsuite name={quoteattr(suite)} tests="{len(items)}" failures="{fails}" errors="{errs}" skipped="{skips}" time="{total:.3f}">')
        for r in items:
            name = quoteattr(r["check_id"])
            out.append(f'    <testcase classname={quoteattr(suite + "." + r["level"])} name={name} time="{r["duration_s"]:.3f}">')
            text = escape(render_failure_text(r))
            if r["outcome"] == "failed":
                out.append(f'      <failure message={quoteattr(r["failures"][0]["title"])}>{text}</failure>')
            elif r["outcome"] == "errored":
                out.append(f'      <error message={quoteattr(r["reason"][:200])}>{text}</error>')
            elif r["outcome"] == "skipped":
                out.append(f'      <skipped message={quoteattr(r["reason"][:200])}/>')
            out.append("    </testcase>")
        out.append("  </testsuite>")
    if footer is None:
        out.append('  <!-- truncated run: the report has no footer -->')
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def render_failure_text(r: dict[str, Any]) -> str:
    lines = [f"{r['check_id']} [{r['spec']} {r['section']} {r['keyword']}] {r['sentence']}"]
    if r["reason"]:
        lines.append(f"  reason: {r['reason']}")
    for f in r["failures"]:
        lines.append(f"  - {f['title']} at {f['path']}")
        lines.append(f"      received: {json.dumps(f['received'], ensure_ascii=False, default=str)}")
        lines.append(f"      expected: {json.dumps(f['expected'], ensure_ascii=False, default=str)}")
        if f.get("detail"):
            lines.append(f"      {f['detail']}")
    if r["outcome"] in ("failed", "errored") and r.get("reproduce"):
        lines.append(f"  Reproduce with: {r['reproduce']}")
    return "\n".join(lines)


def render_markdown(header: dict[str, Any], results: list[dict[str, Any]], footer: dict[str, Any] | None) -> str:
    out = [
        "# memconform report", "",
        f"- target: `{header['target']}`", f"- suites: {', '.join(header['suites'])}",
        f"- profile: `{header['profile']}`, seed `{header['seed']}`", f"- harness: {header['harness_version']}",
        f"- command: `{header['command']}`", "",
    ]
    if footer is None:
        out += ["**Truncated run: the report has no footer.**", ""]
    else:
        out += ["## Levels", ""] + [f"- **{lv['suite']}** {lv['verdict']}" for lv in footer["levels"]] + [""]
        if footer.get("notes"):
            out += ["## Notes", ""] + [f"- **{n['suite']}** {n['note']}" for n in footer["notes"]] + [""]
        c = footer["counts"]
        out += [f"passed {c['passed']}, failed {c['failed']}, errored {c['errored']}, skipped {c['skipped']}", ""]
    out += ["## Results", "", "| check | section | keyword | level | outcome |", "|---|---|---|---|---|"]
    for r in results:
        out.append(f"| `{r['check_id']}` | {r['section']} | {r['keyword']} | {r['level']} | {r['outcome']} |")
    problems = [r for r in results if r["outcome"] in ("failed", "errored")]
    if problems:
        out += ["", "## Failures and errors", ""]
        for r in problems:
            out += ["```", render_failure_text(r), "```", ""]
    return "\n".join(out) + "\n"
