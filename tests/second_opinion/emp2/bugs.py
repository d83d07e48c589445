"""The SECOND_OPINION_BUGS switch: which deliberate faults (listed in bugs.json) are on."""

import json
import os
from pathlib import Path

KNOWN_BUGS = frozenset(
    entry["name"] for entry in json.loads(Path(__file__).with_name("bugs.json").read_text())
)


class UnknownBug(ValueError):
    pass


def bugs_from_environment(environ=None) -> frozenset[str]:
    """Names from SECOND_OPINION_BUGS (comma separated); an unknown name is refused, never ignored."""
    raw = (os.environ if environ is None else environ).get("SECOND_OPINION_BUGS", "")
    names = frozenset(name.strip() for name in raw.split(",") if name.strip())
    unknown = sorted(names - KNOWN_BUGS)
    if unknown:
        raise UnknownBug(f"unknown bug name(s): {', '.join(unknown)}; known: {', '.join(sorted(KNOWN_BUGS))}")
    return names
