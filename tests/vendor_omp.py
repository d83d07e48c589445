"""The vendor's server of issue 34 as a target: OMP served from the spec (the reference's Starlette app on
loopback) with two mistakes, FastAPI's `{"detail": ...}` errors instead of the §4 envelope and a tags
filter with OR logic (`python:vendor_omp:vendor_server`)."""

from __future__ import annotations

from memconform.suites.omp.mutants import TagsOr, WrongErrorEnvelope
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target


class VendorApi(WrongErrorEnvelope, TagsOr):
    """§4 errors as {"detail": ...}; §3.3 list: tags matched with ANY, not ALL."""


def vendor_server() -> ServedTarget:
    return serve_target(ServerSpec(api_class=VendorApi), label="vendor:omp")
