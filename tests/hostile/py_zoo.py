"""Hostile in-process implementations (python:hostile.py_zoo:NAME)."""

from __future__ import annotations

import threading


class NeverReturns:
    """Every call blocks forever: a Python thread cannot be stopped, only abandoned."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda body=None, **params: threading.Event().wait()


class HugeReply:
    """A reply of about 1 GB once serialized, built from one shared string (a few MB in memory):
    serializing it first would cost gigabytes; the cap refuses it before."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        chunk = "x" * 10_000
        return lambda body=None, **params: {"chunks": [{"content": chunk}] * 100_000}
