"""Signed evidence of a run: `certify`, `verify`, `keygen` (certify.py) over an in-toto Statement in a DSSE envelope (attest.py)."""
