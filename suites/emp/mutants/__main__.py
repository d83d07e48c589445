"""A mutant as a command, one process per operation: `python -m memconform.suites.emp.mutants NAME OP IN OUT`."""

import sys

from memconform.suites.emp.mutants import COMMAND_MUTANTS, MUTANTS
from memconform.suites.emp.reference import main

sys.exit(main(sys.argv[2:], app={**MUTANTS, **COMMAND_MUTANTS}[sys.argv[1]]))
