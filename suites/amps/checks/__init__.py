"""The amps checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.amps.checks import (  # noqa: F401  (each module registers its checks)
    document,
    domain_imports,
    hostile_input,
    imports,
    privacy,
    roundtrip,
    stateful,
)
from memconform.suites.amps.suite import SUITE

__all__ = ["SUITE"]
