"""Interop holes (interop_holes.json): where a suite accepts a producer behaviour and the spec text lets a
consumer refuse it (or the reverse), two conformant implementations fail to exchange data. Each pair is
listed in the suite's errata and in the matrix's editor queue as needing an erratum of the spec.

The table is written by scripts/interop_holes.py from the sweep (interop_sweep.py) and the review of its
candidates (interop_review.json), and checked against HOLE_SCHEMA when it is loaded (a broken table is a harness
error, never an empty list); tests/test_matrix_interop.py holds the file to the sweep and each hole's two sides to
what the suite's checks do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..core.results import HarnessError

_SIDE = {"type": "object", "additionalProperties": False, "required": ["behaviour", "verdict", "checks", "domain_classes"],
         "properties": {"behaviour": {"type": "string", "minLength": 1},
                        # memconform's verdict on the side's behaviour; "required": a consumer must behave so; "not
                        # judged": no producer check reads the field (the hole then rests on the spec text alone)
                        "verdict": {"enum": ["accepted", "refused", "required", "not judged"]},
                        "checks": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": r"^[a-z0-9_]+\.[a-z0-9_]+$"}},
                        "domain_classes": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": r"^[a-z0-9_.\[\]]+:[a-z0-9_]+$"}}}}
HOLE_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["about", "swept", "holes"],
    "properties": {"about": {"type": "string"}, "swept": {"type": "object"}, "holes": {"type": "array", "items": {
        "type": "object", "additionalProperties": False,
        "required": ["id", "suite", "erratum", "title", "kind", "sentences", "producer", "consumer"],
        "properties": {"id": {"type": "string", "pattern": "^IH[0-9]+$"}, "suite": {"type": "string", "pattern": "^[a-z]+$"},
                       "erratum": {"type": "string", "pattern": "^[A-Z][A-Z0-9]*[0-9]+$"}, "title": {"type": "string"},
                       "kind": {"enum": ["consumer_may_refuse", "consumer_must_refuse", "consumer_held_to_a_reading"]},
                       "sentences": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                       "readings": {"type": "array", "items": {"type": "string"}},
                       "producer": _SIDE, "consumer": _SIDE}}}}}


@dataclass(frozen=True)
class Hole:
    id: str
    suite: str
    erratum: str
    title: str
    kind: str
    sentences: tuple[str, ...]
    producer: dict[str, Any]
    consumer: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        from .errata import entry

        return {"id": self.id, "suite": self.suite, "title": self.title, "kind": self.kind, "sentences": list(self.sentences),
                "producer": self.producer, "consumer": self.consumer, "erratum": entry(self.suite, self.erratum),
                "needs_erratum": True}


def holes_from(data: Any) -> list[Hole]:
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(HOLE_SCHEMA).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(top)"
        raise HarnessError(f"interop_holes.json: {where}: {errors[0].message}")
    out = [Hole(h["id"], h["suite"], h["erratum"], h["title"], h["kind"], tuple(h["sentences"]), h["producer"], h["consumer"])
           for h in data["holes"]]
    ids = [h.id for h in out]
    if len(set(ids)) != len(ids):
        raise HarnessError(f"interop_holes.json: an id appears twice: {sorted(ids)}")
    for h in out:
        if {h.producer["verdict"], h.consumer["verdict"]} == {"refused"}:
            raise HarnessError(f"interop_holes.json: {h.id}: both sides refused is no hole (nothing conformant disagrees)")
    return out


@lru_cache(maxsize=1)
def holes() -> tuple[Hole, ...]:
    text = resources.files("memconform").joinpath("matrix/interop_holes.json").read_text("utf-8")
    return tuple(holes_from(json.loads(text)))
