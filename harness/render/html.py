"""report.html: one self-contained page (inline CSS, JS and SVG; nothing fetched at view time).

Order: the run, the level verdicts, the failures with everything needed to act on them, the pass
rate by spec section, every check in a table filterable by outcome, keyword, level and text (the
filters also read the URL hash, e.g. `#outcome=failed&keyword=MUST`), the readings, the notes.
Every piece of text goes through `_e` (HTML escaping): target text is hostile.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ..core.report import Report
from .common import clean, outcome_label, readings_shown, spec_versions
from .groups import cut_schema_dump, group_problems, plural
from .sections import section_rows

MAX_VALUE_CHARS = 20_000  # one received/expected value on the page; the report keeps it whole

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#1b1f24}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f4f6}code,pre{font:12px/1.35 ui-monospace,monospace}pre{background:#f6f8fa;padding:6px;overflow:auto;white-space:pre-wrap;word-break:break-all;max-height:30em}
.banner{padding:.6em 1em;border-radius:4px;font-weight:600;margin:.6em 0}
.truncated{background:#fff3cd;border:1px solid #e0b000}
.st{display:inline-block;white-space:nowrap;padding:1px 7px;border-radius:3px;color:#fff;font-weight:600;font-size:12px}
.s-conformant,.o-passed{background:#1a7f37}.s-not-conformant,.o-failed{background:#cf222e}
.s-not-assessed,.o-errored{background:#9a6700}.s-not-applicable,.o-skipped,.o-not-applicable{background:#6e7781}
.o-warning{background:#bf8700}.o-inconclusive{background:#8250df}
.failure{border:1px solid #ddd;border-left:4px solid #cf222e;padding:.4em .9em;margin:.8em 0}
.failure.warn{border-left-color:#bf8700}.failure.err{border-left-color:#9a6700}
.cmd{position:relative;margin:0}.cmd pre{padding-right:4.5em;user-select:all}.copy{position:absolute;right:4px;top:4px;font-size:12px}
.count{font-weight:700;color:#cf222e}.also{color:#444}
.sentence{font-style:italic;color:#444}.filters{margin:.5em 0}.filters label{margin-right:1em}
.scroll{overflow-x:auto;max-width:100%}td,code,.cause{overflow-wrap:anywhere}
@media (max-width:700px){body{padding:.5em .7em}.filters label{display:block;margin:.2em 0}}
"""

_JS = """
(function(){
  var ids=['outcome','keyword','level','q'];
  function ctl(n){return document.getElementById('f-'+n);}
  function apply(){
    var v={};ids.forEach(function(n){v[n]=ctl(n).value;});
    var q=v.q.toLowerCase(),shown=0;
    document.querySelectorAll('#checks tbody tr').forEach(function(tr){
      var ok=(!v.outcome||tr.dataset.outcome===v.outcome)&&(!v.keyword||tr.dataset.keyword===v.keyword)
        &&(!v.level||tr.dataset.level===v.level)&&(!q||tr.textContent.toLowerCase().indexOf(q)>=0);
      tr.hidden=!ok;if(ok){shown++;}
    });
    document.getElementById('shown').textContent=String(shown);
  }
  function fromHash(){
    var p=new URLSearchParams(location.hash.replace(/^#/,''));
    ids.forEach(function(n){if(p.has(n)){ctl(n).value=p.get(n);}});
    apply();
  }
  function toHash(){
    var p=new URLSearchParams();
    ids.forEach(function(n){if(ctl(n).value){p.set(n,ctl(n).value);}});
    history.replaceState(null,'','#'+p.toString());apply();
  }
  ids.forEach(function(n){ctl(n).addEventListener('input',toHash);ctl(n).addEventListener('change',toHash);});
  window.addEventListener('hashchange',fromHash);
  document.querySelectorAll('.cmd .copy').forEach(function(b){
    b.addEventListener('click',function(){
      var text=b.parentNode.querySelector('pre').textContent;
      if(navigator.clipboard){navigator.clipboard.writeText(text).then(function(){b.textContent='copied';});}
    });
  });
  fromHash();
})();
"""


def _e(text: Any) -> str:
    return html.escape(clean(text), quote=True)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _value(v: Any) -> str:
    """A received or expected value: a string as itself (never a JSON string of JSON), anything else as JSON."""
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, indent=1, allow_nan=False)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + f"\n... ({len(text) - MAX_VALUE_CHARS} more characters in report.jsonl)"
    return text


def _head(report: Report) -> list[str]:
    h = report.header
    versions = spec_versions(report)
    rows = [("target", h["target"]), ("suites", ", ".join(f"{s} ({versions.get(s, '?')})" for s in h["suites"])),
            ("profile", h["profile"]), ("seed", h["seed"]), ("harness", h["harness_version"]),
            ("started", h["started_at"]), ("finished", (report.footer or {}).get("finished_at", "-")),
            ("command", h["command"])]
    out = ["<div class='scroll'><table class='run'>"] + [f"<tr><th>{_e(k)}</th><td><code>{_e(v)}</code></td></tr>" for k, v in rows]
    return out + ["</table></div>"]


def _levels(report: Report) -> list[str]:
    out = ["<h2 id='levels'>Verdicts</h2>"]
    footer = report.footer
    if footer is None:
        return out + ["<div class='banner truncated' id='truncated'>Truncated run: the report has no footer, so no "
                      "level has a verdict. The results below are what was recorded before the run stopped.</div>"]
    out.append("<div class='scroll'><table id='verdicts'><tr><th>suite</th><th>level</th><th>verdict</th><th>details</th></tr>")
    for lv in footer["levels"]:
        status = lv.get("status", "")
        claimed = {True: "claimed", False: "not claimed"}.get(lv.get("claimed"), "")
        out.append(f"<tr><td>{_e(lv['suite'])}</td><td>{_e(lv.get('title', lv.get('level', '')))} "
                   f"<small>{_e(claimed)}</small></td><td><span class='st s-{_slug(status)}'>{_e(status)}</span></td>"
                   f"<td>{_e(lv['verdict'])}</td></tr>")
    c = footer["counts"]
    out.append("</table></div>")
    warnings = int(footer.get("warnings", 0))  # a warning is counted apart from the failures, everywhere
    out.append(f"<p id='totals'>passed {c['passed']}, failed {c['failed'] - warnings}, {plural(warnings, 'warning')}, "
               f"errored {c['errored']}, skipped {c['skipped']}; exit code {footer['exit_code']}</p>")
    return out


def _command(text: str, cls: str) -> str:
    """A command the reader copies whole: its own block and a copy button."""
    return (f"<figure class='cmd'><button type='button' class='copy' title='copy'>copy</button>"
            f"<pre class='{cls}'>{_e(text)}</pre></figure>")


def _failure_block(r: dict[str, Any], others: list[dict[str, Any]] | None = None, cause: str = "") -> list[str]:
    label = outcome_label(r)
    others = others or []
    kind = " warn" if label == "warning" else " err" if label == "errored" else ""
    count = f" <span class='count'>×{len(others) + 1}</span>" if others else ""
    out = [f"<div class='failure{kind}' id='fail-{_e(r['check_id'])}'>",
           *(f"<span id='fail-{_e(o['check_id'])}'></span>" for o in others),
           f"<h3><span class='st o-{_slug(label)}'>{_e(label)}</span>{count} <code>{_e(r['check_id'])}</code> "
           f"<small>{_e(r['spec'])} {_e(r['section'])} {_e(r['keyword'])}, level {_e(r['level'])}</small></h3>",
           f"<p class='sentence'>{_e(r['sentence'])}</p>"]
    if cause:
        out.append(f"<p class='cause'><b>cause:</b> {_e(cause)}</p>")
    if others:
        out.append(f"<p class='also'>The same cause in {len(others)} more check{'s' if len(others) != 1 else ''}: "
                   + ", ".join(f"<code>{_e(o['check_id'])}</code>" for o in others) + "</p>")
    if label == "warning":
        out.append("<p>A warning: no level requires this rule (a failure under the strict profile).</p>")
    if r.get("reason"):
        out.append(f"<p><b>reason:</b> {_e(r['reason'])}</p>")
    for f in r["failures"]:
        out.append(f"<p><b>{_e(f['title'])}</b> at <code class='path'>{_e(f['path'])}</code></p>")
        out.append("<div class='scroll'><table><tr><th>received</th><th>expected</th></tr>"
                   f"<tr><td><pre>{_e(_value(f['received']))}</pre></td><td><pre>{_e(_value(f['expected']))}</pre></td></tr></table></div>")
        if f.get("detail"):  # schemathesis's: the failing keyword and value, its schema dump cut, its curl copyable
            detail, sep, command = cut_schema_dump(str(f["detail"])).partition("Reproduce with:")
            out.append(f"<pre class='detail'>{_e(detail.strip())}</pre>")
            if sep and command.strip():
                out.append("<p><b>Reproduce this request:</b></p>" + _command(command.strip().split("\n")[0], "reproduce"))
                rest = "\n".join(command.strip().split("\n")[1:]).strip()
                if rest:
                    out.append(f"<pre class='detail'>{_e(rest)}</pre>")
        if f.get("readings"):
            out.append(f"<p>fails under reading(s): {_e(', '.join(f['readings']))}</p>")
    if r.get("reproduce"):
        out.append("<p><b>Reproduce:</b></p>" + _command(r["reproduce"], "reproduce"))
    if r.get("curl"):
        out.append("<p><b>The check's last requests</b> (key from <code>$MEMCONFORM_API_KEY</code>; every request "
                   "in exchanges.har):</p>" + _command("\n".join(r["curl"]), "curl"))
    if r.get("transcript"):
        out.append(f"<details><summary>transcript ({len(r['transcript'])} lines)</summary>"
                   f"<pre>{_e(chr(10).join(r['transcript']))}</pre></details>")
    return out + ["</div>"]


def _failures(report: Report) -> list[str]:
    groups = group_problems(report.results)
    total = sum(len(g.results) for g in groups)
    causes = f", {plural(len(groups), 'cause')}" if total else ""
    out = [f"<h2 id='failures'>Failures, errors and warnings ({total}{causes})</h2>"]
    if not groups:
        return out + ["<p>None.</p>"]
    for g in groups:
        shown, _ = g.example()  # the check whose own words name the cause leads its card
        cause = g.cause if len(g.results) > 1 and g.cause != shown.get("reason") else ""  # a reason is said below
        out += _failure_block(shown, [r for r in g.results if r is not shown], cause)
    return out


def section_rates(report: Report) -> list[tuple[str, int, int]]:
    """(suite and top-level section, passed, assessed) in report order; not-applicable skips not counted."""
    rates: dict[str, list[int]] = {}
    for r in report.results:
        top = re.match(r"§?\d+", r["section"])
        key = f"{r['suite']} {top.group() if top else r['section']}"
        entry = rates.setdefault(key, [0, 0])
        if r["outcome"] == "skipped" and r.get("not_applicable"):
            continue
        entry[1] += 1
        entry[0] += r["outcome"] == "passed"
    return [(k, p, n) for k, (p, n) in rates.items()]


def _chart(report: Report) -> list[str]:
    rows = [r for r in section_rows(report.results) if r.assessed]
    out = ["<h2 id='chart'>Pass rate by spec section</h2>"]
    if not rows:
        return out + ["<p>No results.</p>"]
    bar, row_h = 420, 22
    label_w = 12 + max(7 * len(r.label) for r in rows)  # wide enough for the longest label: never clipped
    height = row_h * len(rows) + 10
    svg = ["<div class='scroll'>", f"<svg xmlns='http://www.w3.org/2000/svg' width='{label_w + bar + 230}' height='{height}' role='img' "
           "aria-label='pass rate by spec section'>"]
    for i, r in enumerate(rows):
        y = 5 + i * row_h
        passed_w = round(bar * r.passed / r.assessed)
        failed_w = round(bar * r.failed / r.assessed)
        text = f"{r.passed}/{r.assessed} passed ({round(100 * r.passed / r.assessed)}%)" + (
            f", {r.failed} failed" if r.failed else "")
        svg += [f"<text class='label' x='0' y='{y + 15}' font-size='12'>{_e(r.label)}</text>",
                f"<rect x='{label_w}' y='{y}' width='{bar}' height='{row_h - 6}' fill='#bf8700'/>",
                f"<rect class='bar' x='{label_w}' y='{y}' width='{passed_w}' height='{row_h - 6}' fill='#1a7f37'/>",
                f"<rect class='bar-failed' x='{label_w + bar - failed_w}' y='{y}' width='{failed_w}' height='{row_h - 6}' "
                "fill='#cf222e'/>",
                f"<text x='{label_w + bar + 6}' y='{y + 15}' font-size='12'>{_e(text)}</text>"]
    return out + svg + ["</svg></div>", "<p><small>green passed, red failed or errored, amber neither (inconclusive "
                        "or a warning); not-applicable checks are not counted.</small></p>"]


def _select(name: str, values: list[str]) -> str:
    opts = "".join(f"<option value='{_e(v)}'>{_e(v)}</option>" for v in values)
    return f"<label>{name} <select id='f-{name}'><option value=''>all</option>{opts}</select></label>"


def _table(report: Report) -> list[str]:
    results = report.results
    outcomes = list(dict.fromkeys(outcome_label(r) for r in results))
    keywords = list(dict.fromkeys(r["keyword"] for r in results))
    levels = list(dict.fromkeys(r["level"] for r in results))
    out = [f"<h2 id='all'>Every check (<span id='shown'>{len(results)}</span> of {len(results)} shown)</h2>",
           "<div class='filters'>", _select("outcome", outcomes), _select("keyword", keywords), _select("level", levels),
           "<label>text <input id='f-q' type='search' placeholder='check id, section, sentence'></label></div>",
           "<div class='scroll'><table id='checks'><thead><tr><th>check</th><th>section</th><th>keyword</th><th>level</th>"
           "<th>outcome</th><th>sentence / reason</th></tr></thead><tbody>"]
    for r in results:
        label = outcome_label(r)
        link = f"<a href='#fail-{_e(r['check_id'])}'>{_e(r['check_id'])}</a>" if r["outcome"] in ("failed", "errored") else _e(r["check_id"])
        note = f"<br><small>{_e(r['reason'])}</small>" if r.get("reason") else ""
        out.append(f"<tr data-outcome='{_e(label)}' data-keyword='{_e(r['keyword'])}' data-level='{_e(r['level'])}'>"
                   f"<td><code>{link}</code></td><td>{_e(r['section'])}</td><td>{_e(r['keyword'])}</td><td>{_e(r['level'])}</td>"
                   f"<td><span class='st o-{_slug(label)}'>{_e(label)}</span></td><td>{_e(r['sentence'])}{note}</td></tr>")
    return out + ["</tbody></table></div>"]


def _readings_notes(report: Report) -> list[str]:
    footer = report.footer or {}
    out = ["<h2 id='readings'>Readings seen</h2>"]
    readings = readings_shown(report)
    if readings:
        against = sum(1 for x in readings if x["contradicted_by"])
        if against:
            out.append(f"<p>{_e(plural(against, 'point'))} contradicted by a failure of a check that met the same point: "
                       "the reading is withheld (report.jsonl keeps what was seen).</p>")
        out.append("<div class='scroll'><table><tr><th>suite</th><th>open point</th><th>reading(s) seen</th><th>checks</th></tr>")
        out += [f"<tr><td>{_e(x['suite'])}</td><td>{_e(x['point'])}</td><td>{_seen_cell(x)}</td>"
                f"<td>{_e(', '.join(x['checks']))}</td></tr>" for x in readings]
        out.append("</table></div>")
    else:
        out.append("<p>None recorded.</p>")
    notes = footer.get("notes") or []
    if notes:
        out += ["<h2 id='notes'>Notes</h2>", "<ul>"] + [f"<li><b>{_e(n['suite'])}</b> {_e(n['note'])}</li>" for n in notes] + ["</ul>"]
    return out


def _seen_cell(x: dict[str, Any]) -> str:
    if x["contradicted_by"]:
        return f"<span class='st o-failed'>contradicted by {_e(', '.join(x['contradicted_by']))} (failed)</span>"
    return _e(", ".join(x["seen"]))


def render_html(report: Report) -> str:
    title = f"memconform report: {', '.join(report.header['suites'])}"
    body = [f"<h1>{_e(title)}</h1>", *_head(report), *_levels(report), *_failures(report), *_chart(report),
            *_table(report), *_readings_notes(report)]
    if report.footer is None:
        body.append("<p class='banner truncated'>Truncated run: the report ends without a footer.</p>")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(body)
            + f"\n<script>{_JS}</script>\n</body></html>\n")
