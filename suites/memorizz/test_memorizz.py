"""Run the MemoRizz archive suite under pytest: `pytest --pyargs memconform.suites.memorizz [--mc-target ...]`."""

from memconform.plugin import suite_tests
from memconform.suites.memorizz import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("memorizz")
