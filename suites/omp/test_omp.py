"""Run the OMP suite under pytest: `pytest --pyargs memconform.suites.omp [--mc-target http://... --mc-api-key ...]`."""

from memconform.plugin import suite_tests
from memconform.suites.omp import checks  # noqa: F401  (registers the checks)

test_check = suite_tests("omp")
