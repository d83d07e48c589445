"""Run the AI Memory Portability Standard suite under pytest: `pytest --pyargs memconform.suites.amps [--mc-target ...]`."""

from memconform.cli.plugin import suite_tests

test_check = suite_tests("amps")
