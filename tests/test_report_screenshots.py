"""report.html as a reader sees it, in headless Chromium: sections in the spec's order with their titles,
every label whole, failures red, one card per cause, commands in copyable blocks.

Measured in the browser (a probe script appended to a copy of the page writes what it measured into
the DOM, which --dump-dom returns); screenshots of a passing run and of a run with grouped failures are
kept in the test's tmp folder (MEMCONFORM_SCREENSHOTS=DIR keeps them there too, to look at).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.redact import Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome
from memconform.render.html import render_html
from memconform.render.sections import section_rows
from test_report_html import _chromium, _result, needs_chromium

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

PROBE = """<script>
(function(){
  var out=[];
  document.querySelectorAll('#chart + .scroll svg text.label').forEach(function(t){
    var bar=t.parentNode.querySelector('rect');
    if(t.getComputedTextLength()>Number(bar.getAttribute('x'))){out.push('clipped:'+t.textContent);}
  });
  document.querySelectorAll('.st').forEach(function(b){
    if(b.getBoundingClientRect().height>24){out.push('wrapped:'+b.textContent);}
  });
  var red=Array.prototype.map.call(document.querySelectorAll('.failure:not(.warn):not(.err)'),function(d){
    return getComputedStyle(d).borderLeftColor;});
  var bars=Array.prototype.map.call(document.querySelectorAll('rect.bar-failed'),function(r){
    return r.getAttribute('width')+':'+r.getAttribute('fill');});
  document.body.setAttribute('data-probe', JSON.stringify({clipped:out,cards:red,failedBars:bars}));
})();
</script>"""


def _probe(tmp_path: Path, html: str, name: str) -> dict[str, object]:
    import json

    page = tmp_path / f"{name}.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console == [], console
    found = re.search(r'data-probe="([^"]*)"', dom)
    assert found is not None, "the probe did not run"
    data: dict[str, object] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return data


def _screenshot(tmp_path: Path, html: str, name: str, size: str = "1280,2400") -> Path:
    page = tmp_path / f"{name}-shot.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    _, console = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", f"--window-size={size}", "--hide-scrollbars")
    assert console == [] and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    keep = os.environ.get("MEMCONFORM_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return shot


def _grouped_failures(path: Path) -> Report:
    w = ReportWriter(path, Redactor([]))
    w.header(target="http://127.0.0.1:8765", suites=["memoryai"], profile="ci", seed=1, options={}, command="memconform run")
    crash = "target error: POST /v1/brain/import: server error 500: b'Internal Server Error'"
    for i, section in enumerate(["§3.8", "§5 Level 2", "§3.2", "§4", "§3.8", "§6"]):
        r = _result(f"memoryai.crash_{i}", Outcome.ERRORED, section=section, reason=crash)
        r.curl = ["curl -sS -X POST http://127.0.0.1:8765/v1/brain/import -H \"Authorization: Bearer $MEMCONFORM_API_KEY\""]
        w.result(r)
    w.result(_result("memoryai.wrong_format", Outcome.FAILED, section="§3.1",
                     failures=[Failure("format is not the literal", "memoryai", "memoryai-bundle", "$.format")]))
    w.result(_result("memoryai.passes", Outcome.PASSED, section="§3.1"))
    w.result(_result("memoryai.passes_too", Outcome.PASSED, section="§10"))
    w.footer({"passed": 2, "failed": 1, "errored": 6, "skipped": 0}, [], 1, [], [])
    w.close()
    return Report.from_path(path)


def test_sections_are_in_the_specs_order_with_titles(tmp_path: Path) -> None:
    rows = section_rows(_grouped_failures(tmp_path / "report.jsonl").results)
    assert [r.section for r in rows] == ["§3", "§4", "§5", "§6", "§10"]  # by number: §10 after §6, not after §1
    assert rows[0].label == "memoryai §3 Bundle Format v1" and rows[1].label == "memoryai §4 HTTP Profile (RECOMMENDED)"
    assert (rows[0].passed, rows[0].failed) == (1, 4)


@needs_chromium
def test_a_run_with_grouped_failures_in_chromium(tmp_path: Path) -> None:
    html = render_html(_grouped_failures(tmp_path / "report.jsonl"))
    probe = _probe(tmp_path, html, "failures")
    assert probe["clipped"] == []
    assert probe["cards"] == ["rgb(207, 34, 46)"]  # the one failure card: red
    bars = probe["failedBars"]
    assert isinstance(bars, list) and any(b.endswith(":#cf222e") and not b.startswith("0:") for b in bars)
    assert html.count("class='failure") == 2 and "×6" in html  # one card per cause
    assert "<figure class='cmd'><button type='button' class='copy'" in html and "class='curl'" in html
    _screenshot(tmp_path, html, "report-failures")


@needs_chromium
def test_a_status_label_that_wraps_is_caught(tmp_path: Path) -> None:
    """Negative control for the probe: a badge squeezed into a narrow cell is reported."""
    html = render_html(_grouped_failures(tmp_path / "report.jsonl")).replace("white-space:nowrap;", "")
    html = html.replace("</style>", "#checks td:nth-child(5){width:1px;max-width:1px}</style>")
    probe = _probe(tmp_path, html.replace("errored</span>", "not assessed errored</span>"), "squeezed")
    assert any(str(x).startswith("wrapped:") for x in probe["clipped"]), probe


@needs_chromium
def test_a_passing_run_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memconform.core.registry import REGISTRY

    checks = [a for c in REGISTRY.for_suite("memoryai") if c.kind == "document" for a in ("--check", c.id)]
    assert main(["run", "--suite", "memoryai", "--report-dir", str(tmp_path / "run"), *checks]) == 0
    capsys.readouterr()
    html = (tmp_path / "run" / "report.html").read_text("utf-8")
    probe = _probe(tmp_path, html, "passing")
    assert probe["clipped"] == [] and probe["cards"] == [] and all(str(b).startswith("0:") for b in probe["failedBars"])
    assert "Failures, errors and warnings (0)" in html
    _screenshot(tmp_path, html, "report-passing")


# ---- a phone's width: the page never scrolls sideways; wide tables scroll inside their card -----------------

NARROW_PROBE = """<script>
(function(){
  var width=document.documentElement.clientWidth,over=[];
  document.querySelectorAll('body *').forEach(function(e){
    if(e.closest('.scroll')){return;}
    var r=e.getBoundingClientRect();
    if(r.width>0&&r.right>width+1){over.push(e.tagName.toLowerCase()+(e.id?'#'+e.id:'')+(e.className&&e.className.baseVal===undefined?'.'+e.className:''));}
  });
  document.body.setAttribute('data-narrow', JSON.stringify({width:width,scroll:document.documentElement.scrollWidth,over:over.slice(0,12)}));
})();
</script>"""


def _narrow(tmp_path: Path, html: str, name: str, width: int = 390) -> dict[str, object]:
    import json

    page = tmp_path / f"{name}-narrow.html"
    page.write_text(html.replace("</body>", NARROW_PROBE + "</body>"), encoding="utf-8")
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom", f"--window-size={width},844")
    assert console == [], console
    found = re.search(r'data-narrow="([^"]*)"', dom)
    assert found is not None, "the probe did not run"
    data: dict[str, object] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return data


def _wide_report(tmp_path: Path) -> str:
    """The grouped-failures report with what makes a page wide: a long unbroken value, a long command."""
    report = _grouped_failures(tmp_path / "report.jsonl")
    return render_html(report).replace("memoryai-bundle", "memoryai-bundle-" + "x" * 400)


@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
def test_report_html_never_scrolls_sideways(tmp_path: Path, width: int) -> None:
    html = _wide_report(tmp_path)
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in html
    probe = _narrow(tmp_path, html, f"report-{width}", width)
    assert probe["over"] == [] and probe["scroll"] == probe["width"], probe
    _screenshot(tmp_path, html, f"report-failures-{width}", f"{width},2400")


@needs_chromium
def test_a_page_without_its_scrolling_cards_is_seen_to_overflow(tmp_path: Path) -> None:
    """Negative control for the probe: without the cards' own scrolling and wrapping the page is wider than 390."""
    html = _wide_report(tmp_path).replace(".scroll{overflow-x:auto;max-width:100%}td,code,.cause{overflow-wrap:anywhere}", "")
    html = html.replace("class='scroll'", "class='no-scroll'")
    probe = _narrow(tmp_path, html, "report-unwrapped")
    assert probe["over"] != [] and int(str(probe["scroll"])) > int(str(probe["width"])), probe


@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
def test_portability_html_never_scrolls_sideways(tmp_path: Path, width: int) -> None:
    from memconform.portability.matrix import matrix
    from memconform.portability.report import html_page

    html = html_page(matrix())
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in html
    probe = _narrow(tmp_path, html, f"portability-{width}", width)
    assert probe["over"] == [] and probe["scroll"] == probe["width"], probe
    _screenshot(tmp_path, html, f"portability-{width}", f"{width},2400")
    unwrapped = _narrow(tmp_path, html.replace("class='scroll'", "class='no-scroll'"), "portability-unwrapped", 390)
    assert width != 390 or unwrapped["over"] != [], unwrapped  # the control: without its scrolling boxes it overflows
