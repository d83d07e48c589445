"""matrix.md: the spec editor's queue first (top ranked sentences, the interop holes), then readings,
implementations, splits. Every piece of data goes through text.md (no HTML, no Markdown syntax from a
target or a handed file); transcripts sit in fenced blocks, where nothing is markup."""

from __future__ import annotations

from typing import Any

from .text import md, md_href, visible

TOP = 20
_MARK = {"passed": "pass", "failed": "FAIL", "warning": "warn", "errored": "not assessed", "not applicable": "n/a",
         "not assessed": "not assessed"}


def cell(text: Any) -> str:
    """A Markdown table cell: escaped data (text.md), so a "|", a backtick, a tag or a line break cannot break out."""
    return md(text)


def fence_safe(text: str) -> str:
    """A transcript line inside a fenced block: one line, no backtick (a fence in target text cannot close it)."""
    return visible(text).replace("`", "'")


def render_markdown(doc: dict[str, Any]) -> str:
    impls = [i["id"] for i in doc["implementations"]]
    leaders = [x for x in doc["sentences"] if not x.get("same_as")]
    verified = "" if doc.get("verified", True) else (
        f" **Unverified:** the reports were made by harness {md(doc['harness_version'])}, combined by "
        f"{md(doc.get('combined_by', '?'))}, whose verdict policy recomputed their levels.")
    out = ["# memconform matrix", "",
           f"harness {md(doc['harness_version'])}, profile {md(doc['profile'])}, {md(doc['generated_at'])}; "
           + "; ".join(f"{md(s['name'])} {md(s['version'])} (seeds {md(', '.join(map(str, s['seeds'])))})"
                       for s in doc["suites"]) + verified,
           "", "Classes: " + ", ".join(f"{md(k)} {v}" for k, v in doc["counts"].items())
           + f"; cells not assessed: {doc.get('not_assessed_cells', 0)}", ""]
    out += _queue(leaders[:TOP], doc.get("not_assessed_cells", 0))
    out += _holes(doc.get("interop_holes", []))
    out += _readings(doc["readings"])
    out += _implementations(doc["implementations"])
    out += _splits([x for x in leaders if x["class"] == "split"])
    out += _all_sentences(doc["sentences"], impls)
    return "\n".join(out) + "\n"


def _queue(top: list[dict[str, Any]], not_assessed: int) -> list[str]:
    out = [f"## The editor's queue: top {len(top)} sentences by disagreement", "",
           f"{not_assessed} cells (implementation x sentence) were not assessed: errored, not run, cut short by a "
           "budget or skipped. A sentence is classed by the cells that were.", "",
           "| rank | sentence | class | disagreement | not assessed | spec text | implementations by group (readings they differ on) |",
           "|---|---|---|---|---|---|---|"]
    for x in top:
        seen = groups_text(x)
        also = f" (also {', '.join(md(a) for a in x['also'])}: the same checks)" if x.get("also") else ""
        split_on = f" on {', '.join(md(p) for p in x['split_points'])}" if x.get("split_points") else ""
        out.append(f"| {x['rank']} | {md(x['id'])} ({md(x['keyword'])}){also} | **{md(x['class'])}**{split_on} | "
                   f"{x['disagreement']:.2f} | {len(x.get('not_assessed', {}))} | {cell(x['quote'])} | {cell(seen)} |")
    return out + [""]


def groups_text(x: dict[str, Any]) -> str:
    """The implementations by group, each with its outcome, the group's readings after it; then the rest
    (a cell not assessed with its reason). Plain text: the caller escapes it."""
    parts, grouped = [], set()
    for g in x["groups"]:
        grouped.update(g["implementations"])
        names = ", ".join(f"{i}: {_MARK[x['outcomes'][i]]}" for i in g["implementations"])
        readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items())
        parts.append(names + (f" ({readings})" if readings and x["disagreement"] else ""))
    why = x.get("not_assessed", {})
    rest = [f"{i}: {_MARK[o]}" + (f" ({why[i]})" if i in why else "") for i, o in x["outcomes"].items() if i not in grouped]
    return " / ".join(parts + ([", ".join(rest)] if rest else []))


def _holes(holes: list[dict[str, Any]]) -> list[str]:
    if not holes:
        return []
    out = ["## Interop holes: each needs an erratum", "",
           "A producer behaviour the suite accepts beside a consumer behaviour the text lets a consumer take against "
           "it: two implementations, each conformant to its reading, lose data between them.", "",
           "| hole | sentences | producer (verdict) | consumer (verdict) | erratum |", "|---|---|---|---|---|"]
    for h in holes:
        p, c = h["producer"], h["consumer"]
        out.append(f"| {md(h['suite'])} {md(h['id'])}: {md(h['title'])} | {md(', '.join(h['sentences']))} | "
                   f"{md(p['behaviour'])} ({md(p['verdict'])}) | {md(c['behaviour'])} ({md(c['verdict'])}) | "
                   f"[{md(h['erratum']['title'])}]({md_href(h['erratum']['href'])}): **needs an erratum** |")
    return out + [""]


def _readings(rows: list[dict[str, Any]]) -> list[str]:
    out = ["## Readings (open point x implementation)", "",
           "A point is flagged when two readings are each followed by two or more independent implementations: "
           "the text needs an erratum.", "", "| point | erratum | readings: implementations | needs an erratum |",
           "|---|---|---|---|"]
    for r in rows:
        followed = "; ".join(f"{reading or '(none)'}: {', '.join(ids)}" for reading, ids in r["readings"].items())
        flag = "**yes**" if r["needs_erratum"] else "no"
        out.append(f"| {md(r['suite'])} {md(r['point'])} | [{md(r['erratum']['title'])}]({md_href(r['erratum']['href'])}) | "
                   f"{cell(followed)} | {flag} |")
    return out + [""]


def _implementations(impls: list[dict[str, Any]]) -> list[str]:
    out = ["## Implementations", "", "| id | version | runs | levels (claimed marked *) |", "|---|---|---|---|"]
    for i in impls:
        runs = "; ".join(f"{r['suite']} seed {r['seed']}: {r['status']}" + (f" ({r['reason']})" if r["reason"] else "")
                         for r in i["runs"])
        levels = "; ".join(f"{lv['suite']} {lv['title']}{'*' if lv['claimed'] else ''}: {lv['status']}" for lv in i["levels"])
        out.append(f"| {cell(i['id'])} | {cell(i['version'])} | {cell(runs)} | {cell(levels)} |")
    return out + [""]


def _splits(splits: list[dict[str, Any]]) -> list[str]:
    if not splits:
        return ["## Splits", "", "No sentence splits the implementations.", ""]
    out = ["## Splits, one exchange per group", ""]
    for x in splits:
        out += [f"### {md(x['id'])} (rank {x['rank']})", "", f"> {cell(x['quote'])}", ""]
        for g in x["groups"]:
            readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items()) or "no reading recorded"
            out.append(f"- **{md(g['side'])}** ({md(readings)}): {md(', '.join(g['implementations']))}")
            ex = g.get("exchange")
            if ex:
                out += ["", "  ```text", *("  " + fence_safe(line) for line in ex["transcript"]), "  ```"]
            else:
                out.append("  (no transcript in these reports)")
        out.append("")
    return out


def _all_sentences(sentences: list[dict[str, Any]], impls: list[str]) -> list[str]:
    out = ["## Every sentence", "", "<details><summary>all ranked sentences</summary>", "",
           "| rank | sentence | class | outcomes |", "|---|---|---|---|"]
    for x in sentences:
        why = x.get("not_assessed", {})
        marks = ", ".join(f"{i}: {_MARK[x['outcomes'][i]]}" + (f" ({why[i]})" if i in why else "")
                          for i in impls if i in x["outcomes"])
        same = f" (same checks as {md(x['same_as'])})" if x.get("same_as") else ""
        out.append(f"| {x['rank']} | {md(x['id'])}{same} | {md(x['class'])} | {cell(marks)} |")
    return out + ["", "</details>", ""]
