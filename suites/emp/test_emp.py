"""Run the Edge Memory Protocol suite under pytest: `pytest --pyargs suites.emp [--mc-target ...]`."""

from harness.plugin import suite_tests

from . import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("emp")
