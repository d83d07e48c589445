"""The report is a versioned JSON Lines stream: header, one line per result, footer.

JUnit XML, the Markdown summary and the terminal summary are rendered from the stream (a `Report`
read back), never from runner state, so a report file on its own is the whole truth. A stream
with no footer is a truncated run. Every line is strict JSON: values pass through
`Redactor.line` (plain data, secrets out) and `json.dumps(allow_nan=False)`.

The footer carries a digest chain: the SHA-256 of every line before it, each with its newline (the bytes
of report.jsonl up to the footer, so `head -n -1 report.jsonl | sha256sum` recomputes it), and how many
lines that is. Every reader recomputes it as it reads (`Report.verify_chain`): a line changed, added or
dropped after the run wrote it names the report as changed. A chain is no signature (anyone who rewrites
the whole file can recompute it); what stops a target rewriting the run's own folder is the run itself
(run/session.py keeps every line in memory and compares the folder with what it wrote before the swap).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import IO, Any

from .. import __version__
from .handed import MAX_HANDED_BYTES, HandedFileError, handed_lines
from .json_reader import JsonRejected, Policy, read_json
from .readings import contradictions
from .redact import Redactor
from .results import HarnessError, Result
from .wording import plural

REPORT_VERSION = 1
MAX_REPORT_BYTES = MAX_HANDED_BYTES
# a report line read back: strict (no NaN, no integer past Python's bound), nested no deeper than a
# reply may be plus the result's own levels
REPORT_LINE = Policy(max_depth=512, duplicates="refuse")


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    return json.loads(resources.files("memconform").joinpath("schemas/report.schema.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(report_schema())


def validate_line(line: dict[str, Any]) -> None:
    _validator().validate(line)


# characters str.splitlines() (and many JSON Lines readers) take for a line break, though JSON allows them
# raw inside strings: written escaped, so one record is one physical line for every reader
_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def dumps_line(line: dict[str, Any]) -> str:
    """One report line as strict JSON (no NaN/Infinity; the line is already plain data)."""
    text = json.dumps(line, ensure_ascii=False, allow_nan=False)
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


class ReportWriter:
    """Writes each line as it comes, flushed, so a crash leaves a readable, truncated stream."""

    def __init__(self, path: Path | None, redactor: Redactor) -> None:
        self.path = path
        self.redactor = redactor
        self.lines: list[str] = []  # the same records, kept: the run renders and signs from these, never from disk
        self._chain = hashlib.sha256()  # every line before the footer, with its newline
        self._whole = hashlib.sha256()  # every byte written to the file
        self.size = 0
        self._fh: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("w", encoding="utf-8")

    def write(self, line: dict[str, Any], own: dict[str, Any] | None = None) -> None:
        """One line, redacted; `own`: fields of the harness's own making added after redaction (a digest
        is hex: masking a key that happens to be in it would break it)."""
        line = {**self.redactor.line(line), **(own or {})}
        validate_line(line)
        text = dumps_line(line)
        data = (text + "\n").encode("utf-8")
        if line["type"] != "footer":
            self._chain.update(data)
        self._whole.update(data)
        self.size += len(data)
        self.lines.append(text)
        if self._fh is not None:
            self._fh.write(text + "\n")
            self._fh.flush()

    def chain(self) -> dict[str, Any]:
        """The footer's digest chain over the lines written so far."""
        return {"algorithm": "sha256", "lines": len(self.lines), "value": self._chain.hexdigest()}

    def file_digest(self) -> str:
        """The SHA-256 of report.jsonl as this writer wrote it (what the file on disk must still be)."""
        return self._whole.hexdigest()

    def report(self, **kwargs: Any) -> Report:
        """The records written so far, read back by the typed reader."""
        return Report.from_lines(self.lines, source=str(self.path or "report"), **kwargs)

    def header(self, *, target: str, suites: list[str], profile: str, seed: int, options: dict[str, str], command: str,
               budget: dict[str, float] | None = None,
               require_hooks: bool = False, containment: str | None = None, folder_view: str | None = None,
               planned_calls: dict[str, int] | None = None) -> None:
        self.write({
            "type": "header", "report_version": REPORT_VERSION, "harness_version": __version__,
            "started_at": now(), "target": target, "suites": suites, "profile": profile, "seed": seed,
            "options": options, "command": command, "python": platform.python_version(),
            **({"budget": budget} if budget else {}),
            **({"require_hooks": True} if require_hooks else {}),
            **({"containment": containment} if containment else {}),  # how a cmd: target's processes are kept in
            **({"folder_view": folder_view} if folder_view else {}),  # what they can see of the report folder
            **({"planned_calls": planned_calls} if planned_calls else {}),  # per suite, what this profile sent its reference
        })

    def result(self, result: Result) -> None:
        self.write(result.to_json())

    def footer(self, counts: dict[str, int], levels: list[dict[str, Any]], exit_code: int,
               notes: list[dict[str, str]] | None = None, readings: list[dict[str, Any]] | None = None,
               warnings: int = 0, calls: list[dict[str, Any]] | None = None) -> None:
        self.write({"type": "footer", "finished_at": now(), "counts": counts, "levels": levels, "exit_code": exit_code,
                    "notes": notes or [], "readings": readings or [], "warnings": warnings,
                    **({"calls": calls} if calls else {})}, own={"chain": self.chain()})

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


class ReportError(HarnessError):
    """A report stream that cannot be read as a whole run."""


class EmptyReport(ReportError):
    """No lines at all, or (when results are required) not one result."""


class MissingHeader(ReportError):
    """The first line is not the header."""


class MissingFooter(ReportError):
    """The stream ends without a footer: a truncated run."""


class DuplicateResult(ReportError):
    """The same check reported twice."""


class BadLine(ReportError):
    """A line that is not strict JSON, or not a report line of the published schema."""


class ChangedReport(ReportError):
    """A report whose lines are not those its footer's digest chain was computed over."""


def loads_line(text: str) -> Any:
    """One report line, by the one bounded reader: strict JSON, no NaN or Infinity, no member named twice
    (readers keeping the first and readers keeping the last would see two reports in one file)."""
    return read_json(text.encode("utf-8", "surrogatepass"), REPORT_LINE)


@dataclass
class Report:
    header: dict[str, Any]
    results: list[dict[str, Any]] = field(default_factory=list)
    footer: dict[str, Any] | None = None
    chain_seen: dict[str, Any] | None = None  # the digest chain over the lines before the footer, as read

    @property
    def truncated(self) -> bool:
        return self.footer is None

    def verify_chain(self, source: str = "the report", required: bool = False) -> str | None:
        """None when the footer's digest chain is that of the lines read; else what is wrong, in one
        sentence naming `source`. A truncated run has no footer and so nothing to compare (None); a
        footer without a chain (a report of an earlier memconform) is a problem only when `required`."""
        if self.footer is None:
            return None
        stated = self.footer.get("chain")
        if stated is None:
            return f"{source} carries no digest chain: it cannot tell whether it was changed after it was written" \
                if required else None
        seen = self.chain_seen or {}
        if stated.get("lines") != seen.get("lines") or stated.get("value") != seen.get("value"):
            return (f"{source} was changed after it was written: its footer's digest chain is over "
                    f"{stated.get('lines')} lines with SHA-256 {str(stated.get('value'))[:16]}..., the lines read are "
                    f"{seen.get('lines')} with SHA-256 {str(seen.get('value'))[:16]}...")
        return None

    def check_chain(self, source: str = "the report", required: bool = False) -> None:
        """verify_chain, raised as ChangedReport."""
        problem = self.verify_chain(source, required)
        if problem is not None:
            raise ChangedReport(problem)

    @classmethod
    def from_lines(cls, lines: Iterable[str], *, allow_truncated: bool = False, allow_empty: bool = False,
                   source: str = "report") -> Report:
        header: dict[str, Any] | None = None
        results: list[dict[str, Any]] = []
        footer: dict[str, Any] | None = None
        seen: set[str] = set()
        chain = hashlib.sha256()
        n = 0
        for n, text in enumerate(lines, 1):
            if text.endswith("\n"):
                text = text[:-1]
            if not text and footer is not None:
                continue
            try:  # the one bounded reader: a line nested 100,000 deep is refused, not a RecursionError
                line = read_json(text.encode("utf-8", "surrogatepass"), REPORT_LINE)
            except JsonRejected as exc:
                raise BadLine(f"{source}:{n}: not a strict JSON line ({exc}; a run cut off mid-write?)") from None
            if not isinstance(line, dict):
                raise BadLine(f"{source}:{n}: not a report line: not a JSON object")
            try:
                validate_line(line)
            except Exception as exc:  # jsonschema.ValidationError: say where, in one line
                raise BadLine(f"{source}:{n}: not a report line: {getattr(exc, 'message', exc)}") from None
            kind = line["type"]
            if footer is not None:
                raise BadLine(f"{source}:{n}: a {kind} line after the footer")
            if kind == "header":
                if header is not None:
                    raise BadLine(f"{source}:{n}: a second header")
                header = line
            elif header is None:
                raise MissingHeader(f"{source}:{n}: the stream does not start with a header")
            elif kind == "result":
                if line["check_id"] in seen:
                    raise DuplicateResult(f"{source}:{n}: {line['check_id']} reported twice")
                seen.add(line["check_id"])
                results.append(line)
            else:
                footer = line
            if footer is None:
                chain.update((text + "\n").encode("utf-8", "surrogatepass"))
        if header is None:
            raise EmptyReport(f"{source}: empty report (no header line)") if n == 0 else MissingHeader(f"{source}: no header line")
        if not results and not allow_empty:
            raise EmptyReport(f"{source}: no result lines (no check ran)")
        if footer is None and not allow_truncated:
            raise MissingFooter(f"{source}: no footer line (a truncated run)")
        counted = len(results) + 1
        return cls(header, results, footer, {"algorithm": "sha256", "lines": counted, "value": chain.hexdigest()})

    @classmethod
    def from_path(cls, path: Path, **kwargs: Any) -> Report:
        # read as a handed file (core/handed.py): regular, bounded, line by line; split on "\n" only
        # (str.splitlines() would also break on U+2028, U+0085 ... inside JSON strings)
        try:
            return cls.from_lines(decoded_lines(handed_lines(path, MAX_REPORT_BYTES, what="a report"), path),
                                  source=str(path), **kwargs)
        except HandedFileError as exc:  # a report that cannot be read is a ReportError, as callers expect
            raise ReportError(str(exc)) from None


def decoded_lines(lines: Iterable[bytes], path: Path) -> Iterator[str]:
    for n, raw in enumerate(lines, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadLine(f"{path}:{n}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def read_report(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, results, footer) of a possibly truncated, possibly empty report."""
    report = Report.from_path(path, allow_truncated=True, allow_empty=True)
    return report.header, report.results, report.footer


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def render_summary(report: Report) -> str:
    """The terminal summary after a run: per-suite level table, verdicts, notes, readings, totals."""
    out: list[str] = []
    footer = report.footer
    if footer is None:
        return "truncated run: the report has no footer\n"
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for lv in footer["levels"]:
        by_suite.setdefault(lv["suite"], []).append(lv)
    for suite, levels in by_suite.items():
        width = max([30, *(len(v["title"]) for v in levels)])
        out.append(f"{suite}: {'level':<{width}} {'passed':>6} {'failed':>6} {'errored':>7} {'skipped':>7}")
        for v in levels:
            cnt = v.get("counts") or {}
            out.append(f"{'':<{len(suite) + 2}}{v['title']:<{width}} {cnt.get('passed', 0):>6} {cnt.get('failed', 0):>6} "
                       f"{cnt.get('errored', 0):>7} {cnt.get('skipped', 0):>7}")
        out += [f"  {v['verdict']}" for v in levels]
    out += [f"note ({n['suite']}): {n['note']}" for n in footer.get("notes", [])]
    out += [f"calls ({c['suite']}): {calls_text(c)}" for c in footer.get("calls", [])]
    against = contradictions(footer.get("readings", []), report.results)  # never shown as followed
    out += [f"reading ({x['suite']} {x['point']}): contradicted by {', '.join(against[(x['suite'], x['point'])])}"
            if (x["suite"], x["point"]) in against else f"reading ({x['suite']} {x['point']}): seen {', '.join(x['seen'])}"
            for x in footer.get("readings", [])]
    c = footer["counts"]
    warnings = footer.get("warnings", 0)
    out += ["", f"{c['passed']} passed, {c['failed']} failed" + (f" ({plural(warnings, 'warning')})" if warnings else "")
            + f", {c['errored']} errored, {c['skipped']} skipped"]
    return "\n".join(out) + "\n"


def calls_text(figures: dict[str, Any]) -> str:
    """`552 calls to the target`, and for a long-lived command target how many processes served them."""
    calls, processes = figures.get("calls", 0), figures.get("processes")
    served = f", served by {plural(processes, 'process')}" if processes is not None else ""
    return f"{plural(calls, 'call')} to the target{served}"
