"""docs/open-points.md lists every open point a check observes, with the checks that meet it
(scripts/open_points.py); a suite with a table of readings (table.py) is listed from it."""

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


def test_a_suite_is_read_from_its_table_when_its_package_has_one() -> None:
    """Whatever its name: a suite package holding table.py (TABLE) is listed from it, any other from the scan."""
    module = script()
    text = module.render()  # type: ignore[attr-defined]
    for suite in module.suites():  # type: ignore[attr-defined]
        listed = f"in its table of readings (suites/{suite}/table.py)" in text
        assert listed == (ROOT / "suites" / suite / "table.py").is_file(), suite
    assert "in its table of readings (suites/emp/table.py)" in text
    assert "`written_id` stands for" in text  # a table's STANDS_FOR is shown
