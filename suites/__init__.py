"""Conformance suites, one package per spec. Each registers its checks in `<suite>/checks.py`."""
