"""The amps checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.amps.checks import document, imports, privacy, roundtrip, stateful  # noqa: F401  (each module registers its checks)
from memconform.suites.amps.suite import SUITE

__all__ = ["SUITE"]

# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.amps.checks import hostile_input  # noqa: E402, F401, I001
