"""The omp checks, registered by topic in run order; the entry point names SUITE here, so loading the
suite registers every check (and a wrong declaration is refused then, core/check.py)."""

from memconform.suites.omp.checks import (  # noqa: F401  (each module registers its checks)
    auth,
    bad_input,
    concurrency,
    crud,
    domain_params,
    domain_writes,
    fuzz,
    hostile_input,
    import_paths,
    imports,
    listing,
    search,
    search_full,
    security_ai,
    shape,
    sort,
    stateful,
)
from memconform.suites.omp.suite import SUITE

__all__ = ["SUITE"]
