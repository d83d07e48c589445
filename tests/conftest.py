from pathlib import Path

from memconform.core.suite import all_suites

ROOT = Path(__file__).resolve().parents[1]

# Checks run in the order they register, which is the order each suite's entry module imports its check
# modules. A test module that imports a check module first (test_omp_openapi imports fuzz_checks) would
# register those checks first and change the run order of every later in-process run; load every suite
# through its entry point before any test module is collected, as the CLI and the plugin do.
all_suites()
