"""Run the MemoryAI suite under pytest: `pytest --pyargs memconform.suites.memoryai [--mc-target ...]`."""

from memconform.plugin import suite_tests
from memconform.suites.memoryai import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("memoryai")
