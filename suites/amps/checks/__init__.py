"""The amps checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.amps.checks import document, hostile_input, imports, privacy, roundtrip, stateful  # noqa: F401  (each module registers its checks)
from memconform.suites.amps.suite import SUITE

__all__ = ["SUITE"]
