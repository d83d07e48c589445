"""Known-broken AMPS stores only the domain table's data reveals: a value class or a pair of optional
fields no example of the other checks carries."""

from __future__ import annotations

from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.amps import format as amps
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected

REGULATED = ("medical", "financial", "legal")


class FoldsIdCase(ReferenceAmpsStore):
    """Keys atoms by a case-insensitive collation: of two atoms whose ids differ only in case, the second
    is dropped without a word (a MySQL-style `utf8mb4_general_ci` primary key)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if amps.detect(doc) and not self.problems(doc):
            seen: set[str] = set()
            kept = []
            for atom in doc["atoms"]:
                key = str(atom.get("atom_id")).casefold()
                if key not in seen:
                    seen.add(key)
                    kept.append(atom)
            doc = {**doc, "atoms": kept}
        return super().import_export(doc, **params)


class RegulatedDropsConfidence(ReferenceAmpsStore):
    """Stores no confidence for an atom of a regulated category (medical, financial, legal): a score on a
    health fact is "inference" the provider chose not to keep; every other atom keeps it."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if atom.get("sensitivity") in REGULATED:
                atom.pop("confidence", None)
        return doc


class StoresBeforeCheckingExportedAt(ReferenceAmpsStore):
    """Writes the atoms and artifacts first and checks the envelope's `exported_at` last (a database
    constraint on the import log): an export with a bad `exported_at` is refused after its records are
    stored. Every other field is checked before anything is written."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "exported_at" not in p.split(":", 1)[0]]

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        reply = super().import_export(doc, **params)
        if ReferenceAmpsStore.problems(self, doc):
            raise Rejected({"error": "invalid exported_at"}, "invalid export")
        return reply


class ReviewNeedsConfidence(ReferenceAmpsStore):
    """Keeps `human_reviewed: true` only on an atom that carries a confidence (a review is stored with its
    score): an atom reviewed but unscored comes back without the flag. Only the pair (confidence absent,
    human_reviewed true) shows it, which ci's covering subset does not hold and default's pairs do."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if "confidence" not in atom and isinstance(atom.get("provenance"), dict):
                atom["provenance"].pop("human_reviewed", None)
        return doc


# pair-only mutants: (store, the check that catches it under --profile default, words of its failure title);
# not in MUTANTS, whose kills are shown under ci
PAIR_ONLY: dict[str, tuple[type[ReferenceAmpsStore], str, str]] = {
    "ReviewNeedsConfidence": (ReviewNeedsConfidence, "amps.imports_optional_fields_pairwise", "not exported back as written"),
}
