"""matrix.md: the spec editor's queue first (top ranked sentences), then readings, implementations, splits."""

from __future__ import annotations

from typing import Any

TOP = 20
_MARK = {"passed": "pass", "failed": "FAIL", "warning": "warn", "errored": "ERROR", "not applicable": "n/a",
         "not assessed": "-"}


def cell(text: Any) -> str:
    """A Markdown table cell: a "|", a backtick run or a line break in target text cannot break the table."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "'")


def fence_safe(text: str) -> str:
    """A transcript line inside a fenced block: a fence in target text cannot close it."""
    return cell(text).replace("```", "`\u200b``")


def render_markdown(doc: dict[str, Any]) -> str:
    impls = [i["id"] for i in doc["implementations"]]
    out = ["# memconform matrix", "",
           f"harness {doc['harness_version']}, profile `{doc['profile']}`, {doc['generated_at']}; "
           + "; ".join(f"{s['name']} {s['version']} (seeds {', '.join(map(str, s['seeds']))})" for s in doc["suites"]),
           "", "Classes: " + ", ".join(f"{k} {v}" for k, v in doc["counts"].items()), ""]
    out += _queue(doc["sentences"][:TOP], impls)
    out += _readings(doc["readings"])
    out += _implementations(doc["implementations"])
    out += _splits([x for x in doc["sentences"] if x["class"] == "split"])
    out += _all_sentences(doc["sentences"], impls)
    return "\n".join(out) + "\n"


def _queue(top: list[dict[str, Any]], impls: list[str]) -> list[str]:
    out = [f"## The editor's queue: top {len(top)} sentences by disagreement", "",
           "| rank | sentence | class | disagreement | spec text | implementations by group (readings they differ on) |", "|---|---|---|---|---|---|"]
    for x in top:
        seen = groups_text(x)
        out.append(f"| {x['rank']} | {x['id']} ({x['keyword']}) | **{x['class']}** | {x['disagreement']:.2f} | "
                   f"{cell(x['quote'])} | {cell(seen)} |")
    return out + [""]


def groups_text(x: dict[str, Any]) -> str:
    """The implementations by group, each with its outcome, the group's readings after it; then the rest."""
    parts, grouped = [], set()
    for g in x["groups"]:
        grouped.update(g["implementations"])
        names = ", ".join(f"{i}: {_MARK[x['outcomes'][i]]}" for i in g["implementations"])
        readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items())
        parts.append(names + (f" ({readings})" if readings and x["disagreement"] else ""))
    rest = [f"{i}: {_MARK[o]}" for i, o in x["outcomes"].items() if i not in grouped]
    return " / ".join(parts + ([", ".join(rest)] if rest else []))


def _readings(rows: list[dict[str, Any]]) -> list[str]:
    out = ["## Readings (open point x implementation)", "",
           "A point is flagged when two readings are each followed by two or more independent implementations: "
           "the text needs an erratum.", "", "| point | erratum | readings: implementations | needs an erratum |",
           "|---|---|---|---|"]
    for r in rows:
        followed = "; ".join(f"{reading or '(none)'}: {', '.join(ids)}" for reading, ids in r["readings"].items())
        flag = "**yes**" if r["needs_erratum"] else "no"
        out.append(f"| {r['suite']} {r['point']} | [{cell(r['erratum']['title'])}]({r['erratum']['href']}) | "
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
        out += [f"### {x['id']} (rank {x['rank']})", "", f"> {cell(x['quote'])}", ""]
        for g in x["groups"]:
            readings = "; ".join(f"{p}: {', '.join(v)}" for p, v in g["readings"].items()) or "no reading recorded"
            out.append(f"- **{g['side']}** ({readings}): {', '.join(g['implementations'])}")
            ex = g.get("exchange")
            if ex:
                out += ["", "  ```", *("  " + fence_safe(line) for line in ex["transcript"]), "  ```"]
            else:
                out.append("  (no transcript in these reports)")
        out.append("")
    return out


def _all_sentences(sentences: list[dict[str, Any]], impls: list[str]) -> list[str]:
    out = ["## Every sentence", "", "<details><summary>all ranked sentences</summary>", "",
           "| rank | sentence | class | outcomes |", "|---|---|---|---|"]
    for x in sentences:
        marks = ", ".join(f"{i}: {_MARK[x['outcomes'][i]]}" for i in impls if i in x["outcomes"])
        out.append(f"| {x['rank']} | {x['id']} | {x['class']} | {cell(marks)} |")
    return out + ["", "</details>", ""]
