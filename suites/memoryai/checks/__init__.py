"""The memoryai checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.memoryai.checks import (  # noqa: F401  (each module registers its checks)
    consumer,
    document,
    hostile_input,
    producer,
    profile,
    roundtrip,
    stateful,
)
from memconform.suites.memoryai.suite import SUITE

# `memconform replay FILE --suite memoryai`: a saved bundle is round-tripped again
SUITE.replay = profile.roundtrip_once

__all__ = ["SUITE"]
