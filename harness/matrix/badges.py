"""Per implementation and level: an SVG badge and a shields.io endpoint JSON.

The endpoint JSON (https://shields.io/badges/endpoint-badge) is `{"schemaVersion": 1, "label", "message",
"color"}`; the message carries the harness and spec versions and the date, so a badge never outlives
what it says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..render.badge import badge_svg

SHIELDS_COLORS = {"conformant": "brightgreen", "not conformant": "red", "not assessed": "yellow",
                  "not applicable": "lightgrey", "not claimed": "lightgrey"}


def _name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts)).strip("-")


def endpoint_json(impl: str, level: dict[str, Any], suite_version: str, harness: str, date: str,
                  verified: bool = True) -> dict[str, Any]:
    """`verified` false: the reports were made by another harness version than the one that recomputed
    the levels, so the badge says "unverified" and takes no verdict colour."""
    status = level["status"] if verified else f"unverified: {level['status']}"
    return {"schemaVersion": 1, "label": f"{impl} {level['suite']} {level['title']}",
            "message": f"{status} (spec {suite_version}, memconform {harness}, {date})",
            "color": SHIELDS_COLORS.get(level["status"], "yellow") if verified else "lightgrey"}


def badges(doc: dict[str, Any]) -> dict[str, str]:
    """file name -> content: `<impl>-<suite>-<level>.svg` and `.json` for every level of every implementation."""
    versions = {s["name"]: s["version"] for s in doc["suites"]}
    date = doc["generated_at"][:10]
    out: dict[str, str] = {}
    for impl in doc["implementations"]:
        for lv in impl["levels"]:
            stem = _name(impl["id"], lv["suite"], lv["level"])
            verified = bool(doc.get("verified", True))
            out[stem + ".svg"] = badge_svg(f"{lv['suite']} {lv['title']}", lv["status"] if verified else "unverified")
            body = endpoint_json(impl["id"], lv, versions.get(lv["suite"], "?"), doc["harness_version"], date, verified)
            out[stem + ".json"] = json.dumps(body, ensure_ascii=False) + "\n"
    return out


def write_badges(doc: dict[str, Any], folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    made = badges(doc)
    for name, text in made.items():
        (folder / name).write_text(text, "utf-8")
    return len(made)
