"""Run the OMP suite under pytest: `pytest --pyargs suites.omp [--mc-target http://... --mc-api-key ...]`."""

from harness.plugin import suite_tests

from . import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("omp")
