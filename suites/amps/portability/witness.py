"""A reader of AMPS exports apart from the translator (it must not import it): what a reader of the format sees
in a document, against which every ledger line is judged (harness/portability/ledger_truth.py, with the helpers of witness.py)."""

from __future__ import annotations

from typing import Any

from memconform.portability.witness import Named, Seen, Witness, outside, seen

# canonical name -> native path (a tuple walks objects)
NATIVE = {"text": ("text",), "type": ("kind",), "created_at": ("created_at",), "valid_from": ("valid_from",),
          "valid_until": ("valid_to",), "sensitivity": ("sensitivity",), "confidence": ("confidence",),
          "provenance": ("provenance",)}
ATOM = {"atom_id", "text", "kind", "created_at", "valid_from", "valid_to", "sensitivity", "confidence",
        "provenance", "x-provider"}


def records(doc: Any) -> dict[str, Seen]:
    out = Named()
    for atom in doc.get("atoms") or []:
        s = seen(NATIVE, str(atom.get("atom_id")), atom, atom.get("x-provider"))
        outside(s, atom, ATOM)
        out.add(s.native_id, s)
    return out


WITNESS = Witness(
    records, native=NATIVE, envelope={"exported_at": ("exported_at",), "producer": ("source_provider",), "subject": ("subject",)},
    spoken_for=frozenset({"export_version", "exported_at", "source_provider", "subject", "atoms", "artifacts"}))
