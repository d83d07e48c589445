"""The amps checks, registered by topic: checks run in the order they register, which is the order of
the imports below (kept as written: sorting them would reorder the run). The SuiteSpec's checks_module
names this package (suite.py): the first ask for the checks imports it and registers every check, and a
wrong declaration is refused then (core/check.py)."""
# ruff: noqa: F401, I001

from memconform.suites.amps.checks import document
from memconform.suites.amps.checks import imports
from memconform.suites.amps.checks import privacy
from memconform.suites.amps.checks import roundtrip
from memconform.suites.amps.checks import stateful
from memconform.suites.amps.checks import domain_imports
from memconform.suites.amps.checks import domain_envelope
# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.amps.checks import batch_failures
from memconform.suites.amps.checks import hostile_input
from memconform.suites.amps.suite import SUITE

__all__ = ["SUITE"]
