"""Run the MemoRizz archive suite under pytest: `pytest --pyargs suites.memorizz [--mc-target ...]`."""

from harness.plugin import suite_tests

from . import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("memorizz")
