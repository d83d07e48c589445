"""Hypothesis strategies: valid AMPS exports (schema + cross-record rules) and targeted invalid ones.

`exports()` draws exports that pass every amps Producer check: schema-valid, inferred/observed atoms
cite artifacts present in the same export, inferred atoms name an extractor, every atom carries
sensitivity and valid_from, valid_to (when a string) is not before valid_from, artifact atom_ids
resolve. `invalid_exports()` draws (check id, export) pairs, each export breaking (at least) the named check.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from hypothesis import strategies as st
from memconform.suites.amps.format import (
    ARTIFACT_KINDS,
    ATOM_KINDS,
    DERIVATIONS,
    EXPORT_VERSION,
    SENSITIVITIES,
    TEXT_MAX,
)

_EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)

# ids and texts: printable, any script, no control characters
_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80)
_ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)


@st.composite
def instants(draw: Any) -> dt.datetime:
    return _EPOCH + dt.timedelta(seconds=draw(st.integers(0, 10 * 365 * 86400)))


def fmt(when: dt.datetime, zone: str = "Z") -> str:
    base = when.strftime("%Y-%m-%dT%H:%M:%S")
    if zone == "Z":
        return base + "Z"
    offset = dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])) * (1 if zone[0] == "+" else -1)
    return (when + offset).strftime("%Y-%m-%dT%H:%M:%S") + zone


date_times = st.builds(fmt, instants(), st.sampled_from(["Z", "+02:00", "-05:30"]))


@st.composite
def exports(draw: Any, max_atoms: int = 6, max_artifacts: int = 4) -> dict[str, Any]:
    n_art = draw(st.integers(1, max_artifacts))
    art_ids = [f"art_{i}_{draw(_ids)}" for i in range(n_art)]
    artifacts: list[dict[str, Any]] = []
    for aid in art_ids:
        art: dict[str, Any] = {"artifact_id": aid, "kind": draw(st.sampled_from(ARTIFACT_KINDS)),
                               "captured_at": draw(date_times), "atom_ids": []}
        if draw(st.booleans()):
            art["title"] = draw(_text)
        if draw(st.booleans()):
            art["body"] = draw(_text)
        if draw(st.booleans()):
            art["media_url"] = f"https://media.example/{aid}"
        if draw(st.booleans()):
            art["private"] = draw(st.booleans())
        artifacts.append(art)
    atoms: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, max_atoms))):
        derivation = draw(st.sampled_from(DERIVATIONS))
        start = draw(instants())
        prov: dict[str, Any] = {"derivation": derivation}
        if derivation != "stated" or draw(st.booleans()):
            prov["artifact_ids"] = draw(st.lists(st.sampled_from(art_ids), min_size=1, max_size=3, unique=True))
        if derivation == "inferred" or draw(st.booleans()):
            prov["extractor"] = draw(st.sampled_from(["gpt-5", "claude-opus-4", "human"]))
        if draw(st.booleans()):
            prov["human_reviewed"] = draw(st.booleans())
        atom: dict[str, Any] = {
            "atom_id": f"atom_{i}_{draw(_ids)}", "kind": draw(st.sampled_from(ATOM_KINDS)),
            "text": draw(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=TEXT_MAX)),
            "sensitivity": draw(st.sampled_from(SENSITIVITIES)),
            "valid_from": fmt(start), "created_at": draw(date_times), "provenance": prov,
        }
        if draw(st.booleans()):
            atom["confidence"] = draw(st.floats(0, 1, allow_nan=False))
        choice = draw(st.sampled_from(["absent", "null", "later"]))
        if choice == "null":
            atom["valid_to"] = None
        elif choice == "later":
            atom["valid_to"] = fmt(start + dt.timedelta(seconds=draw(st.integers(0, 10**8))))
        if draw(st.booleans()):
            atom["x-provider"] = {"score": draw(st.integers(0, 9))}
        for aid in prov.get("artifact_ids", []):
            artifacts[art_ids.index(aid)]["atom_ids"].append(atom["atom_id"])
        atoms.append(atom)
    doc: dict[str, Any] = {
        "export_version": EXPORT_VERSION, "exported_at": draw(date_times),
        "subject": {"subject_id": draw(_text)}, "atoms": atoms, "artifacts": artifacts,
    }
    if draw(st.booleans()):
        doc["source_provider"] = draw(st.sampled_from(["openai", "anthropic", "google", "konshus"]))
    return doc


def _with_atom(doc: dict[str, Any], derivation: str) -> tuple[dict[str, Any], dict[str, Any]]:
    doc = copy.deepcopy(doc)
    art = doc["artifacts"][0]
    atom = {"atom_id": "atom_probe", "kind": "fact", "text": "probe", "sensitivity": "public",
            "valid_from": "2025-01-01T00:00:00Z", "created_at": "2025-01-01T00:00:00Z",
            "provenance": {"derivation": derivation, "artifact_ids": [art["artifact_id"]], "extractor": "human"}}
    art["atom_ids"].append("atom_probe")
    doc["atoms"].append(atom)
    return doc, atom


def _break(name: str, doc: dict[str, Any]) -> dict[str, Any]:
    if name == "amps.schema_valid":
        doc = copy.deepcopy(doc)
        doc["exported_at"] = doc["exported_at"][:19]  # no zone
        return doc
    if name == "amps.inferred_has_sources":
        doc, atom = _with_atom(doc, "inferred")
        del atom["provenance"]["artifact_ids"]
        doc["artifacts"][0]["atom_ids"].remove("atom_probe")
        return doc
    if name == "amps.observed_has_sources":
        doc, atom = _with_atom(doc, "observed")
        del atom["provenance"]["artifact_ids"]
        doc["artifacts"][0]["atom_ids"].remove("atom_probe")
        return doc
    if name == "amps.valid_to_not_before_valid_from":
        doc, atom = _with_atom(doc, "stated")
        atom["valid_to"] = "2024-12-31T23:59:59Z"
        return doc
    if name == "amps.text_at_most_500":
        doc, atom = _with_atom(doc, "stated")
        atom["text"] = "x" * (TEXT_MAX + 1)
        return doc
    if name == "amps.references_resolve":
        doc, atom = _with_atom(doc, "stated")
        atom["provenance"]["artifact_ids"].append("art_missing_from_export")
        return doc
    if name == "amps.atom_labels":
        doc, atom = _with_atom(doc, "stated")
        del atom["sensitivity"]
        return doc
    raise KeyError(name)


BREAKABLE = ("amps.schema_valid", "amps.inferred_has_sources", "amps.observed_has_sources",
             "amps.valid_to_not_before_valid_from", "amps.text_at_most_500", "amps.references_resolve",
             "amps.atom_labels")


@st.composite
def invalid_exports(draw: Any) -> tuple[str, dict[str, Any]]:
    """(check id, export) where the export breaks that check's rule (text_at_most_500 breaks schema_valid too)."""
    name = draw(st.sampled_from(BREAKABLE))
    return name, _break(name, draw(exports()))
