"""Run the AI Memory Portability Standard suite under pytest: `pytest --pyargs suites.amps [--mc-target ...]`."""

from harness.plugin import suite_tests

from . import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("amps")
