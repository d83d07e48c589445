"""`memconform matrix diff OLD NEW`: a gate. New splits and regressions of an implementation fail it.

A regression: a sentence an implementation passed in OLD that it fails (or errors on) in NEW, or a level
that was conformant and no longer is.
"""

from __future__ import annotations

from typing import Any

_GOOD = {"passed"}
_BAD = {"failed", "warning", "errored"}


def diff_matrices(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    before = {x["id"]: x for x in old["sentences"]}
    new_splits, regressions, fixed, reclassified = [], [], [], []
    for x in new["sentences"]:
        was = before.get(x["id"])
        if x["class"] == "split" and (was is None or was["class"] != "split"):
            new_splits.append({"sentence": x["id"], "was": was["class"] if was else "absent"})
        if was is None:
            continue
        if was["class"] != x["class"]:
            reclassified.append({"sentence": x["id"], "from": was["class"], "to": x["class"]})
        for impl, outcome in x["outcomes"].items():
            prior = was["outcomes"].get(impl)
            if prior in _GOOD and outcome in _BAD:
                regressions.append({"implementation": impl, "sentence": x["id"], "from": prior, "to": outcome})
            elif prior in _BAD and outcome in _GOOD:
                fixed.append({"implementation": impl, "sentence": x["id"], "from": prior, "to": outcome})
    regressions += _level_regressions(old, new)
    return {"new_splits": new_splits, "regressions": regressions, "fixed": fixed, "reclassified": reclassified}


def _level_regressions(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    def levels(doc: dict[str, Any]) -> dict[tuple[str, str, str], str]:
        return {(i["id"], lv["suite"], lv["level"]): lv["status"] for i in doc["implementations"] for lv in i["levels"]}

    before, after = levels(old), levels(new)
    return [{"implementation": k[0], "level": f"{k[1]} {k[2]}", "from": "conformant", "to": after.get(k, "absent")}
            for k, status in sorted(before.items()) if status == "conformant" and after.get(k) != "conformant"]


def render_diff(changes: dict[str, Any]) -> str:
    out = []
    for s in changes["new_splits"]:
        out.append(f"NEW SPLIT   {s['sentence']} (was {s['was']})")
    for r in changes["regressions"]:
        what = r.get("sentence") or r.get("level")
        out.append(f"REGRESSION  {r['implementation']} {what}: {r['from']} -> {r['to']}")
    for r in changes["fixed"]:
        out.append(f"fixed       {r['implementation']} {r['sentence']}: {r['from']} -> {r['to']}")
    for r in changes["reclassified"]:
        out.append(f"class       {r['sentence']}: {r['from']} -> {r['to']}")
    gate = "fails" if changes["new_splits"] or changes["regressions"] else "passes"
    out.append(f"{len(changes['new_splits'])} new splits, {len(changes['regressions'])} regressions, "
               f"{len(changes['fixed'])} fixed: the gate {gate}")
    return "\n".join(out) + "\n"
