"""`memconform matrix diff OLD NEW`: a gate. A new split, a new cell not assessed, or a regression of an
implementation fails it.

A regression: a sentence an implementation passed in OLD that it fails in NEW, or a level that was
conformant and no longer is. A new cell not assessed: on a sentence OLD had, a cell that was assessed
there (or whose implementation was not there) and in NEW says nothing (errored, not run, cut short by a
budget): a matrix that silently assesses less is not a matrix that agrees more. A sentence OLD did not
have (the requirement map grew) has no baseline: only its class is gated. A matrix of version 1 (its "errored" outcome) is read as not assessed.
"""

from __future__ import annotations

from typing import Any

_GOOD = {"passed"}
_BAD = {"failed", "warning"}
_OPEN = {"not assessed", "errored"}  # "errored": a version 1 matrix's word for a cell that says nothing


def diff_matrices(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    before = {x["id"]: x for x in old["sentences"]}
    new_splits: list[dict[str, Any]] = []
    regressions: list[dict[str, Any]] = []
    fixed: list[dict[str, Any]] = []
    reclassified: list[dict[str, Any]] = []
    not_assessed: list[dict[str, Any]] = []
    for x in new["sentences"]:
        was = before.get(x["id"])
        if x["class"] == "split" and (was is None or was["class"] != "split"):
            new_splits.append({"sentence": x["id"], "was": was["class"] if was else "absent"})
        prior_outcomes = was["outcomes"] if was else {}
        for impl, outcome in x["outcomes"].items():
            prior = prior_outcomes.get(impl)
            if outcome in _OPEN and prior not in _OPEN and was is not None:
                reason = x.get("not_assessed", {}).get(impl, "")
                not_assessed.append({"implementation": impl, "sentence": x["id"], "from": prior or "absent",
                                     "reason": reason})
            elif prior in _GOOD and outcome in _BAD:
                regressions.append({"implementation": impl, "sentence": x["id"], "from": prior, "to": outcome})
            elif prior in _BAD and outcome in _GOOD:
                fixed.append({"implementation": impl, "sentence": x["id"], "from": prior, "to": outcome})
        if was is not None and was["class"] != x["class"]:
            reclassified.append({"sentence": x["id"], "from": was["class"], "to": x["class"]})
    regressions += _level_regressions(old, new)
    return {"new_splits": new_splits, "new_not_assessed": not_assessed, "regressions": regressions, "fixed": fixed,
            "reclassified": reclassified}


def gate_fails(changes: dict[str, Any]) -> bool:
    return bool(changes["new_splits"] or changes["new_not_assessed"] or changes["regressions"])


def _level_regressions(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    def levels(doc: dict[str, Any]) -> dict[tuple[str, str, str], str]:
        return {(i["id"], lv["suite"], lv["level"]): lv["status"] for i in doc["implementations"] for lv in i["levels"]}

    before, after = levels(old), levels(new)
    return [{"implementation": k[0], "level": f"{k[1]} {k[2]}", "from": "conformant", "to": after.get(k, "absent")}
            for k, status in sorted(before.items()) if status == "conformant" and after.get(k) != "conformant"]


def render_diff(changes: dict[str, Any]) -> str:
    from .text import visible

    out = []
    for s in changes["new_splits"]:
        out.append(f"NEW SPLIT   {s['sentence']} (was {s['was']})")
    for r in changes["new_not_assessed"]:
        out.append(f"NOT ASSESSED {r['implementation']} {r['sentence']} (was {r['from']}): {r['reason']}")
    for r in changes["regressions"]:
        what = r.get("sentence") or r.get("level")
        out.append(f"REGRESSION  {r['implementation']} {what}: {r['from']} -> {r['to']}")
    for r in changes["fixed"]:
        out.append(f"fixed       {r['implementation']} {r['sentence']}: {r['from']} -> {r['to']}")
    for r in changes["reclassified"]:
        out.append(f"class       {r['sentence']}: {r['from']} -> {r['to']}")
    gate = "fails" if gate_fails(changes) else "passes"
    out.append(f"{len(changes['new_splits'])} new splits, {len(changes['new_not_assessed'])} new cells not assessed, "
               f"{len(changes['regressions'])} regressions, {len(changes['fixed'])} fixed: the gate {gate}")
    # ids and reasons come from files handed in: no control character reaches the terminal
    return "\n".join(visible(line) for line in out) + "\n"
