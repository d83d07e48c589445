"""Spec sentences that checks of more than one module declare (one copy, so the registration of each stays verbatim)."""

from __future__ import annotations

REJECTS = ("Validation rejects unsupported versions, unknown envelope fields, incorrect taxonomy, missing store "
           "keys, duplicate or inconsistent IDs, incorrect counts, and checksum mismatches.")
