"""The calls a suite's run of a profile is planned to send, for the run header: what that run sent to the
suite's embedded reference (suites/<spec>/calls.json, written by scripts/planned_calls.py), so whoever drives
a product through a slow command knows the cost before the run. A target that fails checks can take more
(a packed request that fails is split until each failure names its value) or fewer (a check that errors
stops early); the footer says how many were made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.suite import get_suite

FILE_NAME = "calls.json"


def calls_file(suite_name: str) -> Path:
    """suites/<spec>/calls.json: beside the suite's domain table and requirement map."""
    from ..kit.domain import table_path

    return table_path(get_suite(suite_name)).with_name(FILE_NAME)


def recorded(suite_name: str) -> dict[str, Any]:
    """{"harness_version": ..., "profiles": {profile: calls}} of one suite; empty when none was recorded."""
    path = calls_file(suite_name)
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def planned(suites: list[str], profile_name: str) -> dict[str, int]:
    """Per suite, the calls its run of this profile sent to its reference (suites with no figure left out)."""
    found = {}
    for name in suites:
        calls = recorded(name).get("profiles", {}).get(profile_name)
        if isinstance(calls, int):
            found[name] = calls
    return found
