"""report.html, junit.xml, summary.md and badges rendered from a report with hostile target text."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from memconform.core.redact import Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome, Result
from memconform.render.badge import badges
from memconform.render.html import render_html, section_rates
from memconform.render.junit import render_junit
from memconform.render.markdown import LIMIT, render_markdown

HOSTILE = "<script>alert(1)</script>\x00\x07\x1b[31m\ud800 ]]> & \"' `|` </details> \ufffe"


def _result(check_id: str, outcome: Outcome, keyword: str = "MUST", level: str = "1", section: str = "§3.1",
            failures: list[Failure] | None = None, reason: str = "", **flags: Any) -> Result:
    r = Result(check_id=check_id, suite="memoryai", spec="MemoryAI Protocol v1", section=section, keyword=keyword,
               level=level, sentence=f"The sentence of {check_id} {HOSTILE}", outcome=outcome, reason=reason,
               failures=failures or [])
    r.reproduce = f"memconform run --suite memoryai --check {check_id}"
    r.transcript = [f"export -> 200 {HOSTILE}"]
    for k, v in flags.items():
        setattr(r, k, v)
    return r


def _word(i: int) -> str:
    """A word per number, without digits: causes differing only in a number are one cause (numbers are masked)."""
    return "".join("abcdefghij"[int(d)] for d in str(i))


def write_report(path: Path, *, footer: bool = True, many: int = 0) -> Report:
    w = ReportWriter(path, Redactor([]))
    w.header(target=f"http://127.0.0.1:1/{HOSTILE}", suites=["memoryai"], profile="ci", seed=7,
             options={"memoryai.dna_rule": "union"}, command="memconform run")
    results = [
        _result("memoryai.passes_one", Outcome.PASSED),
        _result("memoryai.fails_must", Outcome.FAILED, failures=[Failure(f"bad {HOSTILE}", {"x": HOSTILE}, "y", "$.chunks[0]")]),
        _result("memoryai.warns_should", Outcome.FAILED, keyword="SHOULD", section="§4.2",
                failures=[Failure("advisory", 1, 2, "$.a")]),  # SHOULD, in no clause: a warning
        _result("memoryai.errors_out", Outcome.ERRORED, level="2", reason=f"target error: {HOSTILE}"),
        _result("memoryai.not_offered", Outcome.SKIPPED, level="http", reason="404", not_applicable=True),
    ]
    results += [_result(f"memoryai.bulk_{i}", Outcome.FAILED, section="§5.1",
                        failures=[Failure(_word(i) + " " + "x" * 3000, "r" * 3000, "e", "$")]) for i in range(many)]  # distinct causes
    for r in results:
        w.result(r)
    if footer:
        w.footer({"passed": 1, "failed": 2 + many, "errored": 1, "skipped": 1},
                 [{"suite": "memoryai", "level": "1", "title": "Level 1 Producer", "status": "not conformant",
                   "verdict": f"Level 1 Producer: not conformant (1 failed check: fails_must) {HOSTILE}", "claimed": True,
                   "implemented": True, "optional": False, "counts": {}, "failed": ["fails_must"], "why": [], "warnings": []}],
                 1, [{"suite": "memoryai", "note": HOSTILE}],
                 [{"suite": "memoryai", "point": "E1", "seen": [HOSTILE], "checks": ["memoryai.fails_must"]}], warnings=1)
    w.close()
    return Report.from_path(path, allow_truncated=True)


@pytest.fixture
def report(tmp_path: Path) -> Report:
    return write_report(tmp_path / "report.jsonl")


def test_html_escapes_every_piece_of_target_text(report: Report) -> None:
    page = render_html(report)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # only the page's own filter script
    assert "\ud800" not in page
    page.encode("utf-8")  # writable as UTF-8 whatever the target sent
    assert "http://" not in page.split("<body>")[0].replace("http-equiv", "")  # nothing fetched at view time
    assert "src=" not in page and "<link" not in page


def test_html_shows_verdicts_first_then_failures_with_everything_to_act_on(report: Report) -> None:
    page = render_html(report)
    assert page.index("id='verdicts'") < page.index("id='failures'") < page.index("id='chart'") < page.index("id='checks'")
    block = page[page.index("id='fail-memoryai.fails_must'"):]
    block = block[: block.index("<div class='failure")]  # up to the next card
    for piece in ("The sentence of memoryai.fails_must", "$.chunks[0]", "received", "expected",
                  "memconform run --suite memoryai --check memoryai.fails_must", "transcript", "export -&gt; 200"):
        assert piece in block, piece
    # a warning is shown as one, after the failure
    assert page.index("id='fail-memoryai.fails_must'") < page.index("id='fail-memoryai.warns_should'")
    assert "no level requires this rule" in page


def test_html_table_rows_carry_filter_attributes(report: Report) -> None:
    page = render_html(report)
    assert "data-outcome='warning' data-keyword='SHOULD'" in page
    assert "data-outcome='not applicable' data-keyword='MUST' data-level='http'" in page
    for ctl in ("f-outcome", "f-keyword", "f-level", "f-q"):
        assert f"id='{ctl}'" in page
    assert "Readings seen" in page and "E1" in page


def test_chart_counts_assessed_checks_by_section(report: Report) -> None:
    rates = dict((k, (p, n)) for k, p, n in section_rates(report))
    assert rates["memoryai §3"] == (1, 3)  # passed, failed, errored; the not-applicable skip not counted
    assert rates["memoryai §4"] == (0, 1)
    assert "<svg" in render_html(report)


def test_truncated_report_is_shown_as_truncated(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report.jsonl", footer=False)
    page = render_html(report)
    assert "id='truncated'" in page and "no level has a verdict" in page
    assert "Truncated run" in render_markdown(report)
    root = ET.fromstring(render_junit(report))
    assert root.find(".//testcase[@name='memconform.report_complete']/error") is not None
    assert set(badges(report).values()) and all("not assessed" in svg for svg in badges(report).values())


def test_junit_parses_back_with_hostile_text_and_names_by_check_id(report: Report) -> None:
    text = render_junit(report)
    text.encode("utf-8")
    root = ET.fromstring(text.encode("utf-8"))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {r["check_id"] for r in report.results}
    assert cases["memoryai.fails_must"].find("failure") is not None
    assert cases["memoryai.errors_out"].find("error") is not None
    warn = cases["memoryai.warns_should"]
    assert warn.find("failure") is None and warn.find("error") is None and warn.find("skipped") is None
    assert "WARNING" in (warn.findtext("system-out") or "")
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("errors") == "1"
    props = {p.get("name"): p.get("value") for p in suite.iter("property") if p.get("name") != "warning"}
    assert props["seed"] == "7" and props["profile"] == "ci" and props["harness_version"]
    assert props["target"].startswith("http://127.0.0.1:1/") and "spec_version" in props
    assert props["level.1"] == "not conformant"


def test_markdown_puts_verdicts_and_failures_before_the_folded_table(report: Report) -> None:
    md = render_markdown(report)
    assert md.index("## Verdicts") < md.index("## Failures") < md.index("<details><summary>Every check")
    assert "\ud800" not in md
    table = md[md.index("<details><summary>Every check"):]
    assert "</details>" not in table[: table.index("</details>\n")].replace("&lt;/details>", "")


def test_markdown_stays_under_the_comment_limit(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report.jsonl", many=400)
    md = render_markdown(report)
    assert len(md) <= LIMIT
    assert md.index("## Verdicts") < md.index("## Failures")
    assert "more not shown here" in md


def test_badges_one_per_level_with_status(report: Report) -> None:
    svgs = badges(report)
    assert "memoryai-1.svg" in svgs and "not conformant" in svgs["memoryai-1.svg"]
    for svg in svgs.values():
        ET.fromstring(svg)


def test_report_file_lines_stay_json(report: Report) -> None:
    json.dumps(report.header)


# --- in a real browser: Debian's chromium, headless (skipped with the reason when it is absent) ---

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")


def _chromium(tmp_path: Path, url: str, *args: str) -> tuple[str, list[str]]:
    """(dumped DOM or "", console lines) of one headless page load, with a profile of its own."""
    assert CHROMIUM is not None
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0", *args, url]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


def _rows(dom: str) -> list[tuple[str, bool]]:
    """(data-outcome, hidden) of each row of the checks table in a dumped DOM."""
    body = dom[dom.index('id="checks"'):]
    body = body[: body.index("</table>")]
    return [(m.group(1), "hidden" in m.group(0)) for m in re.finditer(r'<tr data-outcome="([^"]*)"[^>]*>', body)]


@needs_chromium
def test_console_errors_are_seen_by_this_harness(tmp_path: Path) -> None:
    """Positive control: a page that does log an error is caught, so "no console line" means something."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>console.error('deliberate'); undefinedFn();</script>")
    _, console = _chromium(tmp_path, bad.as_uri(), "--dump-dom")
    assert any("deliberate" in line for line in console) and any("undefinedFn" in line for line in console)


@needs_chromium
def test_report_renders_in_chromium_without_console_errors(tmp_path: Path, report: Report) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console == []
    assert 'id="verdicts"' in dom and "not conformant" in dom
    assert dom.count("<script") == 1  # the hostile text stayed text
    rows = _rows(dom)
    assert len(rows) == len(report.results) and not any(hidden for _, hidden in rows)
    shot = tmp_path / "report.png"  # kept as the test's artefact (pytest keeps the latest tmp folders)
    _, console = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1280,1800",
                           "--hide-scrollbars")
    assert console == []
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


@needs_chromium
@pytest.mark.parametrize(("fragment", "visible"), [
    ("outcome=failed", {"failed"}),
    ("outcome=warning", {"warning"}),
    ("keyword=MUST&level=1", {"passed", "failed"}),
    ("q=errors_out", {"errored"}),
    ("level=http", {"not applicable"}),
])
def test_filters_work_in_chromium(tmp_path: Path, report: Report, fragment: str, visible: set[str]) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    dom, console = _chromium(tmp_path, page.as_uri() + "#" + fragment, "--dump-dom")
    assert console == []
    rows = _rows(dom)
    shown = {outcome for outcome, hidden in rows if not hidden}
    assert shown == visible, rows
    count = re.search(r'<span id="shown">(\d+)</span>', dom)
    assert count is not None and int(count.group(1)) == sum(1 for _, hidden in rows if not hidden)
