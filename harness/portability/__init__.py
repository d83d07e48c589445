"""Portability between the five formats: a canonical record, mapping tables as data, one translator per
format, a loss ledger per field, round-trip invariants, and live ports between targets.

`translate.translate(doc, to)` is the one entry point a caller needs; `port.port(a, b)` does the same
through two live implementations.
"""
