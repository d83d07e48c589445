"""matrix.html: self-contained, hostile text kept as text, filters work in a real browser (headless chromium)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from memconform.matrix.combine import validate_matrix
from memconform.matrix.render_html import render_html
from test_report_html import _chromium, needs_chromium

HOSTILE = "<script>alert(1)</script>\x00 ]]> & \"' `|` </td></table> \ud800"
IMPLS = ["impl-a", "impl-b", "impl-c", "impl-d"]


def _sentence(sid: str, cls: str, outcomes: list[str], rank: int, suite: str = "omp") -> dict[str, Any]:
    sides = {"passed": "pass", "failed": "fail"}
    groups: dict[str, list[str]] = {}
    for impl, outcome in zip(IMPLS, outcomes, strict=True):
        if outcome in sides:
            groups.setdefault(sides[outcome], []).append(impl)
    return {"id": sid, "suite": suite, "section": "3.3", "quote": f"The text of {sid} {HOSTILE}", "keyword": "MUST",
            "level": "core", "checks": [f"{suite}.x"], "class": cls, "disagreement": 1.0 if cls == "split" else 0.0,
            "outcomes": dict(zip(IMPLS, outcomes, strict=True)), "readings": {},
            "groups": [{"side": s, "readings": {"O2": [HOSTILE]}, "implementations": ids, "independent": len(ids),
                        **({"exchange": {"implementation": ids[0], "check": f"{suite}.x", "outcome": "failed" if s == "fail"
                                         else "passed", "failure": HOSTILE, "transcript": [f"POST /v1/x -> 200 {HOSTILE}"]}}
                           if cls == "split" else {})}
                       for s, ids in groups.items()], "rank": rank,
            "not_assessed": {i: f"errored: {HOSTILE}" for i, o in zip(IMPLS, outcomes, strict=True) if o == "not assessed"},
            "cards": {i: f"{suite}.x" for i, o in zip(IMPLS, outcomes, strict=True) if o != "passed"},
            "split_points": ["O2"] if cls == "split" else [], "same_as": None, "also": []}


def matrix_doc() -> dict[str, Any]:
    sentences = [_sentence("OMP-1-01", "split", ["passed", "passed", "failed", "failed"], 1),
                 _sentence("OMP-1-02", "lone-fail", ["passed", "passed", "passed", "failed"], 2),
                 _sentence("EMP-1-01", "all-pass", ["passed", "passed", "passed", "passed"], 3, suite="emp"),
                 _sentence("OMP-1-03", "all-pass", ["passed", "passed", "passed", "not applicable"], 4)]
    doc = {"matrix_version": 2, "harness_version": "0.1.0", "combined_by": "0.1.0", "verified": True,
           "not_assessed_cells": 0, "interop_holes": [],
           "profile": "ci", "generated_at": "2026-12-03T10:00:00Z",
           "suites": [{"name": "omp", "title": "OMP", "version": "0.1", "seeds": [1]},
                      {"name": "emp", "title": "EMP", "version": "1.0", "seeds": [1]}],
           "implementations": [{"id": i, "name": f"{i} {HOSTILE}", "version": "1", "source": "", "issues": "",
                                "license": "", "independent_of": [], "claims": {}, "levels": [],
                                "runs": [{"suite": "omp", "seed": 1, "status": "ran", "reason": ""}]} for i in IMPLS],
           "sentences": sentences,
           "readings": [{"suite": "omp", "point": "O2", "erratum": {"href": "errata/omp/errata.md#o2", "title": HOSTILE},
                         "by_implementation": {"impl-a": ["x"], "impl-b": ["x"], "impl-c": ["y"], "impl-d": ["y"]},
                         "readings": {"x": ["impl-a", "impl-b"], "y": ["impl-c", "impl-d"]}, "needs_erratum": True}],
           "counts": {"split": 1, "lone-fail": 1, "all-pass": 2}}
    validate_matrix(doc)
    return doc


def _rows(dom: str) -> list[tuple[str, str, bool]]:
    body = dom[dom.index('id="sentences"'):]
    body = body[: body.index("</table>")]
    return [(m.group(1), m.group(2), "hidden" in m.group(0))
            for m in re.finditer(r'<tr data-class="([^"]*)" data-suite="([^"]*)"[^>]*>', body)]


def test_every_piece_of_target_text_is_escaped() -> None:
    page = render_html(matrix_doc())
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 2  # the counts (JSON, escaped) and the filters, nothing else
    assert "\ud800" not in page and "needs an erratum" in page
    assert "http" not in page.split("<body>", 1)[1].replace("errata/omp/errata.md", "")  # nothing fetched at view time


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.html"
    path.write_text(render_html(matrix_doc()), encoding="utf-8")
    return path


@needs_chromium
def test_matrix_renders_in_chromium_without_console_errors(tmp_path: Path, page: Path) -> None:
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console == []
    rows = _rows(dom)
    assert [c for c, _, _ in rows] == ["split", "lone-fail", "all-pass", "all-pass"] and not any(h for *_, h in rows)
    assert dom.count('class="side"') == 1 and "POST /v1/x" in dom  # the split's exchanges side by side
    shot = tmp_path / "matrix.png"
    _, console = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1400,1600", "--hide-scrollbars")
    assert console == [] and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


@needs_chromium
@pytest.mark.parametrize(("fragment", "visible"), [
    ("class=split", [("split", "omp")]),
    ("class=all-pass", [("all-pass", "emp"), ("all-pass", "omp")]),
    ("suite=emp", [("all-pass", "emp")]),
    ("class=all-pass&suite=omp", [("all-pass", "omp")]),
    ("class=all-fail", []),
])
def test_filters_work_in_chromium(tmp_path: Path, page: Path, fragment: str, visible: list[tuple[str, str]]) -> None:
    dom, console = _chromium(tmp_path, page.as_uri() + "#" + fragment, "--dump-dom")
    assert console == []
    rows = _rows(dom)
    assert [(c, s) for c, s, hidden in rows if not hidden] == visible, rows
    count = re.search(r'<span id="shown">(\d+)</span>', dom)
    assert count is not None and int(count.group(1)) == len(visible)


# --- every cell links to its shard's report (and the failing check's card), wherever --out is -----------
def _links(dom: str) -> list[tuple[str, str]]:
    """(class, href) of every link in the page."""
    from html.parser import HTMLParser

    found: list[tuple[str, str]] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "a":
                found.append((a.get("class") or "", a.get("href") or ""))

    Links().feed(dom)
    return found


@needs_chromium
def test_every_cell_links_to_an_existing_shard_report_and_card(tmp_path: Path) -> None:
    from urllib.parse import unquote

    from memconform.cli.matrix import write_matrix
    from memconform.core.profile import Profile
    from memconform.run.session import execute_run
    from test_matrix_honest import CHECKS, plain_failure, planted, starved

    execute_run(["amps"], None, Profile.named("ci"), tmp_path / "base" / "report", check_ids=CHECKS)
    base = tmp_path / "base" / "report" / "report.jsonl"
    shards = tmp_path / "fleet" / "shards"
    for name, change in (("clean", None), ("buggy", plain_failure), ("starved", starved)):
        planted(base, shards, name, change)
    out = tmp_path / "elsewhere" / "deep" / "matrix"  # not the repository root, not beside the shards
    assert write_matrix([shards], None, out) == 0
    page = out / "matrix.html"
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console == []
    links = _links(dom)
    cells = [href for cls, href in links if cls == "cell"]
    rows = dom[dom.index('id="sentences"'):].split("</table>", 1)[0]
    assert len(cells) == rows.count('class="o o-') > 0  # every cell of the queue carries a link
    assert any("#fail-amps.delete_cascades" in h for h in cells)  # a failing cell: the check's card
    assert any("#fail-amps.schema_valid" in h for h in cells)  # an errored (not run) cell: its card too
    for cls, href in links:
        path, _, anchor = unquote(href).partition("#")
        target = (page.parent / path).resolve()
        assert target.is_file(), (cls, href)
        if anchor and target.suffix == ".html":
            assert f"id='{anchor}'" in target.read_text("utf-8") or f'id="{anchor}"' in target.read_text("utf-8"), href
        if anchor and target.suffix == ".md":
            from memconform.matrix.errata import _slug  # GitHub's heading anchors

            assert anchor in {_slug(line[3:]) for line in target.read_text("utf-8").splitlines() if line.startswith("## ")}
    assert any(h.startswith("errata/amps/errata.md") for _, h in links)  # copied beside the page, never suites/...
    assert not any(h.startswith("suites/") for _, h in links)


@needs_chromium
def test_matrix_md_rendered_with_raw_html_allowed_runs_no_payload_in_chromium(tmp_path: Path) -> None:
    """matrix.md rendered by a CommonMark renderer that passes raw HTML (as many do): a payload in any data
    field stays text. A payload that ran would mark the DOM (data-pwned) or the title."""
    markdown_it = pytest.importorskip("markdown_it")
    from memconform.matrix.render_md import render_markdown

    payload = ("<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
               "<script>document.title='pwned'</script>[x](javascript:document.title='pwned') **b** | `c`")
    doc = matrix_doc()
    doc["sentences"][0]["quote"] = payload
    doc["sentences"][1]["id"] = payload
    doc["implementations"][0]["runs"][0]["reason"] = payload
    doc["readings"][0]["erratum"]["title"] = payload
    doc["sentences"][0]["groups"][0]["exchange"]["transcript"] = [payload + "\n```\n" + payload]
    body = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(render_markdown(doc))
    page = tmp_path / "matrix-md.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>clean</title></head><body>{body}"
                    "</body></html>", "utf-8")
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "<title>clean</title>" in dom and "<img" not in dom and "<script>document" not in dom
    assert 'href="javascript' not in dom
    assert "&lt;img src=x onerror=" in dom  # shown as text


@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
def test_matrix_html_never_scrolls_sideways(tmp_path: Path, page: Path, width: int) -> None:
    """Wide tables scroll inside their boxes; the page itself is never wider than the screen (a phone at 390)."""
    from test_report_screenshots import _narrow

    html = page.read_text("utf-8")
    probe = _narrow(tmp_path, html, f"matrix-{width}", width)
    assert probe["over"] == [] and probe["scroll"] == probe["width"], probe
    unwrapped = _narrow(tmp_path, html.replace("class='scroll'", "class='no-scroll'"), "matrix-unwrapped", 390)
    assert width != 390 or unwrapped["over"] != [], unwrapped  # the control: without the boxes it overflows
