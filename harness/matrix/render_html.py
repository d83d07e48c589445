"""matrix.html: one self-contained page (inline CSS and JS, nothing fetched at view time).

Order: the editor's queue (ranked sentences, filterable by class and suite, also from the URL hash,
e.g. `#class=split&suite=omp`), the interop holes, the readings table, the implementations, the splits
with one exchange per group side by side. Every piece of text goes through `_e`: target text is hostile.
Every cell (an implementation on a sentence) links to its shard's report.html (`links`, relative to the
page), at the card of the check that decided it when it failed or errored (report.html's `fail-<check>`).
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..render.common import clean

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1em 2em;color:#1b1f24}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f4f6}pre{font:12px/1.35 ui-monospace,monospace;background:#f6f8fa;padding:6px;white-space:pre-wrap;
word-break:break-all;max-height:24em;overflow:auto}.o{display:inline-block;padding:0 5px;border-radius:3px;color:#fff;font-size:12px}
.o-passed{background:#1a7f37}.o-failed{background:#cf222e}.o-warning{background:#bf8700}.o-errored{background:#9a6700}
.o-not-applicable,.o-not-assessed{background:#6e7781}.c-split,.flag{color:#cf222e;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}@media (max-width:600px){body{padding:.5em}}
.rd{color:#57606a;font-size:12px}.side{display:flex;gap:1em}.side>div{flex:1;min-width:0;border:1px solid #ddd;padding:.4em}.quote{font-style:italic}
"""

_JS = """
(function(){
  var ids=['class','suite'];
  function ctl(n){return document.getElementById('f-'+n);}
  function apply(){
    var shown=0;
    document.querySelectorAll('#sentences tbody tr').forEach(function(tr){
      var ok=ids.every(function(n){return !ctl(n).value||tr.dataset[n]===ctl(n).value;});
      tr.hidden=!ok;if(ok){shown++;}
    });
    document.getElementById('shown').textContent=String(shown);
  }
  function fromHash(){
    var p=new URLSearchParams(location.hash.replace(/^#/,''));
    ids.forEach(function(n){if(p.has(n)){ctl(n).value=p.get(n);}});apply();
  }
  function toHash(){
    var p=new URLSearchParams();ids.forEach(function(n){if(ctl(n).value){p.set(n,ctl(n).value);}});
    history.replaceState(null,'','#'+p.toString());apply();
  }
  ids.forEach(function(n){ctl(n).addEventListener('change',toHash);});
  window.addEventListener('hashchange',fromHash);fromHash();
})();
"""


def _e(text: Any) -> str:
    return html.escape(clean(str(text)), quote=True)


def _outcome(outcome: str) -> str:
    return f'<span class="o o-{outcome.replace(" ", "-")}">{_e(outcome)}</span>'


Links = dict[str, dict[str, str]]  # implementation -> suite -> the shard's report (relative to the page)


def cell_href(links: Links, x: dict[str, Any], impl: str) -> str | None:
    """Where a cell links: the shard's report, at the deciding check's card when report.html has one."""
    base = links.get(impl, {}).get(x["suite"])
    if base is None:
        return None
    check = x.get("cards", {}).get(impl)
    carded = x["outcomes"].get(impl) in ("failed", "warning") or x.get("not_assessed", {}).get(impl, "").startswith(
        ("errored", "not run", "cut short"))
    return base + (f"#fail-{check}" if check and carded and base.endswith(".html") else "")


def render_html(doc: dict[str, Any], links: Links | None = None) -> str:
    links = links or {}
    suites = ", ".join(f"{s['name']} {s['version']}" for s in doc["suites"])
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>memconform matrix</title>", f"<style>{_CSS}</style></head><body>",
        "<h1>memconform matrix</h1>",
        f"<p>harness {_e(doc['harness_version'])}, profile <code>{_e(doc['profile'])}</code>, {_e(doc['generated_at'])}; "
        f"{_e(suites)}</p>",
        "<p>" + ", ".join(f"{_e(k)} <b>{v}</b>" for k, v in doc["counts"].items())
        + f'; cells not assessed <b id="not-assessed">{int(doc.get("not_assessed_cells", 0))}</b></p>',
        _unverified(doc), _sentences(doc["sentences"], [s["name"] for s in doc["suites"]], links),
        _holes(doc.get("interop_holes", [])),
        _readings(doc["readings"]), _implementations(doc["implementations"], links),
        _splits([x for x in doc["sentences"] if x["class"] == "split"]),
        f'<script type="application/json" id="matrix-counts">{_e(json.dumps(doc["counts"]))}</script>',
        f"<script>{_JS}</script></body></html>",
    ]
    # every table scrolls inside its own box: on a phone the page itself never scrolls sideways
    return "\n".join(parts).replace("<table", "<div class='scroll'><table").replace("</table>", "</table></div>") + "\n"


def _select(name: str, values: list[str]) -> str:
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return f'<label>{name} <select id="f-{name}"><option value="">all</option>{options}</select></label> '


def _unverified(doc: dict[str, Any]) -> str:
    if doc.get("verified", True):
        return ""
    return (f'<p class="flag" id="unverified">Unverified: the reports were made by harness {_e(doc["harness_version"])}; '
            f'this matrix was combined, and their levels recomputed, by {_e(doc.get("combined_by", "?"))}.</p>')


def _holes(holes: list[dict[str, Any]]) -> str:
    if not holes:
        return ""
    rows = "".join(
        f'<tr id="hole-{_e(h["id"])}"><td>{_e(h["suite"])} {_e(h["id"])}: {_e(h["title"])}</td><td>{_e(", ".join(h["sentences"]))}</td>'
        f'<td>{_e(h["producer"]["behaviour"])} ({_e(h["producer"]["verdict"])})</td>'
        f'<td>{_e(h["consumer"]["behaviour"])} ({_e(h["consumer"]["verdict"])})</td>'
        f'<td><a href="{_e(h["erratum"]["href"])}">{_e(h["erratum"]["title"])}</a> '
        f'<span class="flag">needs an erratum</span></td></tr>' for h in holes)
    return ("<h2>Interop holes: each needs an erratum</h2><p>A producer behaviour the suite accepts beside a consumer "
            "behaviour the text lets a consumer take against it.</p><table id=\"holes\"><thead><tr><th>hole</th>"
            "<th>sentences</th><th>producer</th><th>consumer</th><th>erratum</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _sentences(sentences: list[dict[str, Any]], suites: list[str], links: Links) -> str:
    from .classify import CLASSES

    rows = []
    for x in sentences:
        if x.get("same_as"):
            continue  # one observation, one row: it is named on the row of the sentence it shares its checks with
        also = f'<br><span class="rd">also {_e(", ".join(x["also"]))} (the same checks)</span>' if x.get("also") else ""
        split_on = f'<br><span class="rd">on {_e(", ".join(x["split_points"]))}</span>' if x.get("split_points") else ""
        rows.append(f'<tr data-class="{_e(x["class"])}" data-suite="{_e(x["suite"])}"><td>{x["rank"]}</td>'
                    f'<td>{_e(x["id"])} {_e(x["keyword"])}{also}</td><td class="c-{_e(x["class"])}">{_e(x["class"])}{split_on}</td>'
                    f'<td>{x["disagreement"]:.2f}</td><td>{len(x.get("not_assessed", {}))}</td><td class="quote">{_e(x["quote"])}</td>'
                    f"<td>{_groups_cell(x, links)}</td></tr>")
    return ("<h2>The editor's queue: sentences ranked by disagreement</h2>"
            f'<div class="filters">{_select("class", list(CLASSES))}{_select("suite", suites)}'
            f'<span id="shown">{len(rows)}</span> shown</div>'
            f'<table id="sentences"><thead><tr><th>rank</th><th>sentence</th><th>class</th><th>disagreement</th>'
            f"<th>not assessed</th><th>spec text</th><th>implementations (by group; readings seen)</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _chip(x: dict[str, Any], impl: str, links: Links) -> str:
    """One cell: the implementation and its outcome, linked to its shard's report; a reason when not assessed."""
    href = cell_href(links, x, impl)
    name = f'<a class="cell" href="{_e(href)}">{_e(impl)}</a>' if href else _e(impl)
    why = x.get("not_assessed", {}).get(impl)
    return f"{name} {_outcome(x['outcomes'][impl])}" + (f' <span class="rd">({_e(why)})</span>' if why else "")


def _groups_cell(x: dict[str, Any], links: Links) -> str:
    """Each implementation that ran the suite with its outcome, grouped as classified, readings beside."""
    grouped = {i for g in x["groups"] for i in g["implementations"]}
    lines = []
    for g in x["groups"]:
        readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items())
        chips = " ".join(_chip(x, i, links) for i in g["implementations"])
        lines.append(chips + (f' <span class="rd">({_e(readings)})</span>' if readings else ""))
    rest = [i for i in x["outcomes"] if i not in grouped]
    if rest:
        lines.append("<br>".join(_chip(x, i, links) for i in rest))
    return "<br>".join(lines)


def _readings(rows: list[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        followed = "<br>".join(f"{_e(reading or '(none)')}: {_e(', '.join(ids))}" for reading, ids in r["readings"].items())
        flag = '<span class="flag">needs an erratum</span>' if r["needs_erratum"] else "no"
        body.append(f'<tr data-flagged="{str(r["needs_erratum"]).lower()}"><td>{_e(r["suite"])} {_e(r["point"])}</td>'
                    f'<td><a href="{_e(r["erratum"]["href"])}">{_e(r["erratum"]["title"])}</a></td>'
                    f"<td>{followed}</td><td>{flag}</td></tr>")
    return ("<h2>Readings (open point &times; implementation)</h2>"
            '<table id="readings"><thead><tr><th>point</th><th>erratum</th><th>readings: implementations</th>'
            f"<th>flag</th></tr></thead><tbody>{''.join(body)}</tbody></table>")


def _implementations(impls: list[dict[str, Any]], links: Links) -> str:
    body = []
    for i in impls:
        def suite(r: dict[str, Any], impl: str = i["id"]) -> str:
            href = links.get(impl, {}).get(r["suite"]) if r["status"] == "ran" else None
            return f'<a class="run" href="{_e(href)}">{_e(r["suite"])}</a>' if href else _e(r["suite"])

        runs = "<br>".join(f"{suite(r)} seed {_e(r['seed'])}: {_e(r['status'])}"
                           + (f" ({_e(r['reason'])})" if r["reason"] else "") for r in i["runs"])
        levels = "<br>".join(f"{_e(lv['suite'])} {_e(lv['title'])}{' (claimed)' if lv['claimed'] else ''}: {_e(lv['status'])}"
                             for lv in i["levels"])
        body.append(f"<tr><td>{_e(i['id'])}</td><td>{_e(i['name'])}</td><td>{_e(i['version'])}</td>"
                    f"<td>{runs}</td><td>{levels}</td></tr>")
    return ("<h2>Implementations</h2><table id=\"implementations\"><thead><tr><th>id</th><th>name</th><th>version</th>"
            f"<th>runs</th><th>levels</th></tr></thead><tbody>{''.join(body)}</tbody></table>")


def _splits(splits: list[dict[str, Any]]) -> str:
    if not splits:
        return "<h2>Splits</h2><p>No sentence splits the implementations.</p>"
    out = ["<h2>Splits, one exchange per group side by side</h2>"]
    for x in splits:
        cols = []
        for g in x["groups"]:
            readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items()) or "no reading recorded"
            ex = g.get("exchange")
            shown = (f"<p>{_e(ex['implementation'])} {_e(ex['check'])} {_outcome(ex['outcome'])}</p>"
                     f"<pre>{_e(chr(10).join(ex['transcript']))}</pre>") if ex else "<p>(no transcript in these reports)</p>"
            cols.append(f"<div><p><b>{_e(g['side'])}</b> ({_e(readings)}): {_e(', '.join(g['implementations']))}</p>{shown}</div>")
        out.append(f'<h3 id="{_e(x["id"])}">{_e(x["id"])}</h3><p class="quote">{_e(x["quote"])}</p>'
                   f'<div class="side">{"".join(cols)}</div>')
    return "".join(out)
