"""The memoryai checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.memoryai.checks import (  # noqa: F401  (each module registers its checks)
    consumer,
    document,
    producer,
    profile,
    roundtrip,
    stateful,
)
from memconform.suites.memoryai.suite import SUITE

# `memconform replay FILE --suite memoryai`: a saved bundle is round-tripped again
SUITE.replay = profile.roundtrip_once

__all__ = ["SUITE"]

# last: what can break a target (stored hostile inputs) runs after every other check
from memconform.suites.memoryai.checks import hostile_input  # noqa: E402, F401, I001
