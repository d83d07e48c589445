"""Run the Edge Memory Protocol suite under pytest: `pytest --pyargs memconform.suites.emp [--mc-target ...]`."""

from memconform.plugin import suite_tests
from memconform.suites.emp import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("emp")
