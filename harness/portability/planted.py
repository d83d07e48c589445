"""Known-broken translators, each with one planted bug, for the negative controls of the round-trip
properties: a property that passes on these is a property that cannot fail."""

from __future__ import annotations

import copy
from typing import Any

from .canonical import Document
from .formats import portable
from .ledger import Ledger
from .translate import Writer


def dna_dropped(target: str) -> Writer:
    """Forgets the DNA flag and the protection fields, and does not tell the ledger."""
    def write(doc: Document, ledger: Ledger) -> Any:
        doc = copy.deepcopy(doc)  # translate hands writers its own records: a bug is planted in a copy
        for r in doc.records:
            r.values.pop("dna", None)
            r.values.pop("protection", None)
        return portable(target).write(doc, ledger)
    return write


def sensitivity_rewritten(target: str) -> Writer:
    """Writes every labelled record as public."""
    def write(doc: Document, ledger: Ledger) -> Any:
        doc = copy.deepcopy(doc)  # translate hands writers its own records: a bug is planted in a copy
        for r in doc.records:
            if r.get("sensitivity") is not None:
                r.values["sensitivity"] = "public"
        return portable(target).write(doc, ledger)
    return write


def ids_collapsed(target: str) -> Writer:
    """Gives every record the first record's ids, so a target that keys by id keeps one of them."""
    def write(doc: Document, ledger: Ledger) -> Any:
        doc = copy.deepcopy(doc)  # translate hands writers its own records: a bug is planted in a copy
        first = next((r for r in doc.records if not r.get("deleted")), None)
        if first is not None:
            key = first.key(doc.source)
            for r in doc.records:
                r.ids = {doc.source: key, **{k: v for k, v in first.ids.items() if k != doc.source}}
        return portable(target).write(doc, ledger)
    return write


PLANTED = {"dna_dropped": dna_dropped, "sensitivity_rewritten": sensitivity_rewritten, "ids_collapsed": ids_collapsed}
