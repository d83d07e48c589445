"""Run the AI Memory Portability Standard suite under pytest: `pytest --pyargs memconform.suites.amps [--mc-target ...]`."""

from memconform.plugin import suite_tests
from memconform.suites.amps import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("amps")
