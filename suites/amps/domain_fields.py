"""The AMPS domain table (suites/amps/domain.json) as the checks draw from it: the scalar fields an export
can carry alone, and an export with one of them set to a class's value. No checks here: the class checks
and the state machine both import it."""

from __future__ import annotations

import copy
from typing import Any

from memconform.kit import domain

# the fields whose classes an export can carry alone (ids, link arrays and provenance are drawn by
# checks/domain_envelope.py, which keeps the references they make whole)
PLACES = {"export.atoms[].": "atom", "export.atoms[].provenance.": "provenance", "export.artifacts[].": "artifact",
          "export.subject.": "subject"}
NOT_DRAWN = {"atom_id", "artifact_id", "artifact_ids", "atom_ids", "subject_id", "provenance", "derivation"}


def table() -> domain.Domain:
    return domain.required("amps")


def drawn_fields() -> list[tuple[domain.Field, str, str]]:
    out = []
    for field in table().fields:
        for prefix, place in PLACES.items():
            name = field.id.removeprefix(prefix)
            if field.id.startswith(prefix) and "." not in name and "[" not in name and name not in NOT_DRAWN:
                out.append((field, place, name))
    return out


def with_value(doc: dict[str, Any], place: str, name: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    holder = {"atom": out["atoms"][0], "provenance": out["atoms"][0]["provenance"], "artifact": out["artifacts"][0],
              "subject": out["subject"]}[place]
    if value is domain.ABSENT:
        holder.pop(name, None)
    else:
        holder[name] = copy.deepcopy(value)
    return out
