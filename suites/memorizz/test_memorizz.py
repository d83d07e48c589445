"""Run the MemoRizz archive suite under pytest: `pytest --pyargs memconform.suites.memorizz [--mc-target ...]`."""

from memconform.cli.plugin import suite_tests

test_check = suite_tests("memorizz")
