"""Run the Edge Memory Protocol suite under pytest: `pytest --pyargs memconform.suites.emp [--mc-target ...]`."""

from memconform.cli.plugin import suite_tests

test_check = suite_tests("emp")
