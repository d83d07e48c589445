"""The omp checks, registered by topic: checks run in the order they register, which is the order of
the imports below (kept as written: sorting them would reorder the run). The SuiteSpec's checks_module
names this package (suite.py): the first ask for the checks imports it and registers every check, and a
wrong declaration is refused then (core/check.py)."""
# ruff: noqa: F401, I001

from memconform.suites.omp.checks import listing
from memconform.suites.omp.checks import shape
from memconform.suites.omp.checks import sort
from memconform.suites.omp.checks import crud
from memconform.suites.omp.checks import search
from memconform.suites.omp.checks import imports
from memconform.suites.omp.checks import import_paths
from memconform.suites.omp.checks import auth
from memconform.suites.omp.checks import stateful
from memconform.suites.omp.checks import bad_input
from memconform.suites.omp.checks import concurrency
from memconform.suites.omp.checks import search_full
from memconform.suites.omp.checks import security_ai
from memconform.suites.omp.checks import fuzz
from memconform.suites.omp.checks import domain_writes
from memconform.suites.omp.checks import domain_params
from memconform.suites.omp.checks import large_roundtrip
from memconform.suites.omp.checks import export_document
# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.omp.checks import hostile_input
from memconform.suites.omp.suite import SUITE

__all__ = ["SUITE"]
