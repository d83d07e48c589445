"""The memoryai checks, registered by topic: checks run in the order they register, which is the order of
the imports below (kept as written: sorting them would reorder the run). The SuiteSpec's checks_module
names this package (suite.py): the first ask for the checks imports it and registers every check, and a
wrong declaration is refused then (core/check.py)."""
# ruff: noqa: F401, I001

from memconform.suites.memoryai.checks import document
from memconform.suites.memoryai.checks import consumer
from memconform.suites.memoryai.checks import profile
from memconform.suites.memoryai.checks import roundtrip
from memconform.suites.memoryai.checks import stateful
from memconform.suites.memoryai.checks import producer
from memconform.suites.memoryai.checks import domain_imports
from memconform.suites.memoryai.checks import domain_records
from memconform.suites.memoryai.checks import domain_pairs
# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.memoryai.checks import batch_failures
from memconform.suites.memoryai.checks import hostile_input
from memconform.suites.memoryai.suite import SUITE

__all__ = ["SUITE"]
