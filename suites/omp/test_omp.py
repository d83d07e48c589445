"""Run the OMP suite under pytest: `pytest --pyargs memconform.suites.omp [--mc-target http://... --mc-api-key ...]`."""

from memconform.cli.plugin import suite_tests

test_check = suite_tests("omp")
