"""Hostile `python:` implementations of the AMPS operations, one misbehaviour each.

Importable as `hostile.py_impl` with tests/ on the path (the zoo runs memconform from tests/).
"""

from __future__ import annotations

import os

KEY = os.environ.get("MEMCONFORM_CANARY", "")


class EchoKey:
    """Puts the canary everywhere it can: in its reply, its errors and its exceptions."""

    def export(self, body, **params):
        return {"subject": {"subject_id": KEY}, "atoms": [{"text": f"Bearer {KEY}"}], "artifacts": [], "key": KEY}

    def import_export(self, body, **params):
        raise RuntimeError(f"refusing with key {KEY} (Authorization: Bearer {KEY})")


class NotJson:
    def export(self, body, **params):
        return {"when": object()}

    import_export = export


class DeepAndOdd:
    """Replies nested 100,000 deep, with NaN and lone surrogates."""

    def export(self, body, **params):
        value: list = []
        for _ in range(100_000):
            value = [value]
        return value

    def import_export(self, body, **params):
        return {"imported": float("nan"), "note": "\ud800\udfff\ud800", "big": 10**5000 if False else 2**20000}


class Exits:
    def export(self, body, **params):
        raise SystemExit(0)

    import_export = export
