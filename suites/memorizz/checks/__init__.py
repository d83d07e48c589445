"""The memorizz checks, registered by topic: checks run in the order they register, which is the order of
the imports below (kept as written: sorting them would reorder the run). The SuiteSpec's checks_module
names this package (suite.py): the first ask for the checks imports it and registers every check, and a
wrong declaration is refused then (core/check.py)."""
# ruff: noqa: F401, I001

from memconform.suites.memorizz.checks import consumer
from memconform.suites.memorizz.checks import document
from memconform.suites.memorizz.checks import producer
from memconform.suites.memorizz.checks import reject
from memconform.suites.memorizz.checks import roundtrip
from memconform.suites.memorizz.checks import stateful
from memconform.suites.memorizz.checks import domain_imports
from memconform.suites.memorizz.checks import domain_archive
from memconform.suites.memorizz.checks import domain_params
# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.memorizz.checks import batch_failures
from memconform.suites.memorizz.checks import hostile_input
from memconform.suites.memorizz.suite import SUITE

__all__ = ["SUITE"]
