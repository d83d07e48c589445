"""Run the MemoryAI suite under pytest: `pytest --pyargs memconform.suites.memoryai [--mc-target ...]`."""

from memconform.cli.plugin import suite_tests

test_check = suite_tests("memoryai")
