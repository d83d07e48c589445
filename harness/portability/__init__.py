"""Portability between the formats the suites declare (formats.py): a canonical record, a loss ledger per
field, round-trip invariants, and live ports between targets; each suite's package holds its mapping table
and translator (suites/<spec>/portability/).

`translate.translate(doc, to)` is the one entry point a caller needs; `port.port(a, b)` does the same
through two live implementations.
"""
