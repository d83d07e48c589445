"""junit.xml that CI systems read right.

- One testcase per check, named by the check id (the CLI and the pytest plugin write the same file:
  both go through Session), classname `<suite>.<level>`.
- A failed check that no level requires (a SHOULD/MAY warning) is not a <failure>: Jenkins and
  GitHub would mark a conformant run failed or unstable. It is a testcase whose <system-out> starts
  with WARNING, and the testsuite's properties count and name the warnings (`warnings`,
  `warning.<check id>`): a <properties> inside a <testcase> is invalid under the Jenkins xunit schema.
- A suite with no testcase (its target could not start, or the run ended without results) is one
  <error> testcase, `<suite>.run`: an empty testsuite reads as green.
- Properties on every testsuite: seed, profile, target, harness version, spec version, report
  version, and `truncated` when the report has no footer.
- Well-formed whatever the target sends: XML-invalid characters and lone surrogates are shown as
  \\xNN / U+FFFD, never written raw.
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..core.report import Report
from .common import clean, spec_versions
from .groups import failure_text

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def xml_text(text: Any) -> str:
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", clean(text))


def _x(text: Any) -> str:
    return escape(xml_text(text))


def _qa(text: Any) -> str:
    return quoteattr(xml_text(text))


def _skip_label(r: dict[str, Any]) -> str:
    return "inconclusive: " if r.get("inconclusive") else "not applicable: " if r.get("not_applicable") else ""


def _is_default(suite: str, key: str, value: Any) -> bool:
    """Is `value` the declared default of option `key`? False when the installed suite does not declare it (a
    report from elsewhere: shown rather than hidden)."""
    from ..core.suite import get_suite

    try:
        spec = get_suite(suite).options.get(key.partition(".")[2])
    except Exception:  # noqa: BLE001 - a suite not installed here
        return False
    return spec is not None and str(value) == spec.default


def run_properties(report: Report, suite: str) -> list[tuple[str, str]]:
    h = report.header
    props = [("seed", str(h["seed"])), ("profile", h["profile"]), ("target", h["target"]),
             ("harness_version", h["harness_version"]), ("report_version", str(h["report_version"])),
             ("spec_version", spec_versions(report).get(suite, "unknown"))]
    # only the options that differ from their defaults: a CI viewer's first screen is not 22 defaults (every option
    # as run stays in report.jsonl's header)
    props += [(f"option.{k}", v) for k, v in sorted(h.get("options", {}).items())
              if k.startswith(suite + ".") and not _is_default(suite, k, v)]
    warnings = [r for r in report.results if r["suite"] == suite and r["outcome"] == "failed" and r.get("warning")]
    if warnings:
        props.append(("warnings", str(len(warnings))))
        props += [(f"warning.{r['check_id']}", r["failures"][0]["title"][:200] if r["failures"] else "") for r in warnings]
    if report.footer is None:
        props.append(("truncated", "true: the report has no footer"))
    else:
        props.append(("exit_code", str(report.footer["exit_code"])))
        props += [(f"level.{lv['level']}", lv["status"]) for lv in report.footer["levels"] if lv["suite"] == suite]
    return props


def _why_no_results(report: Report, suite: str) -> str:
    notes = [n["note"] for n in (report.footer or {}).get("notes", []) if n.get("suite") in (suite, "")
             and not str(n["note"]).startswith("domain:")]  # the domain figures say nothing of why no check ran
    started = [n for n in notes if n.startswith("could not start")]
    return (started or notes or ["the run ended without results: no check ran"])[0]


def _no_results_suite(report: Report, suite: str) -> list[str]:
    """One error testcase for a suite that produced no result: CI must not read an empty suite as green."""
    why = _why_no_results(report, suite)
    out = [f"  <testsuite name={_qa(suite)} tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">",
           "    <properties>"]
    out += [f"      <property name={_qa(k)} value={_qa(v)}/>" for k, v in run_properties(report, suite)]
    out += ["    </properties>",
            f"    <testcase classname={_qa(suite)} name={_qa(suite + '.run')} time=\"0.000\">",
            f"      <error message={_qa(why[:200])} type=\"no results\">{_x(why)}</error>",
            "    </testcase>", "  </testsuite>"]
    return out


def render_junit(report: Report) -> str:
    by_suite: dict[str, list[dict[str, Any]]] = {s: [] for s in report.header.get("suites", [])}
    for r in report.results:
        by_suite.setdefault(r["suite"], []).append(r)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites name=\"memconform\">"]
    if not by_suite and report.footer is not None:  # no suite named at all: the run itself is the case
        by_suite["memconform"] = []
    for suite, items in by_suite.items():
        if not items and report.footer is not None:
            out += _no_results_suite(report, suite)
            continue
        fails = sum(r["outcome"] == "failed" and not r.get("warning") for r in items)
        errs = sum(r["outcome"] == "errored" for r in items)
        skips = sum(r["outcome"] == "skipped" for r in items)
        total = sum(r["duration_s"] for r in items)
        out.append(f"  <testsuite name={_qa(suite)} tests=\"{len(items)}\" failures=\"{fails}\" errors=\"{errs}\" "
                   f"skipped=\"{skips}\" time=\"{total:.3f}\">")
        out.append("    <properties>")
        out += [f"      <property name={_qa(k)} value={_qa(v)}/>" for k, v in run_properties(report, suite)]
        out.append("    </properties>")
        for r in items:
            out.append(f"    <testcase classname={_qa(suite + '.' + r['level'])} name={_qa(r['check_id'])} "
                       f"time=\"{r['duration_s']:.3f}\">")
            text = _x(failure_text(r))
            if r["outcome"] == "failed" and r.get("warning"):
                out.append(f"      <system-out>WARNING (no level requires this rule; a failure under strict)\n{text}</system-out>")
            elif r["outcome"] == "failed":
                out.append(f"      <failure message={_qa(r['failures'][0]['title'][:200])} type=\"nonconformance\">{text}</failure>")
            elif r["outcome"] == "errored":
                out.append(f"      <error message={_qa(r['reason'][:200])} type=\"errored\">{text}</error>")
            elif r["outcome"] == "skipped":
                out.append(f"      <skipped message={_qa(_skip_label(r) + r['reason'][:200])}/>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    if report.footer is None:  # a run that stopped part-way is never read as green
        out += ["  <testsuite name=\"memconform\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">",
                "    <testcase classname=\"memconform\" name=\"memconform.report_complete\">",
                "      <error message=\"truncated run: the report has no footer\" type=\"truncated\"/>",
                "    </testcase>", "  </testsuite>"]
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
