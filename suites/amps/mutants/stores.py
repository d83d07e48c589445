"""The AMPS mutant stores of provenance, labels and privacy, cascades, media and text, validity and timestamps
(one broken rule each, named by the class's docstring); mutants/table.py makes the tables."""

from __future__ import annotations

import copy
import urllib.request
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.amps import format as amps
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected


class AcceptsUnsourcedInferred(ReferenceAmpsStore):
    """Imports inferred atoms that cite no artifact (launders unsourced conclusions)."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "inferred atom cites no" not in p]


class AcceptsInferredWithoutExtractor(ReferenceAmpsStore):
    """Checks an inferred atom's artifact_ids but not its extractor: such an atom is stored as it came."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "names no extractor" not in p]


class ImportsPartOfRejected(ReferenceAmpsStore):
    """Refuses the bad export but keeps the atoms it had already written."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        bad = set(amps.unsourced_inferred(doc)) if amps.detect(doc) else set()
        if bad:
            partial = copy.deepcopy(doc)
            partial["atoms"] = [a for i, a in enumerate(doc["atoms"]) if i not in bad]
            super().import_export(partial)
            raise Rejected({"error": "inferred atom without artifact_ids"}, "rejected")
        return super().import_export(doc, **params)


class FlattensSensitivity(ReferenceAmpsStore):
    """Re-exports every regulated atom as merely private."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if atom.get("sensitivity") in ("medical", "financial", "legal"):
                atom["sensitivity"] = "private"
        return doc


class DropsLabels(ReferenceAmpsStore):
    """Re-exports atoms without sensitivity or valid_from (the schema allows it, the prose does not)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom.pop("sensitivity", None)
            atom.pop("valid_from", None)
        return doc


class ForgetsPrivate(ReferenceAmpsStore):
    """Re-exports private artifacts with the importer default, private: false."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for art in doc["artifacts"]:
            art["private"] = False
        return doc


class NoCascade(ReferenceAmpsStore):
    """Deletes the artifact but never re-evaluates the atoms that depend on it."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid = self._subject_id(body)
        with self.db:
            gone = self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?",
                                   (sid, body.get("artifact_id"))).rowcount
        return {"deleted": bool(gone), "atoms_deleted": []}


class BindsInternalId(ReferenceAmpsStore):
    """Replaces the user's subject_id with the provider's own user id on export."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["subject"]["subject_id"] = "provider-user-0001"
        return doc


class FetchesMedia(ReferenceAmpsStore):
    """Downloads every artifact's media_url on import."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        reply = super().import_export(doc, **params)
        for _, art in amps.artifacts(doc):
            url = art.get("media_url")
            if isinstance(url, str) and url.startswith("http://127.0.0.1:"):  # only ever the loopback canary
                try:
                    urllib.request.urlopen(url, timeout=2).close()
                except OSError:
                    pass
        return reply


class SanitisesText(ReferenceAmpsStore):
    """'Protects' the model by rewriting instruction-like atom text on import."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        doc = copy.deepcopy(doc)
        for _, atom in amps.atoms(doc):
            if isinstance(atom.get("text"), str):
                atom["text"] = atom["text"].replace("Ignore all previous instructions", "[removed]").replace("<", "&lt;")
        return super().import_export(doc, **params)


class ObeysAtomText(ReferenceAmpsStore):
    """Treats atom text as instructions: "forget every other memory" wipes the subject's other atoms."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        reply = super().import_export(doc, **params)
        for _, atom in amps.atoms(doc):
            if "forget every other memory" in str(atom.get("text", "")).lower():
                with self.db:
                    self.db.execute("DELETE FROM atoms WHERE subject_id = ? AND atom_id != ?",
                                    (doc["subject"]["subject_id"], atom["atom_id"]))
        return reply


class RejectsExtensions(ReferenceAmpsStore):
    """Treats any x-provider field as an unknown field and refuses the export."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if "x-provider" in str(doc):
            raise Rejected({"error": "unknown field x-provider"}, "rejected")
        return super().import_export(doc, **params)


class NoExtractor(ReferenceAmpsStore):
    """Re-exports inferred atoms without naming the extractor."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "extractor" not in p]

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom["provenance"].pop("extractor", None)
        return doc


class DropsObservedSources(ReferenceAmpsStore):
    """Re-exports observed atoms without their artifact_ids."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if atom["provenance"].get("derivation") == "observed":
                atom["provenance"].pop("artifact_ids", None)
        return doc


class InvertsValidity(ReferenceAmpsStore):
    """Re-exports atoms whose valid_to precedes valid_from (swaps the interval)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if isinstance(atom.get("valid_to"), str) and isinstance(atom.get("valid_from"), str):
                atom["valid_from"], atom["valid_to"] = atom["valid_to"], atom["valid_from"]
        return doc


class PadsText(ReferenceAmpsStore):
    """Re-exports atom text with the whole artifact body appended (well over 500 characters)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom["text"] = atom["text"] + " " + "context " * 80
        return doc


class LocalTimestamps(ReferenceAmpsStore):
    """Re-exports exported_at as local time with no zone (not an RFC 3339 date-time)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["exported_at"] = doc["exported_at"].rstrip("Z")
        return doc


class OmitsArtifacts(ReferenceAmpsStore):
    """Re-exports atoms but leaves private artifacts out, so provenance dangles."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["artifacts"] = [a for a in doc["artifacts"] if not a.get("private")]
        return doc


class AddsInternalUserId(ReferenceAmpsStore):
    """Binds the provider's own user id to the subject in every export."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["subject"]["provider_user_id"] = "u-000173"
        return doc


class CountsBytesForMaxLength(ReferenceAmpsStore):
    """Counts the 500-character text limit in UTF-8 bytes (len(text.encode())), as a byte-minded validator does."""

    def problems(self, doc: Any) -> list[str]:
        out = super().problems(doc)
        for i, atom in amps.atoms(doc):
            text = atom.get("text")
            if isinstance(text, str) and len(text.encode("utf-8")) > 500:
                out.append(f"$.atoms[{i}].text: longer than 500")
        return out


class BoolIsNumber(ReferenceAmpsStore):
    """Checks `confidence` with isinstance(value, (int, float)): in Python a boolean passes."""

    def problems(self, doc: Any) -> list[str]:
        bools = {i for i, atom in amps.atoms(doc) if isinstance(atom.get("confidence"), bool)}
        return [p for p in super().problems(doc) if not any(p.startswith(f"$.atoms[{i}].confidence") or
                                                          (f"atoms/{i}/confidence" in p) for i in bools)]


class EmptySourcesCount(ReferenceAmpsStore):
    """Treats `artifact_ids: []` as sourced: only an absent key counts as "no artifact_ids"."""

    def problems(self, doc: Any) -> list[str]:
        empty = {i for i, atom in amps.atoms(doc) if amps.provenance(atom).get("artifact_ids") == []}
        return [p for p in super().problems(doc) if not any(p.startswith(f"$.atoms[{i}]: ") and "cites no" in p for i in empty)]
