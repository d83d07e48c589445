"""docs/open-points.md lists every open point a check observes, with the checks that meet it
(scripts/open_points.py); OMP's are the points of its table of readings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def script() -> object:
    spec = importlib.util.spec_from_file_location("open_points", ROOT / "scripts" / "open_points.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_list_of_open_points_is_current() -> None:
    assert script().main(["--check"]) == 0, "docs/open-points.md is stale: run python scripts/open_points.py"  # type: ignore[attr-defined]


def test_the_scan_finds_a_point_several_checks_meet_and_only_registered_checks() -> None:
    found = script().scanned("emp")  # type: ignore[attr-defined]
    assert {"writer_stale_lock", "writer_after_killed_writer"} <= found["E2"], found.get("E2")
    from memconform.core.suite import get_suite

    registered = {check_id.split(".", 1)[1] for check_id in get_suite("emp").registered()}
    assert set().union(*found.values()) <= registered
