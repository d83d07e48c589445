"""A reader of OMP exports apart from the translator (it must not import it): what a reader of the format sees
in a document, against which every ledger line is judged (harness/portability/ledger_truth.py, with the helpers of witness.py)."""

from __future__ import annotations

from typing import Any

from memconform.portability.witness import Named, Seen, Witness, outside, seen, split_hatch

# canonical name -> native path (a tuple walks objects)
NATIVE = {"text": ("content",), "type": ("type",), "created_at": ("created_at",), "updated_at": ("updated_at",),
          "valid_until": ("expires_at",), "origin_tool": ("source", "tool"), "origin_session": ("source", "session_id"),
          "origin_user": ("source", "user_id"), "observed_at": ("source", "timestamp"), "tags": ("tags",),
          "namespace": ("namespace",), "embedding": ("embedding",)}
MEMORY = {"id", "content", "type", "source", "tags", "namespace", "created_at", "updated_at", "expires_at",
          "metadata", "embedding"}


def records(doc: Any) -> dict[str, Seen]:
    out = Named()
    parts: dict[str, list[tuple[int, str]]] = {}
    for mem in doc.get("memories") or []:
        block, _ = split_hatch(mem.get("metadata"))
        part = block.get("part")
        index = part.get("index") if isinstance(part, dict) else None
        if isinstance(part, dict) and type(index) is int and index > 0:  # a later part (else a memory of its own)
            parts.setdefault(str(part.get("of")), []).append((index, mem.get("content", "")))
            continue
        s = seen(NATIVE, str(mem.get("id")), mem, mem.get("metadata"))
        outside(s, mem, MEMORY)
        out.add(s.native_id, s)
    for key, rest in parts.items():  # a text split over parts is read whole (the part blocks say so)
        if key in out:
            out[key].fields["text"] = out[key].fields.get("text", "") + "".join(t for _, t in sorted(rest))
    return out


WITNESS = Witness(records, native=NATIVE, envelope={"exported_at": ("exported_at",), "producer": ("server",)},
                  spoken_for=frozenset({"omp_version", "exported_at", "server", "memories"}))
