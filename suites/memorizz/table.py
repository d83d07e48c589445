"""MemoRizz's one table of readings (scripts/open_points.py finds a suite's table here): every row of
readings.py, which the checks ask (`readings.observe`); the request and answer kinds are in reading_kinds.py."""

from __future__ import annotations

from memconform.suites.memorizz.readings import TABLE

__all__ = ["TABLE"]
