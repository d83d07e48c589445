"""The emp checks, registered by topic: checks run in the order they register, which is the order of
the imports below (kept as written: sorting them would reorder the run). The SuiteSpec's checks_module
names this package (suite.py): the first ask for the checks imports it and registers every check, and a
wrong declaration is refused then (core/check.py)."""
# ruff: noqa: F401, I001

from memconform.suites.emp.checks import lock
from memconform.suites.emp.checks import concurrency
from memconform.suites.emp.checks import writer
from memconform.suites.emp.checks import crash
from memconform.suites.emp.checks import file
from memconform.suites.emp.checks import reader
from memconform.suites.emp.checks import stateful
from memconform.suites.emp.checks import domain_reader
from memconform.suites.emp.checks import domain_writer
from memconform.suites.emp.checks import domain_query
from memconform.suites.emp.checks import domain_files
# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.emp.checks import hostile_input
from memconform.suites.emp.suite import SUITE

__all__ = ["SUITE"]
