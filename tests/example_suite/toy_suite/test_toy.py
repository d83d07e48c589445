"""Run the Toy Counter suite under pytest: `pytest --pyargs toy_suite [--mc-target ...]`."""

from memconform.cli.plugin import suite_tests

from toy_suite import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("toy")
