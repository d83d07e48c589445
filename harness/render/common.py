"""What every renderer shares: text UTF-8 can carry, the spec versions a report names, the outcome word."""

from __future__ import annotations

import re
from typing import Any

from ..core.readings import contradictions
from ..core.report import Report

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: Any) -> str:
    """A str that UTF-8 can encode: a lone surrogate (JSON allows "\\ud800") becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", str(text))


def spec_versions(report: Report) -> dict[str, str]:
    """suite -> "<spec title> <version>" of the installed suites the report names (best effort)."""
    from ..core.suite import get_suite

    out: dict[str, str] = {}
    for name in report.header.get("suites", []):
        try:
            suite = get_suite(name)
        except Exception:  # noqa: BLE001 - a report from another installation: the spec named by results
            spec = next((r["spec"] for r in report.results if r["suite"] == name), "")
            out[name] = spec or "unknown"
            continue
        out[name] = title_with_version(suite.spec_title, suite.version)
    return out


def title_with_version(title: str, version: str) -> str:
    """"<title> <version>", the version once: a title that already ends with it ("Open Memory Protocol v0.1")
    is left as it is."""
    title, version = title.strip(), version.strip()
    if not version or title.endswith((f" {version}", f" v{version}", f" V{version}")):
        return title
    return f"{title} {version}"


def outcome_label(r: dict[str, Any]) -> str:
    """The one word a reader sees: warning and inconclusive and not applicable are told apart."""
    if r["outcome"] == "failed" and r.get("warning"):
        return "warning"
    if r["outcome"] == "skipped" and r.get("inconclusive"):
        return "inconclusive"
    if r["outcome"] == "skipped" and r.get("not_applicable"):
        return "not applicable"
    return str(r["outcome"])


def readings_shown(report: Report) -> list[dict[str, Any]]:
    """The footer's readings as every rendering shows them: each entry with `contradicted_by`, the checks
    that met its point in the run and failed. A contradicted reading is never shown as followed: its
    renderings name the failing checks and withhold what was seen (report.jsonl keeps it)."""
    footer = report.footer or {}
    readings = footer.get("readings") or []
    against = contradictions(readings, report.results)
    return [{**x, "contradicted_by": against.get((x["suite"], x["point"]), [])} for x in readings]


def contradicted_text(x: dict[str, Any]) -> str:
    """"E6: contradicted by emp.writer_waits_for_lock" (the failing checks that met the point)."""
    return f"{x['point']}: contradicted by {', '.join(x['contradicted_by'])}"
