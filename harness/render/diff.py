"""`memconform diff A.jsonl B.jsonl`: what changed from run A to run B.

Newly failing (passed, skipped or absent in A; failed or errored in B; warnings apart), newly
passing, changed failure messages (failing in both, other titles, paths or reasons), changed
level verdicts, changed readings (per open point, the readings seen), checks only in one run.
Exit 1 when anything newly fails or a level verdict got worse, else 0 (a regression gate).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core.report import Report
from . import outcome_label

BAD = ("failed", "errored")
RANK = {"conformant": 0, "not applicable": 0, "not claimed": 0, "not assessed": 1, "not conformant": 2}


def _message(r: dict[str, Any]) -> list[str]:
    return [f"{f['title']} at {f['path']}" for f in r["failures"]] or ([r["reason"]] if r["reason"] else [])


def _bad(r: dict[str, Any] | None) -> bool:
    return r is not None and r["outcome"] in BAD and not r.get("warning")


@dataclass
class ReportDiff:
    newly_failing: list[dict[str, str]] = field(default_factory=list)
    newly_passing: list[dict[str, str]] = field(default_factory=list)
    changed_messages: list[dict[str, Any]] = field(default_factory=list)
    changed_outcomes: list[dict[str, str]] = field(default_factory=list)  # any other change of outcome label
    changed_levels: list[dict[str, str]] = field(default_factory=list)
    changed_readings: list[dict[str, Any]] = field(default_factory=list)
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)

    @property
    def worse(self) -> bool:
        return bool(self.newly_failing) or any(RANK.get(c["b"], 1) > RANK.get(c["a"], 1) for c in self.changed_levels)


def diff_reports(a: Report, b: Report) -> ReportDiff:
    d = ReportDiff()
    d.truncated = [name for name, rep in (("A", a), ("B", b)) if rep.footer is None]
    ra = {r["check_id"]: r for r in a.results}
    rb = {r["check_id"]: r for r in b.results}
    d.only_in_a = [c for c in ra if c not in rb]
    d.only_in_b = [c for c in rb if c not in ra]
    for cid, new in rb.items():
        old = ra.get(cid)
        la, lb = (outcome_label(old) if old else "absent"), outcome_label(new)
        if _bad(new) and not _bad(old):
            d.newly_failing.append({"check": cid, "was": la, "now": lb, "message": "; ".join(_message(new))[:300]})
        elif _bad(old) and new["outcome"] == "passed":
            d.newly_passing.append({"check": cid, "was": la, "now": lb})
        elif old is not None and _bad(old) and _bad(new) and (_message(old) != _message(new) or la != lb):
            d.changed_messages.append({"check": cid, "was": _message(old), "now": _message(new)})
        elif old is not None and la != lb:
            d.changed_outcomes.append({"check": cid, "was": la, "now": lb})
    la_ = {(v["suite"], v["level"]): v for v in (a.footer or {}).get("levels", [])}
    lb_ = {(v["suite"], v["level"]): v for v in (b.footer or {}).get("levels", [])}
    for key in dict.fromkeys([*la_, *lb_]):
        sa = la_[key]["status"] if key in la_ else "not assessed"
        sb = lb_[key]["status"] if key in lb_ else "not assessed"
        if sa != sb:
            d.changed_levels.append({"suite": key[0], "level": key[1], "a": sa, "b": sb})
    rda = {(x["suite"], x["point"]): x["seen"] for x in (a.footer or {}).get("readings", [])}
    rdb = {(x["suite"], x["point"]): x["seen"] for x in (b.footer or {}).get("readings", [])}
    for key in dict.fromkeys([*rda, *rdb]):
        if sorted(rda.get(key, [])) != sorted(rdb.get(key, [])):
            d.changed_readings.append({"suite": key[0], "point": key[1], "a": rda.get(key, []), "b": rdb.get(key, [])})
    return d


def render_text(d: ReportDiff) -> str:
    out: list[str] = [f"truncated run ({x}): no footer, so no level verdicts or readings" for x in d.truncated]
    sections = [("newly failing", [f"{x['check']}: {x['was']} -> {x['now']}: {x['message']}" for x in d.newly_failing]),
                ("newly passing", [f"{x['check']}: {x['was']} -> {x['now']}" for x in d.newly_passing]),
                ("changed messages", [f"{x['check']}:\n      was: {'; '.join(x['was'])}\n      now: {'; '.join(x['now'])}"
                                      for x in d.changed_messages]),
                ("other changed outcomes", [f"{x['check']}: {x['was']} -> {x['now']}" for x in d.changed_outcomes]),
                ("changed level verdicts", [f"{x['suite']} {x['level']}: {x['a']} -> {x['b']}" for x in d.changed_levels]),
                ("changed readings", [f"{x['suite']} {x['point']}: {', '.join(x['a']) or '-'} -> {', '.join(x['b']) or '-'}"
                                      for x in d.changed_readings]),
                ("only in A", d.only_in_a), ("only in B", d.only_in_b)]
    for title, lines in sections:
        if lines:
            out.append(f"{title} ({len(lines)}):")
            out += [f"  {line}" for line in lines]
    if not any(lines for _, lines in sections):
        out.append("no difference in outcomes, messages, level verdicts or readings")
    return "\n".join(out) + "\n"


def cmd_diff(args: Any) -> int:
    a = Report.from_path(Path(args.a), allow_truncated=True, allow_empty=True)
    b = Report.from_path(Path(args.b), allow_truncated=True, allow_empty=True)
    a.check_chain(str(args.a))  # a report changed after it was written is named, never compared
    b.check_chain(str(args.b))
    d = diff_reports(a, b)
    if args.json:
        print(json.dumps({**asdict(d), "worse": d.worse}, ensure_ascii=False, indent=1))
    else:
        print(render_text(d), end="")
    return 1 if d.worse else 0
