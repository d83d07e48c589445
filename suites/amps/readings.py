"""AMPS's readings of its open points as data: the situation a check meets (`Asked`), the answer's shape, each
reading's prediction. The rows are suites/amps/table.py's TABLE; the checks and the model ask it. The pins are
a function from an option's name to its value: the run's `ctx.option`, or the model's `Readings.option` (the
model imports the table, so neither imports the model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.core.readings import Asked
from memconform.kit import batch_failures
from memconform.suites.amps import format as amps

# the situations (a request's kind)
UNSOURCED = "an atom whose last source was deleted, as exported"  # A5
LABELLED = "the atoms imported with one sensitivity label, as one export holds them"  # A9 (given: the label)
PRIVATE = "a private artifact imported, as exported"  # A9
SECOND_IMPORT = "a second import of one atom for a subject that held another"  # A12
INVERTED = "an atom whose valid_to precedes its valid_from, imported"  # A56
OPEN_VALUE = "a value class the schema is silent on, imported"  # A57 (given: the class key)
MIDDLE = "an export whose middle atom is of an open class, imported"  # A36
UNPINNED = "a problem of an exported document under a reading the profile does not pin"  # A7

DELETED, FLAGGED = "deleted", "re-flagged unsourced"
KEPT_LABEL = "atoms kept with their label"
PRIVATE_WITHHELD, PRIVATE_KEPT = "private artifacts withheld from an export", "private artifacts kept with private: true"
MERGE, REPLACE = "merge", "replace"
INVERTED_ACCEPTED = "an atom that expires before it is valid accepted"
INVERTED_REFUSED = "an atom that expires before it is valid refused"
ZERO_LENGTH = "zero-length interval"


def withheld_label(label: str) -> str:
    return f"{label} atoms withheld from an export"


WITHHOLDABLE = tuple(label for label in amps.SENSITIVITIES if label != "public")  # A9: a filter on the tag


def every_one_withheld(request: Asked, exported: Any) -> bool:
    """A9 withheld by label: not one atom of the label is in the export (answer: each atom's exported label,
    None for one left out), so some of a label missing beside others of it is a loss, not a filter."""
    return isinstance(exported, tuple) and bool(exported) and all(label is None for label in exported)


def every_one_kept(request: Asked, exported: Any) -> bool:
    """A9 kept: every atom of the label is in the export with the label it was imported with."""
    return isinstance(exported, tuple) and bool(exported) and all(label == request.given for label in exported)


def flagged(atom: Any) -> bool:
    """A5's second reading: the atom cites no artifact and carries a truthy x-…unsourced… key."""
    return isinstance(atom, dict) and amps.is_flagged_unsourced(atom) and not amps.has_sources(atom)


Pins = Callable[[str], Any]


def flag_allowed(option: Pins) -> bool:
    return option("unsourced_after_delete") != "delete"


def withholding_allowed(option: Pins) -> bool:
    """A9: an export may leave out every atom of a label other than public, unless withheld_atoms=none."""
    return option("withheld_atoms") != "none"


def batch_reading(name: str) -> Callable[[Asked, batch_failures.BatchResult], bool]:
    """A36: one reading of the batch (harness/kit/batch_failures.py predicts it from what was stored)."""
    return lambda request, outcome: outcome.predictions()[name]


OPEN_BATCH = (batch_failures.ALL, batch_failures.REPORTED, batch_failures.REFUSED)
